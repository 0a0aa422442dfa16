import Foundation
package import TernCore

extension PropertyListValue {
    /// Converts a decoded binary property list value; nil for a value metadata cannot hold
    /// (null or a UID, which only keyed archives use).
    ///
    /// - Complexity: O(*n*) in the size of the value.
    package init?(_ value: BinaryPropertyList.Value) {
        switch value {
        case .null, .uid: return nil
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .integer(number)
        case .real(let number): self = .real(number)
        case .date(let seconds): self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .data(let bytes): self = .data(bytes)
        case .string(let text): self = .string(text)
        case .array(let elements):
            var values: [PropertyListValue] = []
            for element in elements {
                guard let converted = PropertyListValue(element) else { return nil }
                values.append(converted)
            }
            self = .array(values)
        case .dictionary(let dictionary):
            var values: [String: PropertyListValue] = [:]
            for (key, element) in dictionary {
                guard let converted = PropertyListValue(element) else { return nil }
                values[key] = converted
            }
            self = .dictionary(values)
        }
    }

    /// The value as a binary property list value.
    ///
    /// - Complexity: O(*n*) in the size of the value.
    package var binaryPropertyListValue: BinaryPropertyList.Value {
        switch self {
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .real(let number): .real(number)
        case .date(let date): .date(date.timeIntervalSinceReferenceDate)
        case .data(let bytes): .data(bytes)
        case .string(let text): .string(text)
        case .array(let elements): .array(elements.map(\.binaryPropertyListValue))
        case .dictionary(let dictionary): .dictionary(dictionary.mapValues(\.binaryPropertyListValue))
        }
    }
}
