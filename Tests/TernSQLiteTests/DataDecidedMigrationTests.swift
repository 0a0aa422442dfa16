import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Changes Core Data's lightweight migration decides from the store's data, not from the models
/// alone: a new required property is refused only when there are objects, bounds that tighten and
/// integers a narrower type cannot hold are relaxed, links a relationship can no longer hold are
/// dropped; each is counted before anything is written, in the plan and in the report.
@Suite struct DataDecidedMigrationTests {
    static func ref(_ entity: String, _ key: Int) -> RowReference {
        RowReference(entityName: entity, primaryKey: Int64(key))
    }

    static func store(_ model: VersionedModel, rows: [StoreRow], in directory: TemporaryDirectory, name: String = "S")
        async throws -> URL
    {
        let url = directory.path("\(name).sqlite")
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        return url
    }

    /// Migrates copies of a store in place and rebuilt; both must give the same tables and report.
    /// Migrates copies of a store with the automatic strategy (in place when it can) and rebuilt;
    /// both must give the same report and, unless `sameTables` is false, the same tables.
    static func migrateBothWays(
        _ url: URL, model: VersionedModel, inPlace expected: Bool = true, sameTables: Bool = true
    )
        async throws -> (MigrationReport, URL)
    {
        let directory = try TemporaryDirectory()
        let rebuilt = directory.path("Rebuilt.sqlite")
        try FileManager.default.copyItem(at: url, to: rebuilt)
        let automatic = try await SQLiteStoreMigrator().migrateStore(at: url, model: model)
        let rebuild = try await SQLiteStoreMigrator().migrateStore(
            at: rebuilt, model: model, options: MigrationOptions(strategy: .rebuild))
        #expect(automatic.inPlaceSteps == (expected ? [0] : []) && rebuild.inPlaceSteps.isEmpty)
        #expect(automatic.warnings == rebuild.warnings)
        #expect(automatic.droppedLinks == rebuild.droppedLinks)
        if sameTables {
            let differences = try StoreContents(of: url).differences(from: StoreContents(of: rebuilt))
            #expect(differences.isEmpty, "\(differences)")
        }
        return (automatic, url)
    }

    // MARK: - Required additions

    /// v2 adds a required attribute and a required to-one relationship, neither with a default.
    static func garage() throws -> VersionedModel {
        try VersionedModel("Garage") {
            ModelVersion("v1") {
                Entity("Car") { Attribute("plate", .string) }
                Entity("Person") { Attribute("name", .string) }
            }
            ModelVersion("v2") {
                Entity("Car") {
                    Attribute("plate", .string)
                    Attribute("vin", .string).required()
                    Relationship("owner", to: "Person").required()
                }
                Entity("Person") { Attribute("name", .string) }
            }
        }
    }

    @Test func newRequiredPropertiesMigrateAStoreWithoutObjectsOfTheirEntity() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.garage()
        let url = try await Self.store(
            model, rows: [StoreRow(reference: Self.ref("Person", 1), attributes: ["name": .string("Ann")])],
            in: directory)
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(plan.isExecutable && plan.steps.first?.warnings == [])
        let (report, migrated) = try await Self.migrateBothWays(url, model: model)
        #expect(report.plan.destination == "v2")
        let people = try await MigrationStores.rows(of: "Person", at: migrated, model: model.currentVersion.model)
        #expect(people.map { $0.attributes["name"] } == [.string("Ann")])
    }

    @Test(arguments: [MigrationStrategy.automatic, .rebuild])
    func newRequiredPropertiesRefuseAStoreWithObjectsNamingTheCount(_ strategy: MigrationStrategy) async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.garage()
        let rows = (1...3).map { StoreRow(reference: Self.ref("Car", $0), attributes: ["plate": .string("P\($0)")]) }
        let url = try await Self.store(model, rows: rows, in: directory)
        let before = try StoreContents(of: url)
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(!plan.isExecutable)
        #expect(Set(plan.steps[0].problems.compactMap(\.propertyName)) == ["vin", "owner"])
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(strategy: strategy))
        }
        let refusal = try #require(error)
        #expect(refusal.code == .constraintViolated && refusal.message.contains("nothing was written"))
        let vin = try #require(refusal.failures.first { $0.propertyName == "vin" })
        #expect(vin.message.contains("3 Car object(s) have no value"), "\(vin.message)")
        let owner = try #require(refusal.failures.first { $0.propertyName == "owner" })
        #expect(
            owner.message.hasPrefix("Car.owner is required in v2, but 3 Car object(s) have none"), "\(owner.message)")
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
    }

    @Test func aToOneThatBecomesRequiredIsRefusedOnlyWhenObjectsLackIt() async throws {
        let model = try VersionedModel("Garage") {
            ModelVersion("v1") {
                Entity("Car") { Relationship("owner", to: "Person") }
                Entity("Person") { Attribute("name", .string) }
            }
            ModelVersion("v2") {
                Entity("Car") { Relationship("owner", to: "Person").required() }
                Entity("Person") { Attribute("name", .string) }
            }
        }
        let person = StoreRow(reference: Self.ref("Person", 1))
        let owned = StoreRow(reference: Self.ref("Car", 1), toOne: ["owner": Self.ref("Person", 1)])
        let directory = try TemporaryDirectory()
        let partly = try await Self.store(
            model, rows: [person, owned, StoreRow(reference: Self.ref("Car", 2))], in: directory, name: "Partly")
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(at: partly, model: model)
        }
        #expect(error?.entityName == "Car" && error?.propertyName == "owner")
        #expect(error?.message.contains("1 Car object(s) have none") == true, "\(error?.message ?? "")")
        let complete = try await Self.store(model, rows: [person, owned], in: directory, name: "Complete")
        let (report, migrated) = try await Self.migrateBothWays(complete, model: model)
        #expect(report.warnings.isEmpty && report.droppedLinks == 0)
        let cars = try await MigrationStores.rows(of: "Car", at: migrated, model: model.currentVersion.model)
        #expect(cars.map { $0.toOne["owner"] } == [Self.ref("Person", 1)])
    }

    // MARK: - Relaxed bounds

    /// v2 asks every author for at least two books, and adds a required to-many `awards`.
    static func authors() throws -> VersionedModel {
        try VersionedModel("Library") {
            ModelVersion("v1") {
                Entity("Author") {
                    Attribute("name", .string)
                    Relationship("books", to: "Book", inverse: "author").toMany()
                }
                Entity("Book") { Relationship("author", to: "Author", inverse: "books") }
            }
            ModelVersion("v2") {
                Entity("Author") {
                    Attribute("name", .string)
                    Relationship("books", to: "Book", inverse: "author").toMany().count(2...)
                    Relationship("awards", to: "Award").toMany().required()
                }
                Entity("Book") { Relationship("author", to: "Author", inverse: "books") }
                Entity("Award") { Attribute("name", .string) }
            }
        }
    }

    @Test func boundsThatTightenAreRelaxedAndCounted() async throws {
        let model = try Self.authors()
        let books = [(1, 1), (2, 1), (3, 2)].map { key, author in
            StoreRow(reference: Self.ref("Book", key), toOne: ["author": Self.ref("Author", author)])
        }
        let authors = (1...3).map { author in
            StoreRow(
                reference: Self.ref("Author", author), attributes: ["name": .string("A\(author)")],
                toMany: ["books": books.filter { $0.toOne["author"]?.primaryKey == Int64(author) }.map(\.reference)])
        }
        let directory = try TemporaryDirectory()
        let url = try await Self.store(model, rows: authors + books, in: directory)
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(plan.isExecutable, "\(plan)")
        let warnings = try #require(plan.steps.first?.warnings)
        // Author 2 holds one book (author 3 none, which an optional relationship allows); every
        // author gets an empty `awards`.
        #expect(
            warnings.map { "\($0.kind)|\($0.propertyName)|\($0.count)" } == [
                "relaxedCount|awards|3", "relaxedCount|books|1",
            ])
        #expect(warnings[1].message.contains("(at least 2)"), "\(warnings[1].message)")
        #expect(plan.description.contains("     warning: 3 Author object(s) get an empty Author.awards"), "\(plan)")
        let (report, migrated) = try await Self.migrateBothWays(url, model: model)
        #expect(report.warnings == warnings)
        let target = model.currentVersion.model
        let rows = try await MigrationStores.rows(of: "Author", at: migrated, model: target)
        #expect(rows.map { $0.toMany["books"]?.count ?? 0 } == [2, 1, 0])
        #expect(rows.allSatisfy { ($0.toMany["awards"] ?? []).isEmpty })
    }

    // MARK: - Numbers over the same storage

    @Test func integersCarryIntoNarrowerTypesAndBooleansAsStored() async throws {
        let model = try VersionedModel("Tasks") {
            ModelVersion("v1") {
                Entity("Task") {
                    Attribute("done", .integer32)
                    Attribute("priority", .integer64)
                    Attribute("ratio", .integer32)
                    Attribute("urgent", .boolean)
                }
            }
            ModelVersion("v2") {
                Entity("Task") {
                    Attribute("done", .boolean)
                    Attribute("priority", .integer16)
                    Attribute("ratio", .float)
                    Attribute("urgent", .integer16)
                }
            }
        }
        let values: [(Int64, Int64, Int64, Bool)] = [(0, 3, 2, true), (1, 70_000, 3, false), (5, -4, 1 << 20, true)]
        let rows = values.enumerated().map { index, value in
            StoreRow(
                reference: Self.ref("Task", index + 1),
                attributes: [
                    "done": .integer(value.0), "priority": .integer(value.1), "ratio": .integer(value.2),
                    "urgent": .bool(value.3),
                ])
        }
        let directory = try TemporaryDirectory()
        let url = try await Self.store(model, rows: rows, in: directory)
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(plan.isExecutable, "\(plan)")
        let warnings = try #require(plan.steps.first?.warnings)
        #expect(
            Set(warnings.map { "\($0.kind)|\($0.propertyName)|\($0.count)" }) == [
                "valuesOutOfRange|done|1", "valuesOutOfRange|priority|1",
            ])
        // In place keeps the stored 5 as Core Data does; a rebuild writes the Boolean it reads as.
        let (report, migrated) = try await Self.migrateBothWays(url, model: model, sameTables: false)
        #expect(report.warnings.count == 2)
        let tasks = try await MigrationStores.rows(of: "Task", at: migrated, model: model.currentVersion.model)
        #expect(tasks.map { $0.attributes["done"] } == [.bool(false), .bool(true), .bool(true)])
        #expect(tasks.map { $0.attributes["urgent"] } == [.integer(1), .integer(0), .integer(1)])
        #expect(tasks.map { $0.attributes["ratio"] } == [.double(2), .double(3), .double(Double(1 << 20))])
        #expect(tasks.map { $0.attributes["priority"] } == [.integer(3), .integer(70_000), .integer(-4)])
    }

    // MARK: - Links that no longer fit

    @Test func aToOneWhoseDestinationChangedDropsTheLinksThatNoLongerFitInPlace() async throws {
        let model = try AlbumCovers.model()
        let rows = [
            StoreRow(reference: Self.ref("Artwork", 1)), StoreRow(reference: Self.ref("Image", 2)),
            StoreRow(reference: Self.ref("Album", 1), toOne: ["cover": Self.ref("Artwork", 1)]),
            StoreRow(reference: Self.ref("Album", 2), toOne: ["cover": Self.ref("Image", 2)]),
            StoreRow(reference: Self.ref("Album", 3), toOne: ["cover": Self.ref("Artwork", 1)]),
        ]
        let directory = try TemporaryDirectory()
        let url = try await Self.store(model, rows: rows, in: directory)
        let warnings = try #require(try SQLiteStoreMigrator().plan(forStoreAt: url, model: model).steps.first?.warnings)
        #expect(warnings.map { "\($0.kind)|\($0.propertyName)|\($0.count)" } == ["droppedLinks|cover|2"])
        let (report, migrated) = try await Self.migrateBothWays(url, model: model)
        #expect(report.droppedLinks == 2 && report.warnings == warnings)
        let albums = try await MigrationStores.rows(of: "Album", at: migrated, model: model.currentVersion.model)
        #expect(albums.map { $0.toOne["cover"] } == [nil, Self.ref("Image", 2), nil])
    }

    /// `Album.cover` and `Album.pictures` held any Artwork in v1 and hold Images in v2.
    static func albums() throws -> VersionedModel {
        try VersionedModel("Albums") {
            ModelVersion("v1") {
                Entity("Album") {
                    Attribute("name", .string)
                    Relationship("cover", to: "Artwork")
                    Relationship("pictures", to: "Artwork", inverse: "albums").toMany()
                }
                Entity("Artwork") {
                    Attribute("title", .string)
                    Relationship("albums", to: "Album", inverse: "pictures").toMany()
                }
                Entity("Image", parent: "Artwork") { Attribute("pixels", .integer64) }
            }
            ModelVersion("v2") {
                Entity("Album") {
                    Attribute("name", .string)
                    Relationship("cover", to: "Image")
                    Relationship("pictures", to: "Image", inverse: "albums").toMany()
                }
                Entity("Artwork") { Attribute("title", .string) }
                Entity("Image", parent: "Artwork") {
                    Attribute("pixels", .integer64)
                    Relationship("albums", to: "Album", inverse: "pictures").toMany()
                }
            }
        }
    }

    @Test func linksToObjectsOfAnotherEntityAreDroppedAndCounted() async throws {
        let model = try Self.albums()
        let art = [
            StoreRow(
                reference: Self.ref("Artwork", 1), attributes: ["title": .string("sketch")],
                toMany: ["albums": [Self.ref("Album", 1)]]),
            StoreRow(
                reference: Self.ref("Image", 2), attributes: ["title": .string("photo"), "pixels": .integer(12)],
                toMany: ["albums": [Self.ref("Album", 1)]]),
            StoreRow(
                reference: Self.ref("Image", 3), attributes: ["title": .string("scan"), "pixels": .integer(8)],
                toMany: ["albums": [Self.ref("Album", 2)]]),
        ]
        let albums = [
            StoreRow(
                reference: Self.ref("Album", 1), toOne: ["cover": Self.ref("Artwork", 1)],
                toMany: ["pictures": [Self.ref("Artwork", 1), Self.ref("Image", 2)]]),
            StoreRow(
                reference: Self.ref("Album", 2), toOne: ["cover": Self.ref("Image", 2)],
                toMany: ["pictures": [Self.ref("Image", 3)]]),
            StoreRow(reference: Self.ref("Album", 3)),
        ]
        let directory = try TemporaryDirectory()
        let url = try await Self.store(model, rows: art + albums, in: directory)
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(plan.isExecutable, "\(plan)")
        #expect(plan.steps[0].changes.contains { $0.kind == .dropLinks && $0.propertyName == "cover" })
        let warnings = try #require(plan.steps.first?.warnings)
        #expect(
            Set(warnings.map { "\($0.kind)|\($0.propertyName)|\($0.count)" }) == [
                "droppedLinks|cover|1", "droppedLinks|pictures|1",
            ])
        #expect(
            warnings.contains {
                $0.message
                    == "1 link(s) of Album.cover to objects that are not Image objects are dropped (the objects stay)"
            })
        // Dropping many-to-many links while the table is altered is not done in place.
        let (report, migrated) = try await Self.migrateBothWays(url, model: model, inPlace: false)
        #expect(report.droppedLinks == 2)
        let target = model.currentVersion.model
        let rows = try await MigrationStores.rows(of: "Album", at: migrated, model: target)
        #expect(rows.map { $0.toOne["cover"] } == [nil, Self.ref("Image", 2), nil])
        #expect(rows.map { ($0.toMany["pictures"] ?? []).map(\.primaryKey).sorted() } == [[2], [3], []])
        // The objects themselves stay.
        #expect(
            try await MigrationStores.rows(of: "Artwork", at: migrated, model: target).map(\.reference.primaryKey) == [
                1
            ])
        #expect(
            try await MigrationStores.rows(of: "Image", at: migrated, model: target).map(\.reference.primaryKey) == [
                2, 3,
            ])
    }
}
