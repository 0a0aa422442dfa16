public import Foundation

/// A Swift type that an attribute value converts to and from, for typed property access.
///
/// ```swift
/// final class Recipe: ManagedObject {
///     var title: String? {
///         get { self["title"] }
///         set { self["title"] = newValue }
///     }
/// }
/// ```
public protocol AttributeValueConvertible {
    /// The value as an attribute value.
    var attributeValue: AttributeValue { get }
    /// Reads a value, or fails when the attribute value is of another kind.
    ///
    /// - Parameter attributeValue: An attribute value.
    init?(attributeValue: AttributeValue)
}

extension String: AttributeValueConvertible {
    /// `.string(self)`.
    public var attributeValue: AttributeValue { .string(self) }
    /// Reads a `.string`.
    public init?(attributeValue: AttributeValue) {
        guard case .string(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Int64: AttributeValueConvertible {
    /// `.integer(self)`.
    public var attributeValue: AttributeValue { .integer(self) }
    /// Reads an `.integer`.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Int: AttributeValueConvertible {
    /// `.integer(self)`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// Reads an `.integer` that fits.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let value) = attributeValue, let fitting = Int(exactly: value) else { return nil }
        self = fitting
    }
}

extension Int32: AttributeValueConvertible {
    /// `.integer(self)`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// Reads an `.integer` that fits.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let value) = attributeValue, let fitting = Int32(exactly: value) else { return nil }
        self = fitting
    }
}

extension Int16: AttributeValueConvertible {
    /// `.integer(self)`.
    public var attributeValue: AttributeValue { .integer(Int64(self)) }
    /// Reads an `.integer` that fits.
    public init?(attributeValue: AttributeValue) {
        guard case .integer(let value) = attributeValue, let fitting = Int16(exactly: value) else { return nil }
        self = fitting
    }
}

extension Double: AttributeValueConvertible {
    /// `.double(self)`.
    public var attributeValue: AttributeValue { .double(self) }
    /// Reads a `.double`.
    public init?(attributeValue: AttributeValue) {
        guard case .double(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Float: AttributeValueConvertible {
    /// `.double(Double(self))`.
    public var attributeValue: AttributeValue { .double(Double(self)) }
    /// Reads a `.double`.
    public init?(attributeValue: AttributeValue) {
        guard case .double(let value) = attributeValue else { return nil }
        self = Float(value)
    }
}

extension Bool: AttributeValueConvertible {
    /// `.bool(self)`.
    public var attributeValue: AttributeValue { .bool(self) }
    /// Reads a `.bool`.
    public init?(attributeValue: AttributeValue) {
        guard case .bool(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Decimal: AttributeValueConvertible {
    /// `.decimal(self)`.
    public var attributeValue: AttributeValue { .decimal(self) }
    /// Reads a `.decimal`.
    public init?(attributeValue: AttributeValue) {
        guard case .decimal(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Date: AttributeValueConvertible {
    /// `.date(self)`.
    public var attributeValue: AttributeValue { .date(self) }
    /// Reads a `.date`.
    public init?(attributeValue: AttributeValue) {
        guard case .date(let value) = attributeValue else { return nil }
        self = value
    }
}

extension Data: AttributeValueConvertible {
    /// `.data(self)`.
    public var attributeValue: AttributeValue { .data(self) }
    /// Reads a `.data`.
    public init?(attributeValue: AttributeValue) {
        guard case .data(let value) = attributeValue else { return nil }
        self = value
    }
}

extension UUID: AttributeValueConvertible {
    /// `.uuid(self)`.
    public var attributeValue: AttributeValue { .uuid(self) }
    /// Reads a `.uuid`.
    public init?(attributeValue: AttributeValue) {
        guard case .uuid(let value) = attributeValue else { return nil }
        self = value
    }
}

extension URL: AttributeValueConvertible {
    /// `.uri(self)`.
    public var attributeValue: AttributeValue { .uri(self) }
    /// Reads a `.uri`.
    public init?(attributeValue: AttributeValue) {
        guard case .uri(let value) = attributeValue else { return nil }
        self = value
    }
}
