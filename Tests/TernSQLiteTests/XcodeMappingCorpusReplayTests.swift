import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernTestSupport
import Testing

/// The corpus's mapping models run on the apps' own stores, with the values their notes record
/// (what the apps' migration tests expect) checked after the step.
@Suite struct XcodeMappingCorpusReplayTests {
    /// A copy of a corpus store with its -wal and -shm.
    static func copy(_ path: String, into folder: TemporaryDirectory, prefix: String = "") throws -> URL {
        let source = RealWorldCorpus.root.appendingPathComponent(path)
        let copy = try folder.copy(source, as: prefix + source.lastPathComponent)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: source.path + suffix) {
            try folder.copy(URL(fileURLWithPath: source.path + suffix), as: prefix + source.lastPathComponent + suffix)
        }
        return copy
    }

    /// Migrates a copy of a store with one mapping model and the corpus policies; returns the
    /// migrated store, opened with the destination version.
    static func migrate(
        _ storePath: String, model modelPath: String, mapping mappingPath: String, in folder: TemporaryDirectory
    ) async throws -> (before: SQLiteStore, after: SQLiteStore) {
        let model = try XcodeModel.readVersionedModel(at: RealWorldCorpus.root.appendingPathComponent(modelPath))
        let policies = CorpusPolicies.registry()
        let step = try StepMapping(
            xcodeMappingModelsAt: [RealWorldCorpus.root.appendingPathComponent(mappingPath)], in: model,
            policies: policies)
        let url = try copy(storePath, into: folder)
        let original = try copy(storePath, into: folder, prefix: "original-")
        var options = MigrationOptions()
        options.policies = policies
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, to: step.destinationVersion, mappings: [step], options: options)
        #expect(report.plan.steps.map(\.kind) == [.mapping])
        let sourceName = try #require(step.sourceVersion)
        let destinationName = try #require(step.destinationVersion)
        let source = try #require(model.version(named: sourceName)).model
        let destination = try #require(model.version(named: destinationName)).model
        return (try SQLiteStore(at: original, model: source), try SQLiteStore(at: url, model: destination))
    }

    static func rows(_ store: SQLiteStore, _ entity: String) async throws -> [StoreRow] {
        try await store.fetch(StoreFetchRequest(entityName: entity))
    }

    @Test func wiboscoGivesEveryPostAColorWithItsOldHexColor() async throws {
        let folder = try TemporaryDirectory()
        let (before, after) = try await Self.migrate(
            "wibosco__CoreDataMigration-Example/CoreDataMigration_Example_2.sqlite",
            model: "wibosco__CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld",
            mapping: "wibosco__CoreDataMigration-Example/Migration2to3.xcmappingmodel", in: folder)
        var hexColors: [String: AttributeValue?] = [:]
        for post in try await Self.rows(before, "Post") {
            if case .string(let id)? = post.attributes["postID"] { hexColors[id] = post.attributes["hexColor"] }
        }
        let colors = Dictionary(uniqueKeysWithValues: try await Self.rows(after, "Color").map { ($0.reference, $0) })
        let posts = try await Self.rows(after, "Post")
        #expect(posts.count == 5979 && colors.count == 5979)
        for post in posts {
            guard case .string(let id)? = post.attributes["postID"],
                let color = post.toOne["color"].flatMap({ colors[$0] })
            else {
                Issue.record("a post without its color")
                continue
            }
            #expect(color.attributes["hex"] == hexColors[id] ?? nil)
            #expect(color.attributes["colorID"] != nil)
        }
    }

    @Test func theRevisedExampleGivesEveryPostASectionOfItsContent() async throws {
        let folder = try TemporaryDirectory()
        let (_, after) = try await Self.migrate(
            "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration_Example_2.sqlite",
            model: "wibosco__CoreDataMigrationRevised-Example/CoreDataMigration_Example.xcdatamodeld",
            mapping: "wibosco__CoreDataMigrationRevised-Example/Migration2to3ModelMapping.xcmappingmodel", in: folder)
        let posts = try await Self.rows(after, "Post")
        let sections = Dictionary(
            uniqueKeysWithValues: try await Self.rows(after, "Section").map { ($0.reference, $0) })
        #expect(posts.count == 10 && sections.count == 10)
        let first = try #require(
            posts.max { "\($0.attributes["postID"] as Any)" < "\($1.attributes["postID"] as Any)" })
        #expect(first.attributes["postID"] == .string("FFFECB21-6645-4FDD-B8B0-B960D0E61F5A"))
        #expect(first.attributes["hexColor"] == .string("1BB732"))
        let section = try #require(first.toMany["sections"]?.first.flatMap { sections[$0] })
        #expect(first.toMany["sections"]?.count == 1)
        #expect(section.attributes["title"] == .string("Test...") && section.attributes["body"] == .string("Test body"))
        #expect(section.attributes["index"] == .integer(0) && section.toOne["post"] == first.reference)
    }

    @Test func mwkirkSplitsEveryNameAndKeepsTheDepartments() async throws {
        let folder = try TemporaryDirectory()
        let (_, after) = try await Self.migrate(
            "mwkirk__MWKCoreData/MWKCoreDataTests2.sqlite", model: "mwkirk__MWKCoreData/MWKCoreDataTests.xcdatamodeld",
            mapping: "mwkirk__MWKCoreData/MWKCoreDataTestsV2ToV3.xcmappingmodel", in: folder)
        let departments = Dictionary(
            uniqueKeysWithValues: try await Self.rows(after, "Dept").map { ($0.reference, $0.attributes["name"]) })
        let employees = try await Self.rows(after, "Employee").map { row in
            [
                "\(row.attributes["firstName"] as Any)", "\(row.attributes["lastName"] as Any)",
                "\(row.toOne["dept"].flatMap { departments[$0] } as Any)",
            ]
        }
        let expected = [
            ("Bob", "Johnson", "Shipping"), ("Carla", "Jones", "Engineering"), ("Adam", "Smith", "Marketing"),
        ].map {
            [
                "\(Optional(AttributeValue.string($0.0)) as Any)", "\(Optional(AttributeValue.string($0.1)) as Any)",
                "\(Optional(Optional(AttributeValue.string($0.2))) as Any)",
            ]
        }
        #expect(employees.sorted { $0[1] < $1[1] } == expected.sorted { $0[1] < $1[1] })
        #expect(departments.count == 3)
    }

    @Test func xcServerParsesTheIntegrationDates() async throws {
        let folder = try TemporaryDirectory()
        let (_, after) = try await Self.migrate(
            "richardpiazza__XCServerCoreData/XCServerCoreData_1.2.0.sqlite",
            model: "richardpiazza__XCServerCoreData/XCServerCoreData.xcdatamodeld",
            mapping: "richardpiazza__XCServerCoreData/MappingModel1.2.0to2.0.2.xcmappingmodel", in: folder)
        let integrations = try await Self.rows(after, "Integration")
        #expect(integrations.count == 24)
        let integration = try #require(
            integrations.first { $0.attributes["identifier"] == .string("8a526f6a0ce6b83bb969758e0f262490") })
        #expect(integration.toOne["bot"] != nil)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let expected = try #require(formatter.date(from: "2017-07-13T19:45:05.921Z"))
        guard case .date(let started)? = integration.attributes["startedTime"] else {
            Issue.record("startedTime is not a date")
            return
        }
        #expect(abs(started.timeIntervalSince(expected)) < 0.001)
    }

    @Test func moodyLinksMoodsToTheirContinentThroughTheUnionOfItsCountries() async throws {
        let folder = try TemporaryDirectory()
        let (_, after) = try await Self.migrate(
            "objcio__core-data/Migrations/Moody 2.moody", model: "objcio__core-data/Migrations/Moody.xcdatamodeld",
            mapping: "objcio__core-data/Migrations/Moody 2-Moody 3.xcmappingmodel", in: folder)
        func code(_ row: StoreRow?) -> AttributeValue? { row?.attributes["numericISO3166Code"] }
        let continents = Dictionary(
            uniqueKeysWithValues: try await Self.rows(after, "Continent").map { ($0.reference, $0) })
        let moods = Dictionary(uniqueKeysWithValues: try await Self.rows(after, "Mood").map { ($0.reference, $0) })
        #expect(continents.count == 2 && moods.count == 4)
        // v3Data: mood1 (country 704) -> 10005; mood2, mood3, mood4 -> 10004; Continent.moods the inverse.
        var byContinent: [String: Set<String>] = [:]
        for mood in moods.values {
            let continent = code(mood.toOne["continent"].flatMap { continents[$0] })
            byContinent["\(continent as Any)", default: []].insert("\(mood.attributes["remoteID"] as Any)")
        }
        #expect(byContinent["\(Optional(AttributeValue.integer(10005)) as Any)"]?.count == 1)
        #expect(byContinent["\(Optional(AttributeValue.integer(10004)) as Any)"]?.count == 3)
        for continent in continents.values {
            let linked = Set(
                (continent.toMany["moods"] ?? []).compactMap { moods[$0] }.map {
                    code($0.toOne["continent"].flatMap { continents[$0] })
                })
            #expect(linked == [code(continent)])
        }
    }

    @Test func moodyMakesTheContinentsOfCountriesBackWithItsPolicy() async throws {
        let folder = try TemporaryDirectory()
        let (_, after) = try await Self.migrate(
            "objcio__core-data/Migrations/Moody 5.moody", model: "objcio__core-data/Migrations/Moody.xcdatamodeld",
            mapping: "objcio__core-data/Migrations/Moody 5-Moody 6.xcmappingmodel", in: folder)
        let continents = Dictionary(
            uniqueKeysWithValues: try await Self.rows(after, "Continent").map { ($0.reference, $0) })
        // v6Data: 10004 holds countries 710 and 231, 10005 holds 704.
        var countriesOf: [String: Set<String>] = [:]
        for country in try await Self.rows(after, "Country") {
            let continent = country.toOne["continent"].flatMap { continents[$0] }?.attributes["numericISO3166Code"]
            countriesOf["\(continent as Any)", default: []].insert("\(country.attributes["numericISO3166Code"] as Any)")
        }
        #expect(continents.count == 2)
        #expect(
            countriesOf["\(Optional(AttributeValue.integer(10004)) as Any)"] == [
                "\(Optional(AttributeValue.integer(710)) as Any)", "\(Optional(AttributeValue.integer(231)) as Any)",
            ])
        #expect(
            countriesOf["\(Optional(AttributeValue.integer(10005)) as Any)"] == [
                "\(Optional(AttributeValue.integer(704)) as Any)"
            ])
    }
}
