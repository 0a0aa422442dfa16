public import Foundation

/// A non-nil value of an attribute.
///
/// Each case matches one family of ``AttributeType``: integers of every width are
/// ``integer(_:)``, `Float` and `Double` are ``double(_:)``, binary and transformable data
/// are ``data(_:)``. A missing value is `nil` of `AttributeValue?`.
///
/// ```swift
/// let servings: AttributeValue = .integer(4)
/// let added: AttributeValue = .date(Date(timeIntervalSinceReferenceDate: 0))
/// ```
public enum AttributeValue: Sendable, Hashable {
    /// An integer (Integer 16, 32 and 64).
    case integer(Int64)
    /// A floating-point number (Double and Float).
    case double(Double)
    /// A decimal number.
    case decimal(Decimal)
    /// A string (String).
    case string(String)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes (Binary and Transformable).
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URI.
    case uri(URL)

    /// Whether this value's case is the one that attributes of `type` hold.
    ///
    /// - Parameter type: An attribute type.
    /// - Returns: `true` when the value can be stored in an attribute of that type as is.
    public func fits(_ type: AttributeType) -> Bool {
        switch (self, type) {
        case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): true
        case (.double, .double), (.double, .float), (.decimal, .decimal): true
        case (.string, .string), (.bool, .boolean), (.date, .date): true
        case (.data, .binary), (.data, .transformable), (.uuid, .uuid), (.uri, .uri): true
        case (_, .undefined): true
        default: false
        }
    }
}
