import Foundation
package import TernCore

extension AttributeValue {
    /// The value as Core Data's SQLite store keeps it: dates as seconds since 2001, UUIDs as 16
    /// bytes, Booleans as 0/1, decimals as reals (not-a-number as the text `NaN`, as Core Data
    /// writes `NSDecimalNumber.notANumber`), URIs as their absolute string.
    ///
    /// - Parameter type: The attribute's type.
    /// - Returns: The column value, or nil when the value does not fit the type.
    package func databaseValue(for type: AttributeType) -> DatabaseValue? {
        switch (self, type) {
        case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64):
            return .integer(number)
        case (.bool(let flag), .boolean): return .integer(flag ? 1 : 0)
        case (.double(let number), .double), (.double(let number), .float): return .real(number)
        case (.decimal(let number), .decimal) where number.isNaN:
            return .text(Self.decimalNotANumberText)
        case (.decimal(let number), .decimal):
            // Parsing the exact decimal text rounds correctly, so a real read as a decimal writes
            // back as the same real (NSDecimalNumber.doubleValue can miss by one unit in the last place).
            return .real(Double(number.description) ?? NSDecimalNumber(decimal: number).doubleValue)
        case (.string(let text), .string): return .text(text)
        case (.date(let date), .date): return .real(date.timeIntervalSinceReferenceDate)
        case (.data(let bytes), .binary), (.data(let bytes), .transformable): return .blob(bytes)
        case (.uuid(let uuid), .uuid): return .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) })
        case (.uri(let url), .uri): return .text(url.absoluteString)
        default: return nil
        }
    }

    /// The text Core Data stores for a decimal that is not a number.
    package static let decimalNotANumberText = "NaN"

    /// Reads a column value stored by Core Data for an attribute type.
    ///
    /// - Parameters:
    ///   - value: The column value; NULL gives nil.
    ///   - type: The attribute's type.
    /// - Returns: The attribute value, or nil for NULL.
    /// - Throws: ``TernError`` with code `invalidValue` when the column holds something the
    ///   type cannot read (the message never shows the value).
    package init?(databaseValue value: DatabaseValue, type: AttributeType) throws(TernError) {
        if value.isNull { return nil }
        let converted: AttributeValue?
        switch type {
        case .integer16, .integer32, .integer64: converted = value.int64.map { .integer($0) }
        case .boolean: converted = value.int64.map { .bool($0 != 0) }
        case .double, .float: converted = value.double.map { .double($0) }
        // Through the shortest text of the double, so that 10.11 reads back as 10.11. Core Data
        // writes NSDecimalNumber.notANumber as the text NaN.
        case .decimal:
            if let text = value.string, text.caseInsensitiveCompare(Self.decimalNotANumberText) == .orderedSame {
                converted = .decimal(.nan)
            } else {
                converted = value.double.flatMap { Decimal(string: String($0)) }.map { .decimal($0) }
            }
        case .string: converted = value.string.map { .string($0) }
        case .date: converted = value.double.map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary, .transformable: converted = value.data.map { .data($0) }
        case .uuid:
            converted = value.data.flatMap { bytes in
                guard bytes.count == 16 else { return nil }
                let b = [UInt8](bytes)
                return .uuid(
                    UUID(
                        uuid: (
                            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                            b[14], b[15]
                        )))
            }
        case .uri: converted = value.string.flatMap { URL(string: $0) }.map { .uri($0) }
        default: converted = nil
        }
        guard let converted else {
            throw TernError(.invalidValue, "A column holds a value that a \(type.xcodeName) attribute cannot read.")
        }
        self = converted
    }
}
