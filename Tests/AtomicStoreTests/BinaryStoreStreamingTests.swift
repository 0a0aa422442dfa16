import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernBinaryStore

/// The binary store's streaming writer and reader against the whole-file encoder and decoder:
/// the same contents either way, through buffers far smaller than the file, and damage found.
@Suite struct BinaryStoreStreamingTests {
    /// Awkward values, every kind of relationship, an empty to-many, and key counters.
    static let contents = AtomicStoreContents(
        metadata: {
            var metadata = StoreMetadata(storeType: "Binary", uuid: "STREAM-1")
            metadata.applicationKeys["note"] = .string("kept")
            return metadata
        }(),
        rows: AtomicStoreTests.rowsWithRelationships().sorted { $0.reference < $1.reference },
        lastPrimaryKeys: ["Sample": 40, "Person": 100, "Vehicle": 101])

    /// Every name of the conformance model.
    static var names: [String] {
        ConformanceModel.model.entities.flatMap { entity in
            [entity.name] + entity.attributes.map(\.name) + entity.relationships.map(\.name)
        }
    }

    /// The rows of `contents` grouped by entity, in the order of first appearance.
    static var groups: [(entity: String, rows: [StoreRow])] {
        var groups: [(entity: String, rows: [StoreRow])] = []
        for row in contents.rows {
            if groups.last?.entity == row.reference.entityName {
                groups[groups.count - 1].rows.append(row)
            } else {
                groups.append((row.reference.entityName, [row]))
            }
        }
        return groups
    }

    /// A row as a packed row, its values in the order of the entity's attributes.
    static func packed(_ row: StoreRow) -> PackedRow {
        let names = ConformanceModel.model.allAttributes(of: row.reference.entityName).map(\.name)
        return PackedRow(
            reference: row.reference, version: row.version,
            attributes: PackedAttributes(
                keys: AttributeKeys.shared(names: names), values: names.map { row.attributes[$0] }),
            toOne: row.toOne, toMany: row.toMany)
    }

    /// Writes `contents` with a writer, as store rows or packed rows.
    static func write(to url: URL, packedRows: Bool, bufferSize: Int) throws {
        let writer = try BinaryStoreWriter(
            at: url, metadata: contents.metadata, names: names, lastPrimaryKeys: contents.lastPrimaryKeys,
            bufferSize: bufferSize)
        for (entity, rows) in groups {
            try writer.beginEntity(entity)
            for row in rows {
                if packedRows { try writer.append(packed(row)) } else { try writer.append(row) }
            }
        }
        try writer.finish()
    }

    /// Every row a reader gives, as store rows, in key order.
    static func readAll(_ url: URL, bufferSize: Int) throws -> (
        metadata: StoreMetadata, keys: [String: Int64], rows: [StoreRow]
    ) {
        let reader = try BinaryStoreReader(at: url, bufferSize: bufferSize)
        var rows: [StoreRow] = []
        while let (entity, count) = try reader.nextEntity() {
            let columns = ConformanceModel.model.allAttributes(of: entity).map(\.name)
            let slots = reader.slots(for: columns)
            for _ in 0..<count {
                var values = [AttributeValue?](repeating: nil, count: columns.count)
                let head = try reader.readRow(slots: slots, into: &values)
                var attributes: [String: AttributeValue] = [:]
                for (name, value) in zip(columns, values) where value != nil { attributes[name] = value }
                rows.append(
                    StoreRow(
                        reference: RowReference(entityName: entity, primaryKey: head.primaryKey), version: head.version,
                        attributes: attributes, toOne: head.toOne, toMany: head.toMany))
            }
        }
        return (reader.metadata, reader.lastPrimaryKeys, rows.sorted { $0.reference < $1.reference })
    }

    @Test(arguments: [16, 100, 1 << 20])
    func writtenFilesDecodeAsEncodedOnes(bufferSize: Int) throws {
        let tmp = try TemporaryDirectory()
        try Self.write(to: tmp.path("rows.ternbin"), packedRows: false, bufferSize: bufferSize)
        try Self.write(to: tmp.path("packed.ternbin"), packedRows: true, bufferSize: bufferSize)
        let rows = try Data(contentsOf: tmp.path("rows.ternbin"))
        #expect(try Data(contentsOf: tmp.path("packed.ternbin")) == rows, "packed rows are written as store rows")
        let decoded = try BinaryStoreFormat.decode(rows, path: "rows")
        let expected = try BinaryStoreFormat.decode(BinaryStoreFormat.encode(Self.contents), path: "encoded")
        #expect(decoded == expected)
        #expect(decoded.rows.count == Self.contents.rows.count)
        // Nothing but the two stores is left in the folder.
        #expect(try fileNames(in: tmp.url) == ["packed.ternbin", "rows.ternbin"])
    }

    @Test(arguments: [64, 100, 4096, 1 << 20])
    func readerGivesWhatTheDecoderGives(bufferSize: Int) throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.ternbin")
        let bytes = try BinaryStoreFormat.encode(Self.contents)
        try bytes.write(to: url)
        let expected = try BinaryStoreFormat.decode(bytes, path: url.path)
        let read = try Self.readAll(url, bufferSize: bufferSize)
        #expect(read.metadata == expected.metadata)
        #expect(read.keys == expected.lastPrimaryKeys)
        #expect(read.rows == expected.rows)
    }

    @Test func damagedAndTruncatedFilesAreRefusedByTheEndOfTheReading() throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.ternbin")
        let bytes = try BinaryStoreFormat.encode(Self.contents)
        var generator = SplitMix64(state: 11)
        var damaged: [(Data, String)] = (0..<80).map { _ in
            var copy = bytes
            let position = Int(generator.next() % UInt64(bytes.count))
            copy[position] ^= UInt8(1 + generator.next() % 255)
            return (copy, "byte \(position) changed")
        }
        damaged += [bytes.count / 2, bytes.count - 1, 30].map { (bytes.prefix($0), "truncated to \($0) bytes") }
        damaged.append((bytes + [0], "a byte appended"))
        for (file, comment) in damaged {
            try file.write(to: url)
            #expect(throws: TernError.self, "\(comment)") { try Self.readAll(url, bufferSize: 64) }
        }
    }

    @Test func anUnfinishedWriterLeavesNothingBehind() throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.ternbin")
        do {
            let writer = try BinaryStoreWriter(
                at: url, metadata: Self.contents.metadata, names: Self.names, lastPrimaryKeys: [:])
            try writer.beginEntity("Sample")
            try writer.append(Self.contents.rows[0])
            #expect(
                performing: { try writer.beginEntity("Unknown") },
                throws: { ($0 as? TernError)?.code == .unwritableStore })
            #expect(try fileNames(in: tmp.url).count == 1, "the temporary file")
        }
        #expect(try fileNames(in: tmp.url).isEmpty)
    }
}
