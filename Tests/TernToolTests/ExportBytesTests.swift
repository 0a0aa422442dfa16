import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@testable import TernTool

/// The exact bytes `tern export` writes, held to a reference made another way: each record
/// encoded by `JSONEncoder` (``RecordFormat/jsonRecord(_:attributes:relationships:identifier:)``)
/// or joined as strings (``RecordFormat/tsvLine(_:attributes:)``) from the store's rows, framed
/// as `docs/Export.md` lays the document out.
@Suite struct ExportBytesTests {
    /// The reference JSON document of a store: every concrete entity sorted by name, its rows
    /// in key order.
    static func referenceJSON(of store: any PersistentStore) async throws -> String {
        var text = "{"
        for (index, entity) in store.model.entities.filter({ !$0.isAbstract }).enumerated() {
            let attributes = store.model.allAttributes(of: entity.name).filter { !$0.isTransient }
            let relationships = store.model.allRelationships(of: entity.name).filter { !$0.isTransient }
            text += (index == 0 ? "\n" : ",\n") + JSONValue.string(entity.name).encoded(pretty: false) + ": ["
            var first = true
            try await StoreFiles.forEachBatch(of: store, entity: entity.name) { batch in
                for row in batch {
                    text += first ? "\n" : ",\n"
                    text += RecordFormat.jsonRecord(row, attributes: attributes, relationships: relationships)
                        .encoded(pretty: false)
                    first = false
                }
            }
            text += first ? "]" : "\n]"
        }
        return text + "\n}\n"
    }

    /// The reference TSV of one entity: the header, then a line per row in key order.
    static func referenceTSV(of store: any PersistentStore, entity: String) async throws -> String {
        let attributes = store.model.allAttributes(of: entity).filter { !$0.isTransient }
        var text = (["_id"] + attributes.map(\.name)).map(RecordFormat.tsvEscaped).joined(separator: "\t") + "\n"
        try await StoreFiles.forEachBatch(of: store, entity: entity) { batch in
            for row in batch { text += RecordFormat.tsvLine(row, attributes: attributes) + "\n" }
        }
        return text
    }

    /// Expects two texts to be equal, naming the first line where they differ.
    static func expectSame(
        _ written: String, _ reference: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard written != reference else { return }
        let writtenLines = written.split(separator: "\n", omittingEmptySubsequences: false)
        let referenceLines = reference.split(separator: "\n", omittingEmptySubsequences: false)
        let index =
            zip(writtenLines, referenceLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(writtenLines.count, referenceLines.count)
        let line = { (all: [Substring]) in index < all.count ? String(all[index]) : "(end)" }
        Issue.record(
            "\(what): line \(index + 1) is \(line(writtenLines).debugDescription), not \(line(referenceLines).debugDescription)",
            sourceLocation: sourceLocation)
    }

    /// Every control character, quotes, backslashes, slashes and characters beyond ASCII.
    static let awkwardText: String = {
        var text = ""
        for code in 0..<0x20 { text.unicodeScalars.append(Unicode.Scalar(UInt8(code))) }
        return text + "\"\\/é😀\u{7f}\u{2028}\r\n\tend"
    }()

    /// Doubles whose text is easy to get wrong.
    static let awkwardDoubles: [Double] = [
        0, -0.0, 1, -1, 0.1, 1.5, 1e20, 1e21, 1e-7, 123_456_789_012_345_680, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude,
        -.leastNormalMagnitude, 9_007_199_254_740_992, 0.30000000000000004, .nan, .infinity, -.infinity,
    ]

    /// A store with one entity of every attribute type, awkward values, nils and relationships
    /// of both kinds, and a second entity they point at.
    static func makeStore(in tmp: TemporaryDirectory) async throws -> (url: URL, model: ManagedObjectModel) {
        let model = try ManagedObjectModel {
            Entity("Item") {
                Attribute("small", .integer16)
                Attribute("medium", .integer32)
                Attribute("large", .integer64)
                Attribute("ratio", .double)
                Attribute("single", .float)
                Attribute("price", .decimal)
                Attribute("text", .string)
                Attribute("flag", .boolean)
                Attribute("when", .date)
                Attribute("blob", .binary)
                Attribute("identifier", .uuid)
                Attribute("link", .uri)
                Relationship("owner", to: "Tag", inverse: "owned")
                Relationship("tags", to: "Tag", inverse: "items").toMany()
                Relationship("steps", to: "Tag", inverse: "step").toMany(ordered: true)
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("owned", to: "Item", inverse: "owner").toMany()
                Relationship("items", to: "Item", inverse: "tags").toMany()
                Relationship("step", to: "Item", inverse: "steps")
            }
        }
        let url = tmp.path("Items.sqlite")
        let store = try SQLiteStore(at: url, model: model)
        let tagKeys = try await store.newPrimaryKeys(forEntity: "Tag", count: 3)
        let tags = tagKeys.map { RowReference(entityName: "Tag", primaryKey: $0) }
        let intervals = ExactValueRoundTripTests.intervals + ExactValueRoundTripTests.randomIntervals(count: 40)
        let count = max(intervals.count, awkwardDoubles.count) + 1
        let itemKeys = try await store.newPrimaryKeys(forEntity: "Item", count: count)
        var rows: [StoreRow] = tags.enumerated().map { index, tag in
            StoreRow(reference: tag, attributes: index == 0 ? [:] : ["name": .string(index == 1 ? awkwardText : "b")])
        }
        for (index, key) in itemKeys.enumerated() {
            let reference = RowReference(entityName: "Item", primaryKey: key)
            // The last row holds nothing at all.
            guard index < count - 1 else {
                rows.append(StoreRow(reference: reference))
                continue
            }
            var values: [String: AttributeValue] = [
                "small": .integer([Int64(Int16.min), -1, 0, Int64(Int16.max)][index % 4]),
                "medium": .integer([Int64(Int32.min), 7, Int64(Int32.max)][index % 3]),
                "large": .integer([.min, -3, 0, 42, .max][index % 5]),
                "single": .double(Double(Float(index) / 3)),
                "price": .decimal(Decimal(string: index % 2 == 0 ? "10.11" : "-0.000000001234") ?? 0),
                "text": .string(index % 3 == 0 ? awkwardText : "plain \(index)"),
                "flag": .bool(index % 2 == 0),
                "blob": .data(Data((0..<UInt8(index % 7)).map { $0 &* 37 })),
                "identifier": .uuid(UUID(uuid: (UInt8(index), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
                "link": .uri(URL(string: "x-coredata://STORE/Tag/p\(index)?a=b&c=%22") ?? tmp.url),
            ]
            if index < awkwardDoubles.count, !awkwardDoubles[index].isNaN {
                values["ratio"] = .double(awkwardDoubles[index])
            }
            if index < intervals.count {
                values["when"] = .date(Date(timeIntervalSinceReferenceDate: intervals[index]))
            }
            rows.append(
                StoreRow(
                    reference: reference, attributes: values, toOne: index % 2 == 0 ? ["owner": tags[index % 3]] : [:],
                    toMany: ["tags": Array(tags.prefix(index % 4)), "steps": Array(tags.prefix(index % 3).reversed())]))
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return (url, model)
    }

    @Test(arguments: ["json", "tsv"])
    func everyValueKindIsWrittenAsTheReferenceWritesIt(format: String) async throws {
        let tmp = try TemporaryDirectory()
        let (url, model) = try await Self.makeStore(in: tmp)
        let output = tmp.path("out.\(format)")
        var arguments = ["export", url.path, "-o", output.path, "--quiet", "--format", format]
        if format == "tsv" { arguments += ["--entity", "Item"] }
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 0, "\(result.standardError)")
        let written = try String(decoding: Data(contentsOf: output), as: UTF8.self)
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        let reference =
            format == "json"
            ? try await Self.referenceJSON(of: store) : try await Self.referenceTSV(of: store, entity: "Item")
        #expect(written.count > 10_000)
        Self.expectSame(written, reference, format)
        // The same bytes on standard output.
        let printed = await ToolRunner.run(Array(arguments.prefix(2)) + Array(arguments.dropFirst(5)))
        Self.expectSame(printed.standardOutput, reference, "\(format) on standard output")
    }

    /// A small store's export, byte for byte: the layout itself is pinned here.
    @Test func theLayoutIsPinned() async throws {
        let model = try ManagedObjectModel {
            Entity("Car") {
                Attribute("maker", .string)
                Attribute("built", .date)
                Relationship("owner", to: "Person", inverse: "cars")
            }
            Entity("Empty") { Attribute("name", .string) }
            Entity("Person") {
                Attribute("age", .integer16)
                Relationship("cars", to: "Car", inverse: "owner").toMany()
            }
        }
        let tmp = try TemporaryDirectory()
        let url = tmp.path("Cars.sqlite")
        let store = try SQLiteStore(at: url, model: model)
        let car = RowReference(
            entityName: "Car", primaryKey: try await store.newPrimaryKeys(forEntity: "Car", count: 2)[0])
        let person = RowReference(
            entityName: "Person", primaryKey: try await store.newPrimaryKeys(forEntity: "Person", count: 1)[0])
        _ = try await store.save(
            StoreChangeSet(inserted: [
                StoreRow(
                    reference: car,
                    attributes: ["maker": .string("FIAT \"500\""), "built": .date(Date(timeIntervalSince1970: 0.5))],
                    toOne: ["owner": person]),
                StoreRow(reference: RowReference(entityName: "Car", primaryKey: car.primaryKey + 1)),
                StoreRow(reference: person, attributes: ["age": .integer(-7)], toMany: ["cars": [car]]),
            ]))
        let json = await ToolRunner.run(["export", url.path])
        #expect(
            json.standardOutput == """
                {
                "Car": [
                {"_id":"Car/p1","built":"1970-01-01T00:00:00.500Z","maker":"FIAT \\"500\\"","owner":"Person/p1"},
                {"_id":"Car/p2","built":null,"maker":null,"owner":null}
                ],
                "Empty": [],
                "Person": [
                {"_id":"Person/p1","age":-7,"cars":["Car/p1"]}
                ]
                }

                """)
        let tsv = await ToolRunner.run(["export", url.path, "--format", "tsv", "--entity", "Car"])
        #expect(tsv.standardOutput == "_id\tbuilt\tmaker\nCar/p1\t1970-01-01T00:00:00.500Z\tFIAT \"500\"\nCar/p2\t\t\n")
    }

    @Test func valuesAreWrittenAsTheEncoderWritesThem() {
        var generator = SplitMix64(state: 24)
        let doubles = Self.awkwardDoubles + (0..<2_000).map { _ in Double(bitPattern: generator.next()) }
        for number in doubles {
            var writer = RecordWriter()
            writer.appendJSON(.double(number))
            #expect(writer.text == JSONValue.double(number).encoded(pretty: false), "\(number.bitPattern)")
        }
        let integers: [Int64] = [.min, .min + 1, -10, -9, -1, 0, 1, 9, 10, 99, 100, .max - 1, .max]
        for number in integers + (0..<500).map({ _ in Int64(bitPattern: generator.next()) >> (generator.next() % 63) })
        {
            var writer = RecordWriter()
            writer.appendJSON(.integer(number))
            writer.append(ascii: " ")
            writer.appendTSV(.integer(number))
            #expect(writer.text == "\(number) \(number)")
        }
        let intervals = ExactValueRoundTripTests.intervals + ExactValueRoundTripTests.randomIntervals(count: 2_000)
        for interval in intervals + [1e16, -1e16, -63_113_904_000, 253_402_300_800] {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            var bytes: [UInt8] = [1]
            ISO8601Text.append(date, to: &bytes)
            #expect(bytes == [1] + Array(ISO8601Text.string(from: date).utf8), "\(interval)")
        }
        for text in [Self.awkwardText, "", "plain", "\\", "a\r\nb", "\u{0}x\u{1f}"] {
            var writer = RecordWriter()
            writer.appendQuoted(text)
            writer.append(ascii: " ")
            writer.appendTSV(.string(text))
            var quoted = ""
            JSONValue.appendQuoted(text, to: &quoted)
            #expect(writer.text == quoted + " " + RecordFormat.tsvField(.string(text)))
        }
    }
}

/// `tern export` of every store of the real-world corpus, through its own model cache, byte for
/// byte against the reference.
@Suite struct ExportCorpusBytesTests {
    @Test(arguments: RealWorldStoreCommandTests.stores)
    func exportIsTheReferenceDocument(_ store: RealWorldStoreCommandTests.Store) async throws {
        let tmp = try TemporaryDirectory()
        let url = try RealWorldStoreCommandTests.copy(store, into: tmp)
        let output = tmp.path("out.json")
        let result = await ToolRunner.run(["export", url.path, "-o", output.path, "--quiet"])
        // Stores without a model cache are refused, as RealWorldStoreCommandTests checks.
        guard result.status == 0 else {
            #expect(result.standardError.contains("no model cache (Z_MODELCACHE)"), "\(store): \(result.standardError)")
            return
        }
        let opened = try StoreFiles.open(at: url, model: nil, isReadOnly: true, unreadableValues: .readAsNil)
        let reference = try await ExportBytesTests.referenceJSON(of: opened)
        let written = try String(decoding: Data(contentsOf: output), as: UTF8.self)
        ExportBytesTests.expectSame(written, reference, "\(store)")
    }
}
