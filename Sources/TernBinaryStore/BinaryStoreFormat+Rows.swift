import Foundation
import TernCore

extension BinaryStoreFormat {
    /// The tag byte before each attribute value, one per case of ``AttributeValue``.
    enum ValueTag: UInt8 {
        case integer = 1
        case double, decimal, string, bool, date, data, uuid, uri
    }

    /// Encodes the body: a string table, the key counters, then the rows grouped by entity.
    ///
    /// - Complexity: O(*n*) in the size of the store.
    static func encodeBody(_ contents: AtomicStoreContents) throws(TernError) -> [UInt8] {
        var names: [String: UInt32] = [:]
        var table: [String] = []
        func index(_ name: String) -> UInt32 {
            if let existing = names[name] { return existing }
            let next = UInt32(table.count)
            names[name] = next
            table.append(name)
            return next
        }
        var byEntity: [UInt32: [StoreRow]] = [:]
        for row in contents.rows { byEntity[index(row.reference.entityName), default: []].append(row) }
        var rows = ByteWriter()
        try rows.appendCount(byEntity.count)
        for (entity, entityRows) in byEntity.sorted(by: { $0.key < $1.key }) {
            rows.append(entity)
            try rows.appendCount(entityRows.count)
            for row in entityRows { try appendRow(row, to: &rows, index: index) }
        }
        let keys = contents.lastPrimaryKeys.sorted { $0.key < $1.key }.map { (index($0.key), $0.value) }
        var body = ByteWriter()
        try body.appendCount(table.count)
        for name in table { try body.appendString(name) }
        try body.appendCount(keys.count)
        for (root, last) in keys {
            body.append(root)
            body.append(last)
        }
        return body.bytes + rows.bytes
    }

    /// Decodes the body written by ``encodeBody(_:)``.
    ///
    /// - Complexity: O(*n*) in the size of the body.
    static func decodeBody(_ reader: inout ByteReader, metadata: StoreMetadata) throws(TernError) -> AtomicStoreContents
    {
        let nameCount = try reader.readCount(minimumSize: 4)
        var table: [String] = []
        table.reserveCapacity(nameCount)
        for _ in 0..<nameCount { table.append(try reader.readString()) }
        func name(_ reader: inout ByteReader) throws(TernError) -> String {
            let index = Int(try reader.readUInt32())
            guard index < table.count else { throw reader.corrupt("a name refers past the string table") }
            return table[index]
        }
        func reference(_ reader: inout ByteReader) throws(TernError) -> RowReference {
            RowReference(entityName: try name(&reader), primaryKey: try reader.readInt64())
        }
        var contents = AtomicStoreContents(metadata: metadata)
        for _ in 0..<(try reader.readCount(minimumSize: 12)) {
            let root = try name(&reader)
            contents.lastPrimaryKeys[root] = try reader.readInt64()
        }
        for _ in 0..<(try reader.readCount(minimumSize: 8)) {
            let entity = try name(&reader)
            for _ in 0..<(try reader.readCount(minimumSize: 28)) {
                var row = StoreRow(
                    reference: RowReference(entityName: entity, primaryKey: try reader.readInt64()),
                    version: try reader.readInt64())
                for _ in 0..<(try reader.readCount(minimumSize: 5)) {
                    let attribute = try name(&reader)
                    row.attributes[attribute] = try readValue(&reader)
                }
                for _ in 0..<(try reader.readCount(minimumSize: 16)) {
                    let relationship = try name(&reader)
                    row.toOne[relationship] = try reference(&reader)
                }
                for _ in 0..<(try reader.readCount(minimumSize: 8)) {
                    let relationship = try name(&reader)
                    var references: [RowReference] = []
                    let count = try reader.readCount(minimumSize: 12)
                    references.reserveCapacity(count)
                    for _ in 0..<count { references.append(try reference(&reader)) }
                    row.toMany[relationship] = references
                }
                contents.rows.append(row)
            }
        }
        guard reader.isAtEnd else { throw reader.corrupt("\(reader.remaining) bytes follow the last row") }
        contents.rows.sort { $0.reference < $1.reference }
        return contents
    }

    /// Appends one row: its key, version, non-nil attributes sorted by name, then its to-one
    /// and to-many destinations sorted by relationship name.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - writer: Where its bytes go.
    ///   - index: The position of a name in the string table.
    /// - Complexity: O(*v* log *v*) in the row's values and references.
    static func appendRow(
        _ row: StoreRow, to writer: inout ByteWriter, index: (String) throws(TernError) -> UInt32
    ) throws(TernError) {
        writer.append(row.reference.primaryKey)
        writer.append(row.version)
        try writer.appendCount(row.attributes.count)
        for (name, value) in row.attributes.sorted(by: { $0.key < $1.key }) {
            writer.append(try index(name))
            try append(value, to: &writer)
        }
        try appendRelationships(toOne: row.toOne, toMany: row.toMany, to: &writer, index: index)
    }

    /// Appends one packed row as ``appendRow(_:to:index:)`` appends the same row as a
    /// ``/TernCore/StoreRow``, byte for byte.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - order: The row's attribute slots in the order of their names, with each name's
    ///     position in the string table.
    ///   - writer: Where its bytes go.
    ///   - index: The position of a relationship or entity name in the string table.
    /// - Complexity: O(*v*) in the row's values, plus sorting its relationships.
    static func appendRow(
        _ row: PackedRow, order: [(slot: Int, name: UInt32)], to writer: inout ByteWriter,
        index: (String) throws(TernError) -> UInt32
    ) throws(TernError) {
        writer.append(row.reference.primaryKey)
        writer.append(row.version)
        let values = row.attributes.values
        var present = 0
        for (slot, _) in order where values.startIndex + slot < values.endIndex {
            if values[values.startIndex + slot] != nil { present += 1 }
        }
        try writer.appendCount(present)
        for (slot, name) in order where values.startIndex + slot < values.endIndex {
            guard let value = values[values.startIndex + slot] else { continue }
            writer.append(name)
            try append(value, to: &writer)
        }
        try appendRelationships(toOne: row.toOne, toMany: row.toMany, to: &writer, index: index)
    }

    // MARK: - Non public

    /// Appends a row's to-one destinations, then its to-many ones, each sorted by name.
    private static func appendRelationships(
        toOne: [String: RowReference], toMany: [String: [RowReference]], to writer: inout ByteWriter,
        index: (String) throws(TernError) -> UInt32
    ) throws(TernError) {
        try writer.appendCount(toOne.count)
        for (name, reference) in toOne.sorted(by: { $0.key < $1.key }) {
            writer.append(try index(name))
            writer.append(try index(reference.entityName))
            writer.append(reference.primaryKey)
        }
        try writer.appendCount(toMany.count)
        for (name, references) in toMany.sorted(by: { $0.key < $1.key }) {
            writer.append(try index(name))
            try writer.appendCount(references.count)
            for reference in references {
                writer.append(try index(reference.entityName))
                writer.append(reference.primaryKey)
            }
        }
    }

    private static func append(_ value: AttributeValue, to writer: inout ByteWriter) throws(TernError) {
        switch value {
        case .integer(let number):
            writer.append(ValueTag.integer.rawValue)
            writer.append(number)
        case .double(let number):
            writer.append(ValueTag.double.rawValue)
            writer.append(number)
        case .decimal(let number):
            writer.append(ValueTag.decimal.rawValue)
            try writer.appendString(number.isNaN ? "NaN" : number.description)
        case .string(let text):
            writer.append(ValueTag.string.rawValue)
            try writer.appendString(text)
        case .bool(let flag):
            writer.append(ValueTag.bool.rawValue)
            writer.append(flag ? 1 as UInt8 : 0)
        case .date(let date):
            writer.append(ValueTag.date.rawValue)
            writer.append(date.timeIntervalSinceReferenceDate)
        case .data(let bytes):
            writer.append(ValueTag.data.rawValue)
            try writer.appendBytes(bytes)
        case .uuid(let uuid):
            writer.append(ValueTag.uuid.rawValue)
            withUnsafeBytes(of: uuid.uuid) { for byte in $0 { writer.append(byte) } }
        case .uri(let url):
            writer.append(ValueTag.uri.rawValue)
            try writer.appendString(url.absoluteString)
        }
    }

    static func readValue(_ reader: inout some BinaryInput) throws(TernError) -> AttributeValue {
        let tag = try reader.readByte()
        switch ValueTag(rawValue: tag) {
        case .integer: return .integer(try reader.readInt64())
        case .double: return .double(try reader.readDouble())
        case .decimal:
            let text = try reader.readString()
            if text == "NaN" { return .decimal(.nan) }
            guard let number = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw reader.corrupt("a decimal is not a number")
            }
            return .decimal(number)
        case .string: return .string(try reader.readString())
        case .bool:
            switch try reader.readByte() {
            case 0: return .bool(false)
            case 1: return .bool(true)
            default: throw reader.corrupt("a Boolean is neither 0 nor 1")
            }
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try reader.readDouble()))
        case .data: return .data(try reader.readData())
        case .uuid:
            let raw = try reader.readBytes(count: 16)
            let bytes = (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
            )
            return .uuid(UUID(uuid: bytes))
        case .uri:
            guard let url = URL(string: try reader.readString()) else { throw reader.corrupt("a URI is not valid") }
            return .uri(url)
        case nil: throw reader.corrupt("unknown value tag \(tag)")
        }
    }
}
