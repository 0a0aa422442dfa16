import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernTool

/// `tern export` on copies of the real Core Data stores (facts in Tests/Fixtures/EXPECTED.md).
@Suite struct ExportCommandTests {
    static let sampleStore = "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"

    /// Exports a copy of a fixture store and decodes the JSON document.
    func export(
        _ store: String, _ options: [String] = [], in tmp: TemporaryDirectory
    ) async throws -> (text: String, document: [String: [[String: Any]]]) {
        let copy = try tmp.copy(Fixtures.url(store))
        let result = await ToolRunner.run(["export", copy.path] + options)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        return (result.standardOutput, try #require(object as? [String: [[String: Any]]]))
    }

    @Test func jsonListsEachObjectUnderItsOwnEntityInKeyOrder() async throws {
        let tmp = try TemporaryDirectory()
        let (_, document) = try await export(Self.sampleStore, in: tmp)
        #expect(document.mapValues(\.count) == ["Car": 115, "SportCar": 5, "ExpensiveSportCar": 5, "Person": 20])
        for (entity, records) in document {
            let ids = records.compactMap { $0["_id"] as? String }
            #expect(ids.count == records.count)
            #expect(ids.allSatisfy { $0.hasPrefix("\(entity)/p") })
            let keys = ids.compactMap { Int64($0.dropFirst(entity.count + 2)) }
            #expect(keys == keys.sorted())
        }
    }

    @Test func relationshipsReferToExportedObjectsBothWays() async throws {
        let tmp = try TemporaryDirectory()
        let (_, document) = try await export(Self.sampleStore, in: tmp)
        let cars = ["Car", "SportCar", "ExpensiveSportCar"].flatMap { document[$0] ?? [] }
        var ownerOf: [String: String] = [:]
        for car in cars {
            guard let id = car["_id"] as? String else { continue }
            #expect(car["owner"] is String || car["owner"] is NSNull)
            if let owner = car["owner"] as? String { ownerOf[id] = owner }
        }
        var listed: [String: String] = [:]
        for person in document["Person"] ?? [] {
            let id = try #require(person["_id"] as? String)
            for car in try #require(person["cars"] as? [String]) { listed[car] = id }
        }
        #expect(!listed.isEmpty)
        #expect(listed == ownerOf)
    }

    @Test func valuesUseTheirTextForms() async throws {
        let tmp = try TemporaryDirectory()
        let (_, document) = try await export(Self.sampleStore, ["--entity", "Person"], in: tmp)
        #expect(Set(document.keys) == ["Person"])
        let person = try #require(document["Person"]?.first)
        let id = try #require(person["id"] as? String)
        #expect(UUID(uuidString: id)?.uuidString == id)
        let updatedAt = try #require(person["updatedAt"] as? String)
        // The fraction has at least three digits, and as many more as the stored double needs.
        #expect(updatedAt.hasSuffix("Z") && updatedAt.count >= "2021-04-07T15:52:49.638Z".count)
        let parsed = try Date(updatedAt, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))
        #expect(parsed > Date(timeIntervalSince1970: 0))
    }

    @Test func theStoresModelCacheAndTheXcodeModelGiveTheSameExport() async throws {
        let tmp = try TemporaryDirectory()
        let cached = try await export(Self.sampleStore, in: tmp)
        let other = try TemporaryDirectory()
        let modelled = try await export(Self.sampleStore, ["--model", Fixtures.sampleModel.path], in: other)
        #expect(cached.text == modelled.text)
    }

    @Test func entityIncludesItsSubentities() async throws {
        let tmp = try TemporaryDirectory()
        let (_, document) = try await export(Self.sampleStore, ["--entity", "SportCar"], in: tmp)
        #expect(document.mapValues(\.count) == ["SportCar": 5, "ExpensiveSportCar": 5])
    }

    @Test func tsvWritesOneEntityWithAHeader() async throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(Self.sampleStore))
        let result = await ToolRunner.run(["export", copy.path, "--format", "tsv", "--entity", "Car"])
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "_id\tcolor\tmaker\tmarkedForDeletionAsOf\tmodel\tnumberPlate")
        #expect(lines.count == 1 + 115 + 1)
        #expect(
            lines.dropFirst().dropLast().allSatisfy {
                $0.split(separator: "\t", omittingEmptySubsequences: false).count == 6
            })
    }

    @Test func outputFileIsWrittenAndTheStoreIsLeftAlone() async throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(Self.sampleStore))
        let before = try Data(contentsOf: copy)
        let output = tmp.path("out.json")
        let result = await ToolRunner.run(["export", copy.path, "-o", output.path])
        #expect(result.status == 0)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError == "exported 145 objects to \(output.path)\n")
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any]
        #expect(document?.keys.sorted() == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        #expect(try Data(contentsOf: copy) == before)
        let names = try FileManager.default.contentsOfDirectory(atPath: tmp.url.path).sorted()
        #expect(names == ["SampleModel_V1.sqlite", "out.json"])
    }

    @Test func failureWritesNothing() async throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(Self.sampleStore))
        let output = tmp.path("out.json")
        let result = await ToolRunner.run(["export", copy.path, "--entity", "Boat", "-o", output.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.errorLines == [
                "error: the store's model has no entity named 'Boat'; use one of: Car, ExpensiveSportCar, Person, SportCar"
            ])
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    @Test(arguments: [
        (["--format", "tsv"], "error: tsv holds one entity; name it with --entity"),
        (["--format", "xml"], "error: unknown format 'xml'; use json or tsv"),
    ])
    func formatIsChecked(options: [String], line: String) async {
        let result = await ToolRunner.run(["export", "store.sqlite"] + options)
        #expect(result.status == 2)
        #expect(result.errorLines.first == line)
    }

    @Test func progressShowsOnStderrWithProgressAndNeverWithQuiet() async throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(Self.sampleStore))
        let shown = await ToolRunner.run(["export", copy.path, "--progress"])
        #expect(shown.status == 0)
        #expect(shown.errorLines.last?.hasPrefix("exporting 100% 145/145") == true)
        #expect(!shown.standardError.contains("\u{1B}"))
        #expect(shown.standardOutput.hasPrefix("{\n\"Car\": ["))
        let quiet = await ToolRunner.run(["export", copy.path, "--progress", "--quiet"])
        #expect(quiet.status == 0)
        #expect(quiet.standardError.isEmpty)
        #expect(quiet.standardOutput == shown.standardOutput)
    }

    @Test func recordValuesFollowTheContract() throws {
        let date = Date(timeIntervalSince1970: 1_304_940_653)
        #expect(RecordFormat.jsonValue(.date(date)) == .string("2011-05-09T11:30:53.000Z"))
        #expect(RecordFormat.jsonValue(.integer(7)) == .integer(7))
        #expect(RecordFormat.jsonValue(.decimal(Decimal(string: "10.11") ?? 0)) == .string("10.11"))
        #expect(RecordFormat.jsonValue(.data(Data([1, 2, 255]))) == .string("AQL/"))
        let uuid = try #require(UUID(uuidString: "c4637490-bd7f-4428-b093-63a1720e17d2"))
        #expect(RecordFormat.jsonValue(.uuid(uuid)) == .string("C4637490-BD7F-4428-B093-63A1720E17D2"))
        #expect(RecordFormat.tsvField(nil) == "")
        #expect(RecordFormat.tsvField(.string("a\tb\\c\nd")) == "a\\tb\\\\c\\nd")
        #expect(RecordFormat.tsvField(.bool(true)) == "true")
    }

    @Test func recordsAreWrittenAsTheEncoderWritesThem() throws {
        // Dates: see ExactValueRoundTripTests (the shortest text that reads back exactly).
        // Records: every value kind, every control character, keys in the encoder's order.
        var controls = ""
        for code in 0..<0x20 { controls.unicodeScalars.append(Unicode.Scalar(UInt8(code))) }
        let attributes = ["name", "Zed", "amount", "when", "ratio", "flag", "blob", "empty"].map {
            AttributeDescription(name: $0, type: .string)
        }
        let relationships = [
            RelationshipDescription(name: "owner", destination: "Person"),
            RelationshipDescription(name: "tags", destination: "Tag", toMany: true),
        ]
        let row = StoreRow(
            reference: RowReference(entityName: "Event", primaryKey: 7),
            attributes: [
                "name": .string(controls + "\"\\/é😀\u{7f}\u{2028}"), "Zed": .string("plain"), "amount": .integer(-3),
                "when": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "ratio": .double(0.1), "flag": .bool(false),
                "blob": .data(Data([0, 1, 2])),
            ],
            toOne: ["owner": RowReference(entityName: "Person", primaryKey: 2)],
            toMany: [
                "tags": [
                    RowReference(entityName: "Tag", primaryKey: 1), RowReference(entityName: "Tag", primaryKey: 4),
                ]
            ])
        // Global identifiers sort unordered to-many relationships by name: 9 and 10 change places.
        let global: (RowReference) -> String = { "\($0.entityName)/G\(10 - $0.primaryKey % 10)" }
        let rows = [
            row,
            StoreRow(reference: RowReference(entityName: "Event", primaryKey: 8), attributes: ["ratio": .double(1e20)]),
        ]
        for row in rows {
            for identifier in [nil, global] {
                var written = RecordWriter()
                RecordFormat.appendJSONRecord(
                    row, members: RecordFormat.JSONMembers(attributes: attributes, relationships: relationships),
                    identifier: identifier, to: &written)
                let record = RecordFormat.jsonRecord(
                    row, attributes: attributes, relationships: relationships, identifier: identifier)
                #expect(written.text == record.encoded(pretty: false))
            }
        }
    }
}

/// `tern export` of real stores whose names are Core Data's variants, through their model caches.
@Suite struct ExportCorpusStoreTests {
    /// Exports a copy of a corpus store, with its `-wal`/`-shm`.
    func export(_ path: String, in tmp: TemporaryDirectory) async throws -> [String: [[String: Any]]] {
        let item = try #require(try RealWorldCorpus.items(of: .store).first { $0.description == path })
        let copy = try tmp.copy(item.url)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: item.url.path + suffix) {
            try tmp.copy(URL(fileURLWithPath: item.url.path + suffix))
        }
        let result = await ToolRunner.run(["export", copy.path])
        #expect(result.status == 0, "\(result.standardError)")
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        return try #require(object as? [String: [[String: Any]]])
    }

    @Test func exportsDuckDuckGosFavorites() async throws {
        let tmp = try TemporaryDirectory()
        let document = try await export("duckduckgo__BrowserServicesKit/Bookmarks_V5.sqlite", in: tmp)
        let bookmarks = try #require(document["BookmarkEntity"])
        #expect(bookmarks.count == 10)
        let root = try #require(bookmarks.first { $0["uuid"] as? String == "favorites_root" })
        let favorites = try #require(root["favorites"] as? [String])
        #expect(favorites.count == 5)
        let rootID = try #require(root["_id"] as? String)
        for favorite in favorites {
            #expect(bookmarks.first { $0["_id"] as? String == favorite }?["favoriteFolders"] as? [String] == [rootID])
        }
    }

    @Test func exportsPulsesMessages() async throws {
        let tmp = try TemporaryDirectory()
        let document = try await export("kean__Pulse/logs-package.pulse/logs.sqlite", in: tmp)
        let messages = try #require(document["LoggerMessageEntity"])
        #expect(messages.count == 23)
        #expect(messages.allSatisfy { ($0["metadata"] as? [String])?.isEmpty ?? true })
    }
}
