/// The type of an attribute, with the numeric codes Core Data uses (`NSAttributeType`).
///
/// The raw value is the code that enters version hashes and Core Data's archives, so it must
/// never change.
///
/// ```swift
/// let type = AttributeType(xcodeName: "Integer 64")   // .integer64
/// type?.rawValue                                       // 300
/// ```
public enum AttributeType: Int32, Sendable, Hashable, CaseIterable {
    /// No type: only valid for transient attributes.
    case undefined = 0
    /// A 16-bit signed integer.
    case integer16 = 100
    /// A 32-bit signed integer.
    case integer32 = 200
    /// A 64-bit signed integer.
    case integer64 = 300
    /// A decimal number (stored by Core Data's SQLite store as a real).
    case decimal = 400
    /// A double-precision floating-point number.
    case double = 500
    /// A single-precision floating-point number.
    case float = 600
    /// A string.
    case string = 700
    /// A Boolean.
    case boolean = 800
    /// A date, stored as seconds since 2001-01-01 00:00:00 UTC.
    case date = 900
    /// Raw bytes, optionally stored outside the store file.
    case binary = 1000
    /// A UUID, stored as 16 bytes.
    case uuid = 1100
    /// A URI, stored as its absolute string.
    case uri = 1200
    /// A value converted to bytes by a named value transformer.
    case transformable = 1800
    /// A managed object ID.
    case objectID = 2000
    /// A composite attribute (iOS 17).
    case composite = 2100

    /// Creates a type from the `attributeType` spelling of Xcode's model files.
    ///
    /// - Parameter xcodeName: `"Integer 16"`, `"String"`, `"Transformable"` and so on. Xcode
    ///   writes no `attributeType` for undefined attributes; pass `"Undefined"` for those.
    public init?(xcodeName: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = match
    }

    /// The `attributeType` spelling in Xcode's model files.
    public var xcodeName: String {
        switch self {
        case .undefined: "Undefined"
        case .integer16: "Integer 16"
        case .integer32: "Integer 32"
        case .integer64: "Integer 64"
        case .decimal: "Decimal"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .boolean: "Boolean"
        case .date: "Date"
        case .binary: "Binary"
        case .uuid: "UUID"
        case .uri: "URI"
        case .transformable: "Transformable"
        case .objectID: "ObjectID"
        case .composite: "Composite"
        }
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool {
        self == .integer16 || self == .integer32 || self == .integer64
    }

    /// Whether values of this type are numbers (integers, floating point or decimal).
    public var isNumeric: Bool {
        isInteger || self == .decimal || self == .double || self == .float
    }
}
