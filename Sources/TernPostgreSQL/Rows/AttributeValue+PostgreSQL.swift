import Foundation
import TernCore
import TernRelational

extension AttributeValue {
    /// The value as the PostgreSQL store keeps it: integers and Booleans as `bigint`, dates as
    /// seconds since 2001 in `double precision` (as Core Data), decimals as `numeric` text, UUIDs
    /// and URIs as text (the server parses the `uuid`).
    ///
    /// - Parameter type: The attribute's type.
    /// - Returns: The bound value, or nil when the value does not fit the type or is a string
    ///   holding a NUL character, which PostgreSQL's text cannot hold.
    func postgreSQLValue(for type: AttributeType) -> DatabaseValue? {
        switch (self, type) {
        case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64):
            return .integer(number)
        case (.bool(let flag), .boolean): return .integer(flag ? 1 : 0)
        case (.double(let number), .double), (.double(let number), .float): return .real(number)
        case (.decimal(let number), .decimal): return number.isNaN ? nil : .text(number.description)
        case (.string(let text), .string): return text.utf8.contains(0) ? nil : .text(text)
        case (.date(let date), .date): return .real(date.timeIntervalSinceReferenceDate)
        case (.data(let bytes), .binary), (.data(let bytes), .transformable): return .blob(bytes)
        case (.uuid(let uuid), .uuid): return .text(uuid.uuidString)
        case (.uri(let url), .uri): return url.absoluteString.utf8.contains(0) ? nil : .text(url.absoluteString)
        default: return nil
        }
    }

    /// Reads a value of the PostgreSQL store for an attribute type.
    ///
    /// - Parameters:
    ///   - value: The column value; NULL gives nil.
    ///   - type: The attribute's type.
    /// - Returns: The attribute value, or nil for NULL.
    /// - Throws: ``/TernCore/TernError`` with code `invalidValue` when the column holds something the
    ///   type cannot read (the message never shows the value).
    init?(postgreSQLValue value: DatabaseValue, type: AttributeType) throws(TernError) {
        if value.isNull { return nil }
        let converted: AttributeValue?
        switch type {
        case .integer16, .integer32, .integer64: converted = value.int64.map { .integer($0) }
        case .boolean: converted = value.int64.map { .bool($0 != 0) }
        case .double, .float: converted = value.double.map { .double($0) }
        case .decimal:
            converted = (value.string.flatMap { Decimal(string: $0) } ?? value.double.map { Decimal($0) }).map {
                .decimal($0)
            }
        case .string: converted = value.string.map { .string($0) }
        case .date: converted = value.double.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary, .transformable: converted = value.data.map { .data($0) }
        case .uuid: converted = value.string.flatMap(UUID.init(uuidString:)).map { .uuid($0) }
        case .uri: converted = value.string.flatMap { URL(string: $0) }.map { .uri($0) }
        default: converted = nil
        }
        guard let converted else {
            throw TernError(
                .invalidValue, "A column holds a value that a \(type.xcodeName) attribute cannot read.")
        }
        self = converted
    }
}
