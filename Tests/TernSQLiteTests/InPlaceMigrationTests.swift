import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// The content of a store, for comparing the results of two migrations: every table's rows
/// (external values resolved, rows sorted), each table's columns and declared types, the
/// indexes, triggers and the metadata (without the journal's dates).
struct StoreContents: Equatable, CustomStringConvertible {
    var tables: [String: [String]] = [:]
    var columns: [String: [String]] = [:]
    var schema: [String] = []
    var metadata: String = ""

    init(of url: URL) throws {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let folder = ExternalDataStore(storeURL: url, threshold: 0, isDurable: false).folder
        let names = try connection.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
            $0[0].string
        }
        for table in names where table != "Z_METADATA" {
            columns[table] = try connection.fetchAll("SELECT name, type FROM pragma_table_info(\(table))")
                .map { "\($0[0].string ?? "") \($0[1].string ?? "")" }.sorted()
            let statement = try connection.fetchAll("SELECT * FROM \(.identifier(table))")
            let columnNames = try connection.fetchAll("SELECT name FROM pragma_table_info(\(table)) ORDER BY cid")
                .compactMap { $0[0].string }
            tables[table] = statement.map { row in
                zip(columnNames, row).sorted { $0.0 < $1.0 }.map { name, value in
                    var value = value
                    if case .blob(let bytes) = value, let file = ExternalDataStore.fileName(in: bytes),
                        let contents = try? Data(contentsOf: folder.appendingPathComponent(file))
                    {
                        value = .blob(Data([ExternalDataStore.inlineMarker]) + contents)
                    }
                    return "\(name)=\(value)"
                }.joined(separator: " ")
            }.sorted()
        }
        schema = try connection.fetchAll(
            """
            SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') AND sql IS NOT NULL
            """
        ).map { $0.map { $0.string ?? "" }.joined(separator: " | ") }.sorted()
        var stored = try connection.readMetadata()
        let journal = MigrationJournal(metadata: stored).entries.map { "\($0.from)→\($0.to):\($0.kind):\($0.checksum)" }
        stored.applicationKeys[MigrationJournal.journalKey] = nil
        let hashes = stored.versionHashes.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value.base64EncodedString())"
        }
        stored.versionHashes = [:]
        metadata = "\(stored) hashes: \(hashes) journal: \(journal)"
    }

    var description: String {
        tables.keys.sorted().map { "\($0) \(columns[$0] ?? []): \(tables[$0]?.count ?? 0) rows" }.joined(
            separator: "\n")
    }

    /// The differences with another store's contents, in words.
    func differences(from other: StoreContents) -> [String] {
        var found: [String] = []
        for table in Set(tables.keys).union(other.tables.keys).sorted() {
            if columns[table] != other.columns[table] {
                found.append("\(table) columns \(columns[table] ?? []) ≠ \(other.columns[table] ?? [])")
            }
            let (mine, theirs) = (tables[table] ?? [], other.tables[table] ?? [])
            if mine != theirs {
                let only = Set(mine).subtracting(theirs).sorted().prefix(3)
                let otherOnly = Set(theirs).subtracting(mine).sorted().prefix(3)
                found.append("\(table) rows differ (\(mine.count) vs \(theirs.count)): \(only) vs \(otherOnly)")
            }
        }
        for line in Set(schema).symmetricDifference(other.schema).sorted() { found.append("schema: \(line)") }
        if metadata != other.metadata { found.append("metadata: \(metadata) ≠ \(other.metadata)") }
        return found
    }
}

/// Inferred steps run in place give exactly what building them beside the store gives.
@Suite struct InPlaceMigrationTests {
    /// Migrates two copies of a store, one in place and one rebuilt beside; checks both reach the
    /// target, that the in-place one did not rebuild, and that their contents are equal.
    static func compare(
        _ store: URL, model: VersionedModel, to target: String? = nil, expectInPlace: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let directory = try TemporaryDirectory()
        let inPlace = directory.path("InPlace.sqlite")
        let beside = directory.path("Beside.sqlite")
        try FileManager.default.copyItem(at: store, to: inPlace)
        try FileManager.default.copyItem(at: store, to: beside)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: inPlace.path + suffix)
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: beside.path + suffix)
        }
        // External binary data lives in `.<name>_SUPPORT` beside the store.
        func support(_ url: URL) -> URL {
            url.deletingLastPathComponent().appendingPathComponent(
                ".\(url.deletingPathExtension().lastPathComponent)_SUPPORT")
        }
        if FileManager.default.fileExists(atPath: support(store).path) {
            try FileManager.default.copyItem(at: support(store), to: support(inPlace))
            try FileManager.default.copyItem(at: support(store), to: support(beside))
        }
        let migrator = SQLiteStoreMigrator()
        var options = MigrationOptions(strategy: expectInPlace ? .inPlace : .automatic)
        let report = try await migrator.migrateStore(at: inPlace, model: model, to: target, options: options)
        options.strategy = .rebuild
        let rebuilt = try await migrator.migrateStore(at: beside, model: model, to: target, options: options)
        #expect(rebuilt.inPlaceSteps.isEmpty, sourceLocation: sourceLocation)
        if expectInPlace {
            #expect(report.inPlaceSteps == Array(report.plan.steps.indices), sourceLocation: sourceLocation)
        }
        #expect(report.objectsPerStep == rebuilt.objectsPerStep, sourceLocation: sourceLocation)
        let differences = try StoreContents(of: inPlace).differences(from: StoreContents(of: beside))
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))", sourceLocation: sourceLocation)
        let version = try #require(model.version(named: report.plan.destination)?.model)
        let verification = try await StoreVerifier.verify(storeAt: inPlace, model: version)
        #expect(verification.problems.isEmpty, "\(verification.problems)", sourceLocation: sourceLocation)
    }

    // MARK: - Recipes (five versions)

    /// A recipe store at a version, with recipes and (from v3) ingredients, some keys left unused.
    static func recipeStore(_ version: String, in directory: TemporaryDirectory) async throws -> URL {
        let recipes = try RecipeVersions.model()
        let model = try #require(recipes.version(named: version)?.model)
        let level = Int(version.dropFirst()) ?? 1
        var rows: [StoreRow] = []
        for key in [1, 2, 4, 5, 9] {
            let reference = RowReference(entityName: "Recipe", primaryKey: Int64(key))
            var attributes: [String: AttributeValue] = [level == 1 ? "name" : "title": .string("recipe \(key)")]
            if key != 4 { attributes["minutes"] = .integer(Int64(key * 10)) }
            if level >= 3 { attributes["servings"] = .integer(Int64(key)) }
            if level >= 4, key == 2 { attributes["notes"] = .string("note") }
            rows.append(StoreRow(reference: reference, version: Int64(key), attributes: attributes))
        }
        if level >= 3 {
            // Ingredients in an order unlike their keys, one without a recipe.
            let owners: [(ingredient: Int, recipe: Int?)] = [(3, 1), (1, 1), (2, 2), (7, 1), (5, nil), (6, 2)]
            for (ingredient, recipe) in owners {
                var row = StoreRow(
                    reference: RowReference(entityName: "Ingredient", primaryKey: Int64(ingredient)), version: 1,
                    attributes: ["name": .string("ingredient \(ingredient)")])
                if level >= 4 { row.attributes["quantity"] = .double(Double(ingredient) / 4) }
                if let recipe { row.toOne["recipe"] = RowReference(entityName: "Recipe", primaryKey: Int64(recipe)) }
                rows.append(row)
            }
            for index in rows.indices where rows[index].reference.entityName == "Recipe" {
                let key = Int(rows[index].reference.primaryKey)
                rows[index].toMany["ingredients"] = owners.filter { $0.recipe == key }
                    .map { RowReference(entityName: "Ingredient", primaryKey: Int64($0.ingredient)) }
            }
        }
        let url = directory.path("Recipes-\(version).sqlite")
        try await MigrationStores.make(at: url, model: model, rows: rows)
        return url
    }

    @Test(arguments: [("v1", "v2"), ("v2", "v3"), ("v3", "v4"), ("v4", "v5"), ("v1", "v5"), ("v2", "v5"), ("v3", "v5")])
    func recipeStepsInPlaceEqualRebuilds(from: String, to: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.recipeStore(from, in: directory)
        try await Self.compare(store, model: try RecipeVersions.model(), to: to)
    }

    /// Stores Core Data wrote before framework 637 have no Z_MODELCACHE table; migrating one
    /// (in place or rebuilt beside) gives it one, holding the destination model.
    @Test(arguments: [MigrationStrategy.inPlace, .rebuild])
    func aStoreWithoutAModelCacheMigratesAndGetsOne(strategy: MigrationStrategy) async throws {
        let directory = try TemporaryDirectory()
        let store = try await Self.recipeStore("v1", in: directory)
        do {
            let connection = try Connection(path: store.path, configuration: SQLiteConfiguration())
            try connection.execute("DROP TABLE Z_MODELCACHE")
        }
        let recipes = try RecipeVersions.model()
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: store, model: recipes, to: "v2", options: MigrationOptions(strategy: strategy))
        #expect(report.plan.destination == "v2")
        let connection = try Connection(path: store.path, configuration: .readOnly)
        let cache = try #require(try connection.fetchValue("SELECT Z_CONTENT FROM Z_MODELCACHE")?.data)
        let destination = try #require(recipes.version(named: "v2")?.model)
        #expect(try ModelCache.decode(cache).entityVersionHashes == destination.entityVersionHashes)
    }

    @Test func aStoreWithHistoryKeepsItOnAsARebuildDoes() async throws {
        let directory = try TemporaryDirectory()
        let recipes = try RecipeVersions.model()
        let url = directory.path("History.sqlite")
        do {
            var configuration = SQLiteConfiguration()
            configuration.recordsHistory = true
            let store = try SQLiteStore(
                at: url, model: try #require(recipes.version(named: "v2")?.model), configuration: configuration)
            for title in ["Soup", "Salad"] {
                let key = try await store.newPrimaryKeys(forEntity: "Recipe", count: 1)[0]
                let row = StoreRow(
                    reference: RowReference(entityName: "Recipe", primaryKey: key),
                    attributes: ["title": .string(title)])
                _ = try await store.save(StoreChangeSet(inserted: [row], author: "seed"))
            }
        }
        try await Self.compare(url, model: recipes, to: "v4")
    }

    // MARK: - School, the crash test's items, the fixtures

    @Test func schoolRenamesAndWideningInPlaceEqualRebuilds() async throws {
        let school = try VersionedModel("School") {
            SchoolVersions.version("s1", number: .integer16, courseName: "title")
            SchoolVersions.version("s2", personName: "fullName", number: .integer64, courseName: "title")
        }
        let model = try #require(school.version(named: "s1")?.model)
        func ref(_ entity: String, _ key: Int) -> RowReference {
            RowReference(entityName: entity, primaryKey: Int64(key))
        }
        let rows = [
            StoreRow(reference: ref("Person", 1), version: 1, attributes: ["name": .string("Ada")]),
            StoreRow(
                reference: ref("Student", 2), version: 3, attributes: ["name": .string("Bob"), "number": .integer(7)]),
            StoreRow(reference: ref("Course", 1), version: 1, attributes: ["title": .string("Maths")]),
            StoreRow(
                reference: ref("Class", 1), version: 1, attributes: ["room": .string("A")],
                toOne: ["course": ref("Course", 1)]),
            StoreRow(
                reference: ref("Registration", 1), version: 1, attributes: ["grade": .integer(5)],
                toOne: ["student": ref("Student", 2), "session": ref("Class", 1)]),
        ]
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        try await MigrationStores.make(at: url, model: model, rows: rows)
        try await Self.compare(url, model: school)
    }

    @Test func fixtureStoresInPlaceEqualRebuilds() async throws {
        let sample = try XcodeModel.readVersionedModel(
            at: Fixtures.sampleModel, order: ["SampleModel", "SampleModel2", "SampleModel3"])
        for name in ["SampleModel_V1", "SampleModel_V2"] {
            let directory = try TemporaryDirectory()
            let store = try directory.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/\(name).sqlite"))
            try await Self.compare(store, model: sample, to: "SampleModel3")
        }
    }
}

/// What the table migration planner decides for a few changes.
@Suite struct TableMigrationPlanTests {
    static func plan(_ versions: VersionedModel) throws -> TableMigrationPlan {
        let (from, to) = (versions.versions[0].model, versions.versions[1].model)
        let source = try StoreSchema(model: from, numbers: StoreSchema.assignedNumbers(for: from))
        let destination = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
        return try TableMigrationPlan(
            source: source, destination: destination, mapping: try MappingModel.inferred(from: from, to: to),
            largestKeys: [:])
    }

    @Test func renamesAndAdditionsAlterTheTableInPlace() throws {
        let plan = try Self.plan(
            try VersionedModel("Items") {
                ModelVersion("v1") {
                    Entity("Item") {
                        Attribute("name", .string)
                        Attribute("value", .integer32)
                    }
                }
                ModelVersion("v2") {
                    Entity("Item") {
                        Attribute("title", .string).renamed(from: "name")
                        Attribute("value", .integer64)
                        Attribute("note", .string).default(.string("none"))
                    }
                }
            })
        #expect(plan.rebuilds.isEmpty && plan.replacedTables.isEmpty)
        let alteration = try #require(plan.alterations.first)
        #expect(alteration.renamedColumns.map { "\($0.from)→\($0.to)" } == ["ZNAME→ZTITLE"])
        #expect(alteration.addedColumns.map(\.column.name) == ["ZNOTE"])
        #expect(alteration.addedColumns.first?.values == [1: .text("none")])
    }

    @Test func removalsAndTypeChangesRebuildTheTable() throws {
        let plan = try Self.plan(
            try VersionedModel("Items") {
                ModelVersion("v1") {
                    Entity("Item") {
                        Attribute("name", .string)
                        Attribute("value", .integer32)
                    }
                }
                ModelVersion("v2") {
                    Entity("Item") { Attribute("value", .double) }
                }
            })
        #expect(plan.alterations.isEmpty)
        #expect(plan.rebuilds.map(\.table.name) == ["ZITEM"] && plan.replacedTables == ["ZITEM"])
        #expect(plan.rebuilds.first?.copy?.uniformValue(of: "ZVALUE") == .column("ZVALUE"))
    }

    @Test func aRemovedColumnIsDroppedInPlaceAndAnIntegerDefaultIsDeclared() throws {
        let plan = try Self.plan(
            try VersionedModel("Events") {
                ModelVersion("v1") {
                    Entity("Event") {
                        Attribute("name", .string)
                        Attribute("amount", .integer64).indexed()
                        Attribute("flag", .boolean).indexed()
                    }
                }
                ModelVersion("v2") {
                    Entity("Event") {
                        Attribute("title", .string).renamed(from: "name")
                        Attribute("amount", .integer64).indexed()
                        Attribute("priority", .integer64).default(.integer(3))
                    }
                }
            })
        #expect(plan.rebuilds.isEmpty && plan.replacedTables.isEmpty)
        let alteration = try #require(plan.alterations.first)
        #expect(alteration.droppedColumns == ["ZFLAG"])
        #expect(alteration.renamedColumns.map { "\($0.from)→\($0.to)" } == ["ZNAME→ZTITLE"])
        let added = try #require(alteration.addedColumns.first)
        #expect(added.column.name == "ZPRIORITY" && alteration.fillsByDefault(added.values))
        #expect(alteration.rewrittenColumns.isEmpty)
    }

    @Test func manyRemovedColumnsRebuildTheTable() throws {
        let plan = try Self.plan(
            try VersionedModel("Events") {
                ModelVersion("v1") {
                    Entity("Event") {
                        Attribute("a", .string)
                        Attribute("b", .string)
                        Attribute("c", .string)
                    }
                }
                ModelVersion("v2") { Entity("Event") { Attribute("a", .string) } }
            })
        #expect(plan.alterations.isEmpty && plan.rebuilds.map(\.table.name) == ["ZEVENT"])
    }

    @Test func tablesThatWouldMergeAreNotPlanned() throws {
        #expect(throws: InPlaceUnsupported.self) {
            try Self.plan(
                try VersionedModel("Shapes") {
                    ModelVersion("v1") {
                        Entity("Shape") { Attribute("name", .string) }
                        Entity("Square") { Attribute("side", .double) }
                    }
                    ModelVersion("v2") {
                        Entity("Shape") { Attribute("name", .string) }
                        Entity("Square", parent: "Shape") { Attribute("side", .double) }
                    }
                })
        }
    }
}
