package import Foundation
import TernCore

// Why a reader of our own rather than PropertyListSerialization: keyed archives are graphs of
// UIDs, and on Linux PropertyListSerialization hands a UID back as Foundation's private
// `_NSKeyedArchiverUID`, whose number is only reachable through `Mirror` (not API, and free to
// change). This small reader exposes UIDs as a case of its own, checks every size, offset and
// reference before using it, rejects reference cycles and deep nesting, and parses each object
// once (so shared sub-trees cannot blow up). It reads the `bplist00` format only.

/// A binary property list (`bplist00`) as a tree of values, with UIDs kept apart: the container
/// of NSKeyedArchiver archives.
///
/// ```swift
/// let root = try BinaryPropertyList.decode(bytes)
/// if case .dictionary(let top) = root, case .uid(let index)? = top["root"] { … }
/// ```
package enum BinaryPropertyList {
    /// One value of a binary property list.
    package indirect enum Value: Sendable, Hashable {
        /// The null object (`0x00`), which NSKeyedArchiver does not use but the format allows.
        case null
        /// A Boolean.
        case bool(Bool)
        /// An integer; 128-bit integers keep their low 64 bits.
        case integer(Int64)
        /// A floating-point number.
        case real(Double)
        /// A date, in seconds since 2001-01-01 00:00:00 UTC.
        case date(Double)
        /// Bytes.
        case data(Data)
        /// A string.
        case string(String)
        /// A UID: in a keyed archive, an index into `$objects`.
        case uid(UInt64)
        /// An array (sets are read as arrays too).
        case array([Value])
        /// A dictionary; binary property lists that keyed archives use have string keys only.
        case dictionary([String: Value])
    }

    /// Limits that protect the reader from hostile input.
    package struct Limits: Sendable {
        /// The largest input accepted, in bytes.
        package var maxInputBytes = 256 << 20
        /// The deepest nesting of arrays and dictionaries accepted.
        package var maxDepth = 256

        /// The default limits.
        package init() {}
    }

    /// Parses a binary property list.
    ///
    /// - Parameters:
    ///   - data: The bytes, starting with `bplist00`.
    ///   - limits: The limits that guard against hostile input.
    /// - Returns: The top object.
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad header, trailer, offset,
    ///   size, reference, cycle, non-string key or too deep nesting; `archiveTooLarge` past
    ///   `limits.maxInputBytes`.
    /// - Complexity: O(*n*) in the size of the data: each object is parsed once.
    package static func decode(_ data: Data, limits: Limits = Limits()) throws -> Value {
        guard data.count <= limits.maxInputBytes else {
            throw TernError(
                .archiveTooLarge, "The property list is \(data.count) bytes, over the limit of \(limits.maxInputBytes)."
            )
        }
        var reader = try Reader(bytes: [UInt8](data), limits: limits)
        return try reader.object(at: reader.topObject, depth: 0)
    }
}

extension BinaryPropertyList {
    /// The parser's state: the bytes, the trailer's layout, parsed objects and the path being parsed.
    struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        var parsed: [Int: Value] = [:]
        var inProgress: Set<Int> = []

        init(bytes: [UInt8], limits: Limits) throws {
            self.bytes = bytes
            self.limits = limits
            guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist00".utf8)) else {
                throw TernError.corrupt("The data is not a binary property list (no bplist00 header, or too short).")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Self.bigEndian(bytes[(trailer + 8)..<(trailer + 16)])
            let top = Self.bigEndian(bytes[(trailer + 16)..<(trailer + 24)])
            let table = Self.bigEndian(bytes[(trailer + 24)..<(trailer + 32)])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw TernError.corrupt("The property list's trailer has invalid integer sizes.")
            }
            // Each object takes at least one byte, so there cannot be more objects than bytes.
            guard count >= 1, count < UInt64(trailer), top < count, table >= 8, table < UInt64(trailer),
                UInt64(trailer) - table >= count * UInt64(offsetSize)
            else {
                throw TernError.corrupt(
                    "The property list's trailer points outside the data (object count, top object or offset table).")
            }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
        }

        // MARK: Objects

        mutating func object(at index: Int, depth: Int) throws -> Value {
            if let value = parsed[index] { return value }
            guard index >= 0, index < objectCount else {
                throw TernError.corrupt("The property list refers to object \(index) of \(objectCount).")
            }
            guard depth <= limits.maxDepth else {
                throw TernError.corrupt("The property list nests deeper than \(limits.maxDepth) levels.")
            }
            guard inProgress.insert(index).inserted else {
                throw TernError.corrupt("The property list contains a reference cycle through object \(index).")
            }
            defer { inProgress.remove(index) }
            let start = offsetTable + index * offsetSize
            let offset = Self.bigEndian(bytes[start..<(start + offsetSize)])
            guard offset >= 8, offset < UInt64(offsetTable) else {
                throw TernError.corrupt("Object \(index) of the property list starts outside the data.")
            }
            let value = try parseObject(at: Int(offset), depth: depth)
            parsed[index] = value
            return value
        }

        private mutating func parseObject(at offset: Int, depth: Int) throws -> Value {
            let marker = bytes[offset]
            let kind = marker >> 4
            let info = Int(marker & 0x0F)
            switch kind {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw TernError.corrupt("Unknown property list marker 0x\(String(marker, radix: 16)).")
                }
            case 0x1:
                return .integer(try integer(at: offset + 1, log2Size: info))
            case 0x2:
                let raw = try slice(offset + 1, count: 1 << min(info, 4))
                switch info {
                case 2: return .real(Double(Float(bitPattern: UInt32(Self.bigEndian(raw)))))
                case 3: return .real(Double(bitPattern: Self.bigEndian(raw)))
                default: throw TernError.corrupt("A property list real has an unsupported size.")
                }
            case 0x3:
                guard marker == 0x33 else { throw TernError.corrupt("A property list date has a bad marker.") }
                return .date(Double(bitPattern: Self.bigEndian(try slice(offset + 1, count: 8))))
            case 0x4:
                let (count, start) = try length(info, at: offset)
                return .data(Data(try slice(start, count: count)))
            case 0x5:
                let (count, start) = try length(info, at: offset)
                guard let text = String(bytes: try slice(start, count: count), encoding: .isoLatin1) else {
                    throw TernError.corrupt("A property list ASCII string cannot be read.")
                }
                return .string(text)
            case 0x6:
                let (count, start) = try length(info, at: offset)
                let (byteCount, overflow) = count.multipliedReportingOverflow(by: 2)
                guard !overflow else { throw TernError.corrupt("A property list string is absurdly long.") }
                let raw = try slice(start, count: byteCount)
                var units = [UInt16]()
                units.reserveCapacity(count)
                for pair in stride(from: raw.startIndex, to: raw.endIndex, by: 2) {
                    units.append(UInt16(raw[pair]) << 8 | UInt16(raw[pair + 1]))
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                return .uid(Self.bigEndian(try slice(offset + 1, count: info + 1)))
            case 0xA, 0xC:
                let (count, start) = try length(info, at: offset)
                let references = try self.references(start, count: count)
                var elements = [Value]()
                elements.reserveCapacity(count)
                for reference in references {
                    elements.append(try object(at: reference, depth: depth + 1))
                }
                return .array(elements)
            case 0xD:
                let (count, start) = try length(info, at: offset)
                let (doubled, overflow) = count.multipliedReportingOverflow(by: 2)
                guard !overflow else { throw TernError.corrupt("A property list dictionary is absurdly large.") }
                let references = try self.references(start, count: doubled)
                var dictionary = [String: Value](minimumCapacity: count)
                for position in 0..<count {
                    guard case .string(let key) = try object(at: references[position], depth: depth + 1) else {
                        throw TernError.corrupt("A property list dictionary has a key that is not a string.")
                    }
                    dictionary[key] = try object(at: references[count + position], depth: depth + 1)
                }
                return .dictionary(dictionary)
            default:
                throw TernError.corrupt("Unknown property list marker 0x\(String(marker, radix: 16)).")
            }
        }

        // MARK: Primitives

        /// The bytes `[start, start + count)`, checked to lie before the offset table.
        private func slice(_ start: Int, count: Int) throws -> ArraySlice<UInt8> {
            guard count >= 0, start >= 0, start <= offsetTable, count <= offsetTable - start else {
                throw TernError.corrupt("A property list object runs past the end of its data.")
            }
            return bytes[start..<(start + count)]
        }

        private func integer(at start: Int, log2Size: Int) throws -> Int64 {
            guard log2Size <= 4 else { throw TernError.corrupt("A property list integer has an unsupported size.") }
            let size = 1 << log2Size
            let raw = try slice(start, count: size)
            // 8-byte integers are signed; 16-byte ones keep their low 8 bytes.
            return Int64(bitPattern: Self.bigEndian(raw.suffix(min(size, 8))))
        }

        /// The element count of a data, string or collection object and where its content starts.
        private func length(_ info: Int, at offset: Int) throws -> (count: Int, start: Int) {
            guard info == 0x0F else { return (info, offset + 1) }
            let marker = try slice(offset + 1, count: 1)[offset + 1]
            guard marker >> 4 == 0x1, marker & 0x0F <= 3 else {
                throw TernError.corrupt("A property list length is not an integer.")
            }
            let log2Size = Int(marker & 0x0F)
            let value = try integer(at: offset + 2, log2Size: log2Size)
            // No object can hold more elements than the data has bytes.
            guard value >= 0, value <= Int64(bytes.count) else {
                throw TernError.corrupt("A property list object claims an absurd length (\(value)).")
            }
            return (Int(value), offset + 2 + (1 << log2Size))
        }

        private func references(_ start: Int, count: Int) throws -> [Int] {
            let (byteCount, overflow) = count.multipliedReportingOverflow(by: referenceSize)
            guard !overflow else { throw TernError.corrupt("A property list collection is absurdly large.") }
            let raw = try slice(start, count: byteCount)
            return stride(from: raw.startIndex, to: raw.endIndex, by: referenceSize).map { position in
                Int(clamping: Self.bigEndian(raw[position..<(position + referenceSize)]))
            }
        }

        static func bigEndian(_ raw: ArraySlice<UInt8>) -> UInt64 {
            raw.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
}
