import Foundation
import TernCore

extension BinaryPropertyList {
    // MARK: - Writing

    /// Encodes a value as a binary property list (`bplist00`).
    ///
    /// Dictionary keys are written sorted, so equal values give equal bytes.
    ///
    /// - Parameter value: The top object.
    /// - Returns: The bytes.
    /// - Complexity: O(*n*) in the size of the value.
    static func encode(_ value: PropertyListValue) -> Data {
        var writer = Writer()
        let top = writer.add(value)
        return writer.finish(top: top)
    }

    /// Flattens values into the object table and writes them.
    private struct Writer {
        /// Each object's bytes, with placeholders for references resolved at the end.
        var objects: [Object] = []

        enum Object {
            case leaf([UInt8])
            case container(marker: UInt8, count: Int, references: [Int])
        }

        mutating func add(_ value: PropertyListValue) -> Int {
            let index = objects.count
            switch value {
            case .bool(let flag):
                objects.append(.leaf([flag ? 0x09 : 0x08]))
            case .integer(let integer):
                objects.append(.leaf(Self.integerBytes(integer)))
            case .real(let real):
                objects.append(.leaf([0x23] + Self.bigEndian(real.bitPattern, size: 8)))
            case .date(let date):
                objects.append(.leaf([0x33] + Self.bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8)))
            case .data(let data):
                objects.append(.leaf(Self.header(0x40, count: data.count) + [UInt8](data)))
            case .string(let string):
                if string.utf8.allSatisfy({ $0 < 0x80 }) {
                    objects.append(.leaf(Self.header(0x50, count: string.utf8.count) + Array(string.utf8)))
                } else {
                    let units = Array(string.utf16)
                    let bytes = units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                    objects.append(.leaf(Self.header(0x60, count: units.count) + bytes))
                }
            case .array(let elements):
                objects.append(.container(marker: 0xA0, count: elements.count, references: []))
                let references = elements.map { add($0) }
                objects[index] = .container(marker: 0xA0, count: elements.count, references: references)
            case .dictionary(let dictionary):
                objects.append(.container(marker: 0xD0, count: dictionary.count, references: []))
                let keys = dictionary.keys.sorted()
                let keyReferences = keys.map { add(.string($0)) }
                let valueReferences = keys.map { add(dictionary[$0] ?? .bool(false)) }
                objects[index] = .container(
                    marker: 0xD0, count: dictionary.count, references: keyReferences + valueReferences)
            }
            return index
        }

        func finish(top: Int) -> Data {
            let referenceSize = Self.byteCount(for: UInt64(objects.count))
            var output: [UInt8] = Array("bplist00".utf8)
            var offsets: [Int] = []
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(output.count)
                switch object {
                case .leaf(let bytes):
                    output += bytes
                case .container(let marker, let count, let references):
                    output += Self.header(marker, count: count)
                    for reference in references { output += Self.bigEndian(UInt64(reference), size: referenceSize) }
                }
            }
            let tableOffset = output.count
            let offsetSize = Self.byteCount(for: UInt64(tableOffset))
            for offset in offsets { output += Self.bigEndian(UInt64(offset), size: offsetSize) }
            output += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            output += Self.bigEndian(UInt64(objects.count), size: 8)
            output += Self.bigEndian(UInt64(top), size: 8)
            output += Self.bigEndian(UInt64(tableOffset), size: 8)
            return Data(output)
        }

        static func byteCount(for value: UInt64) -> Int {
            value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
        }

        static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
            (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
        }

        static func integerBytes(_ value: Int64) -> [UInt8] {
            // Sizes 1, 2 and 4 are unsigned; negative values take 8 bytes.
            guard value >= 0 else { return [0x13] + bigEndian(UInt64(bitPattern: value), size: 8) }
            let size = byteCount(for: UInt64(value))
            let exponent: UInt8 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3
            return [0x10 | exponent] + bigEndian(UInt64(value), size: size)
        }

        static func header(_ marker: UInt8, count: Int) -> [UInt8] {
            count < 15 ? [marker | UInt8(count)] : [marker | 0x0F] + integerBytes(Int64(count))
        }
    }
}
