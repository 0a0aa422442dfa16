import Foundation
import TernCore

/// Reads and writes Apple's binary property lists (`bplist00`), the format of `Z_METADATA.Z_PLIST`.
///
/// The reader is defensive: every offset and reference is checked, nesting is bounded and a
/// container that contains itself is refused, so a hostile store cannot crash or hang it.
enum BinaryPropertyList {
    /// The deepest nesting the reader accepts.
    static let maximumDepth = 64

    /// Why a property list could not be read.
    struct FormatError: Error {
        /// What is wrong.
        let reason: String
    }

    // MARK: - Reading

    /// Decodes a binary property list.
    ///
    /// - Parameter data: The bytes, starting with `bplist00`.
    /// - Returns: The top object.
    /// - Throws: ``FormatError`` when the bytes are not a well-formed binary property list.
    /// - Complexity: O(*n*) in the size of the data.
    static func decode(_ data: Data) throws(FormatError) -> PropertyListValue {
        var reader = try Reader(bytes: [UInt8](data))
        return try reader.object(at: reader.topObject, depth: 0)
    }

    /// A parser over the bytes of one property list.
    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let objectCount: Int
        let topObject: Int
        let offsetTable: Int
        /// The objects being decoded, to refuse cycles.
        var inProgress: Set<Int> = []

        init(bytes: [UInt8]) throws(FormatError) {
            guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else {
                throw FormatError(reason: "not a binary property list")
            }
            let trailer = bytes.count - 32
            self.bytes = bytes
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
                throw FormatError(reason: "bad trailer")
            }
            let count = Self.unsigned(bytes, at: trailer + 8, size: 8)
            let top = Self.unsigned(bytes, at: trailer + 16, size: 8)
            let table = Self.unsigned(bytes, at: trailer + 24, size: 8)
            guard count < UInt64(bytes.count), top < count, table < UInt64(trailer),
                UInt64(table) + count * UInt64(offsetSize) <= UInt64(trailer)
            else { throw FormatError(reason: "bad trailer") }
            objectCount = Int(count)
            topObject = Int(top)
            offsetTable = Int(table)
        }

        static func unsigned(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in offset..<(offset + size) { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        func checkedRange(_ start: Int, _ length: Int) throws(FormatError) -> Range<Int> {
            guard start >= 0, length >= 0, start <= offsetTable, length <= offsetTable - start else {
                throw FormatError(reason: "object runs past the end")
            }
            return start..<(start + length)
        }

        func offset(ofObject index: Int) throws(FormatError) -> Int {
            guard index >= 0, index < objectCount else { throw FormatError(reason: "reference out of range") }
            let value = Self.unsigned(bytes, at: offsetTable + index * offsetSize, size: offsetSize)
            guard value >= 8, value < UInt64(offsetTable) else { throw FormatError(reason: "offset out of range") }
            return Int(value)
        }

        /// The length that follows a marker's low nibble, and where the payload starts.
        func length(marker: UInt8, at offset: Int) throws(FormatError) -> (Int, Int) {
            let nibble = Int(marker & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            let intMarker = bytes[try checkedRange(offset + 1, 1).lowerBound]
            guard intMarker & 0xF0 == 0x10, intMarker & 0x0F <= 3 else { throw FormatError(reason: "bad length") }
            let size = 1 << Int(intMarker & 0x0F)
            let range = try checkedRange(offset + 2, size)
            let value = Self.unsigned(bytes, at: range.lowerBound, size: size)
            guard value < UInt64(bytes.count) else { throw FormatError(reason: "bad length") }
            return (Int(value), range.upperBound)
        }

        func references(count: Int, at start: Int) throws(FormatError) -> [Int] {
            guard count <= objectCount * 2 else { throw FormatError(reason: "container too large") }
            let range = try checkedRange(start, count * referenceSize)
            return stride(from: range.lowerBound, to: range.upperBound, by: referenceSize).map {
                Int(Self.unsigned(bytes, at: $0, size: referenceSize))
            }
        }

        mutating func object(at index: Int, depth: Int) throws(FormatError) -> PropertyListValue {
            guard depth < BinaryPropertyList.maximumDepth else { throw FormatError(reason: "nesting too deep") }
            let offset = try offset(ofObject: index)
            let marker = bytes[offset]
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: throw FormatError(reason: "unsupported marker \(marker)")
                }
            case 0x1:
                let size = 1 << Int(marker & 0x0F)
                guard size <= 16 else { throw FormatError(reason: "bad integer") }
                let range = try checkedRange(offset + 1, size)
                // 16-byte integers keep their value in the low 8 bytes.
                let value = Self.unsigned(bytes, at: range.upperBound - min(size, 8), size: min(size, 8))
                return .integer(Int64(bitPattern: value))
            case 0x2:
                let size = 1 << Int(marker & 0x0F)
                let range = try checkedRange(offset + 1, size)
                let bits = Self.unsigned(bytes, at: range.lowerBound, size: size)
                switch size {
                case 4: return .real(Double(Float(bitPattern: UInt32(bits))))
                case 8: return .real(Double(bitPattern: bits))
                default: throw FormatError(reason: "bad real")
                }
            case 0x3:
                guard marker == 0x33 else { throw FormatError(reason: "bad date") }
                let range = try checkedRange(offset + 1, 8)
                let seconds = Double(bitPattern: Self.unsigned(bytes, at: range.lowerBound, size: 8))
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            case 0x4:
                let (count, start) = try length(marker: marker, at: offset)
                return .data(Data(bytes[try checkedRange(start, count)]))
            case 0x5:
                let (count, start) = try length(marker: marker, at: offset)
                let slice = bytes[try checkedRange(start, count)]
                return .string(String(decoding: slice, as: UTF8.self))
            case 0x6:
                let (count, start) = try length(marker: marker, at: offset)
                let range = try checkedRange(start, count * 2)
                let units = stride(from: range.lowerBound, to: range.upperBound, by: 2).map {
                    UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1])
                }
                return .string(String(decoding: units, as: UTF16.self))
            case 0xA, 0xC:
                let (count, start) = try length(marker: marker, at: offset)
                let children = try references(count: count, at: start)
                return .array(try objects(children, containedIn: index, depth: depth))
            case 0xD:
                let (count, start) = try length(marker: marker, at: offset)
                let children = try references(count: count * 2, at: start)
                let keys = try objects(Array(children[..<count]), containedIn: index, depth: depth)
                let values = try objects(Array(children[count...]), containedIn: index, depth: depth)
                var dictionary: [String: PropertyListValue] = [:]
                for (key, value) in zip(keys, values) {
                    guard case .string(let name) = key else { throw FormatError(reason: "non-string key") }
                    dictionary[name] = value
                }
                return .dictionary(dictionary)
            default:
                throw FormatError(reason: "unsupported marker \(marker)")
            }
        }

        mutating func objects(
            _ indexes: [Int], containedIn container: Int, depth: Int
        ) throws(FormatError) -> [PropertyListValue] {
            guard inProgress.insert(container).inserted else { throw FormatError(reason: "cycle") }
            defer { inProgress.remove(container) }
            var values: [PropertyListValue] = []
            values.reserveCapacity(indexes.count)
            for index in indexes { values.append(try object(at: index, depth: depth + 1)) }
            return values
        }
    }
}
