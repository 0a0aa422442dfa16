package import Foundation

extension BinaryPropertyList {
    /// Writes a value as a binary property list (`bplist00`).
    ///
    /// Equal strings, numbers and other scalars are written once and shared; dictionary keys are
    /// written in sorted order, so the output is deterministic.
    ///
    /// - Parameter value: The top object.
    /// - Returns: The property list bytes, readable by ``decode(_:limits:)`` and by Apple's
    ///   `PropertyListSerialization`.
    /// - Complexity: O(*n*) in the number of values.
    package static func encode(_ value: Value) -> Data {
        var writer = Writer()
        let top = writer.add(value)
        return writer.serialize(top: top)
    }
}

extension BinaryPropertyList {
    /// Flattens a value tree into numbered objects, then writes them with the offset table.
    struct Writer {
        enum Object {
            case scalar(Value)
            case array([Int])
            case dictionary(keys: [Int], values: [Int])
        }

        var objects: [Object] = []
        var shared: [Value: Int] = [:]

        mutating func add(_ value: Value) -> Int {
            switch value {
            case .array(let elements):
                let index = reserve()
                objects[index] = .array(elements.map { add($0) })
                return index
            case .dictionary(let dictionary):
                let index = reserve()
                let sorted = dictionary.sorted { $0.key < $1.key }
                let keys = sorted.map { add(.string($0.key)) }
                let values = sorted.map { add($0.value) }
                objects[index] = .dictionary(keys: keys, values: values)
                return index
            default:
                if let index = shared[value] { return index }
                let index = reserve()
                objects[index] = .scalar(value)
                shared[value] = index
                return index
            }
        }

        func serialize(top: Int) -> Data {
            let referenceSize = Self.byteCount(for: UInt64(objects.count))
            var body = [UInt8]("bplist00".utf8)
            var offsets = [UInt64]()
            offsets.reserveCapacity(objects.count)
            for object in objects {
                offsets.append(UInt64(body.count))
                write(object, referenceSize: referenceSize, into: &body)
            }
            let tableOffset = UInt64(body.count)
            let offsetSize = Self.byteCount(for: tableOffset)
            for offset in offsets {
                Self.appendBigEndian(offset, size: offsetSize, to: &body)
            }
            body += [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)]
            Self.appendBigEndian(UInt64(objects.count), size: 8, to: &body)
            Self.appendBigEndian(UInt64(top), size: 8, to: &body)
            Self.appendBigEndian(tableOffset, size: 8, to: &body)
            return Data(body)
        }

        // MARK: Non public

        private mutating func reserve() -> Int {
            objects.append(.scalar(.null))
            return objects.count - 1
        }

        private func write(_ object: Object, referenceSize: Int, into bytes: inout [UInt8]) {
            switch object {
            case .array(let elements):
                Self.appendHeader(0xA, count: elements.count, to: &bytes)
                for element in elements { Self.appendBigEndian(UInt64(element), size: referenceSize, to: &bytes) }
            case .dictionary(let keys, let values):
                Self.appendHeader(0xD, count: keys.count, to: &bytes)
                for reference in keys + values {
                    Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes)
                }
            case .scalar(let value):
                Self.appendScalar(value, to: &bytes)
            }
        }

        private static func appendScalar(_ value: Value, to bytes: inout [UInt8]) {
            switch value {
            case .null: bytes.append(0x00)
            case .bool(let flag): bytes.append(flag ? 0x09 : 0x08)
            case .integer(let number): appendInteger(number, to: &bytes)
            case .real(let number):
                bytes.append(0x23)
                appendBigEndian(number.bitPattern, size: 8, to: &bytes)
            case .date(let seconds):
                bytes.append(0x33)
                appendBigEndian(seconds.bitPattern, size: 8, to: &bytes)
            case .data(let data):
                appendHeader(0x4, count: data.count, to: &bytes)
                bytes += data
            case .string(let text):
                if text.utf8.allSatisfy({ $0 < 0x80 }) {
                    appendHeader(0x5, count: text.utf8.count, to: &bytes)
                    bytes += text.utf8
                } else {
                    let units = Array(text.utf16)
                    appendHeader(0x6, count: units.count, to: &bytes)
                    for unit in units { appendBigEndian(UInt64(unit), size: 2, to: &bytes) }
                }
            case .uid(let uid):
                let size = byteCount(for: uid)
                bytes.append(0x80 | UInt8(size - 1))
                appendBigEndian(uid, size: size, to: &bytes)
            case .array, .dictionary:
                break  // flattened by add(_:)
            }
        }

        private static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
            guard number >= 0 else {
                bytes.append(0x13)
                appendBigEndian(UInt64(bitPattern: number), size: 8, to: &bytes)
                return
            }
            let size = byteCount(for: UInt64(number))
            let log2Size = size == 1 ? 0 : size == 2 ? 1 : size <= 4 ? 2 : 3
            bytes.append(0x10 | UInt8(log2Size))
            appendBigEndian(UInt64(number), size: 1 << log2Size, to: &bytes)
        }

        private static func appendHeader(_ kind: UInt8, count: Int, to bytes: inout [UInt8]) {
            if count < 15 {
                bytes.append(kind << 4 | UInt8(count))
            } else {
                bytes.append(kind << 4 | 0x0F)
                appendInteger(Int64(count), to: &bytes)
            }
        }

        /// The fewest bytes (1, 2, 4 or 8) that hold a value.
        static func byteCount(for value: UInt64) -> Int {
            value <= 0xFF ? 1 : value <= 0xFFFF ? 2 : value <= 0xFFFF_FFFF ? 4 : 8
        }

        static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
    }
}
