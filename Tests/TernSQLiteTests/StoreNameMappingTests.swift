import Foundation
import TernCore
import TernFormats
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Opening stores whose names are Core Data's variants: the real stores of the corpus, and
/// minimal stores that reproduce each variant (`docs/SQLiteStore.md`, "Names").
@Suite struct StoreNameMappingTests {
    // MARK: - Real stores

    /// Every corpus store with a model cache opens through it, and each entity's count is its
    /// rows in the entity's table.
    @Test(arguments: CorpusStore.all)
    func opensThroughItsModelCache(_ corpus: CorpusStore) async throws {
        let folder = try TemporaryDirectory()
        let url = try corpus.copy(into: folder)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        guard (try? raw.readModelCache()) != nil else { return }
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        for layout in store.schema.entities.values {
            let rows = try raw.fetchValue(
                "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE Z_ENT = \(layout.number)")
            #expect(try await store.count(of: layout.name) == Int(rows?.int64 ?? -1), "\(corpus) \(layout.name)")
        }
    }

    func open(_ path: String, in folder: TemporaryDirectory) throws -> SQLiteStore {
        let item = try #require(try RealWorldCorpus.items(of: .store).first { $0.description == path })
        return try SQLiteStore(at: CorpusStore(item: item).copy(into: folder), configuration: .readOnly)
    }

    /// DuckDuckGo's bookmarks: the reflexive many-to-many `favorites` ↔ `favoriteFolders` is in
    /// `Z_1FAVORITES`, named by `favorites` (the later name), ordered by `Z_FOK_1FAVORITES`.
    @Test(arguments: [
        "duckduckgo__BrowserServicesKit/Bookmarks_V4.sqlite", "duckduckgo__BrowserServicesKit/Bookmarks_V5.sqlite",
    ])
    func readsTheFavoritesOfDuckDuckGosBookmarks(_ path: String) async throws {
        let folder = try TemporaryDirectory()
        let store = try open(path, in: folder)
        let layout = try store.schema.entity(named: "BookmarkEntity")
        #expect(
            layout.toMany(named: "favorites")?.storage
                == .joinTable(
                    table: "Z_1FAVORITES", sourceColumn: "Z_1FAVORITEFOLDERS", destinationColumn: "Z_1FAVORITES",
                    orderColumn: "Z_FOK_1FAVORITES"))
        var rows: [StoreRow] = []
        for try await batch in store.batches(of: "BookmarkEntity", size: 100) { rows += batch }
        #expect(rows.count == 10)
        let uuid = { (row: StoreRow) -> String? in
            if case .string(let text)? = row.attributes["uuid"] { return text }
            return nil
        }
        let root = try #require(rows.first { uuid($0) == "favorites_root" })
        let favorites = try #require(root.toMany["favorites"])
        let byKey = Dictionary(uniqueKeysWithValues: rows.map { ($0.reference, $0) })
        // In the order of Z_FOK_1FAVORITES, as the app saved them.
        #expect(favorites.compactMap { byKey[$0].flatMap(uuid) } == ["5", "4", "33", "32", "2"])
        for favorite in favorites { #expect(byKey[favorite]?.toMany["favoriteFolders"] == [root.reference]) }
        #expect(rows.filter { $0.toMany["favoriteFolders"]?.isEmpty == false }.count == 5)
    }

    /// Pulse's log: `LoggerMessageEntity.metadata`, a to-many without an inverse, is the foreign
    /// key `Z1METADATA` in the metadata's table.
    @Test func readsPulsesMessagesAndTheirMetadata() async throws {
        let folder = try TemporaryDirectory()
        let store = try open("kean__Pulse/logs-package.pulse/logs.sqlite", in: folder)
        let layout = try store.schema.entity(named: "LoggerMessageEntity")
        #expect(
            layout.toMany(named: "metadata")?.storage
                == .inverseForeignKey(
                    table: "ZLOGGERMETADATAENTITY", column: "Z1METADATA", orderColumn: nil))
        var messages: [StoreRow] = []
        for try await batch in store.batches(of: "LoggerMessageEntity", size: 10) { messages += batch }
        #expect(messages.count == 23)
        // The log holds no metadata: each message's is empty.
        #expect(messages.allSatisfy { ($0.toMany["metadata"] ?? []).isEmpty })
        #expect(try await store.count(of: "LoggerMetadataEntity") == 0)
    }

    /// CartKit: the same for `CDCartItem.modifiers` (`Z2MODIFIERS`) and SwiftData's
    /// `CartModel.items` and `CartItemModel.modifiers` (`Z3ITEMS`, `Z1MODIFIERS`).
    @Test func mapsCartKitsToManyWithoutInverse() async throws {
        let folder = try TemporaryDirectory()
        let coreData = try open("Karim-ezzedine__CartKit/LegacyCoreData/CartStorage_v1.sqlite", in: folder)
        #expect(
            try coreData.schema.entity(named: "CDCartItem").toMany(named: "modifiers")?.storage
                == .inverseForeignKey(
                    table: "ZCDCARTITEMMODIFIER", column: "Z2MODIFIERS", orderColumn: nil))
        let swiftData = try open("Karim-ezzedine__CartKit/LegacySwiftData/CartKitSwiftData_v1.sqlite", in: folder)
        #expect(
            try swiftData.schema.entity(named: "CartModel").toMany(named: "items")?.storage
                == .inverseForeignKey(
                    table: "ZCARTITEMMODEL", column: "Z3ITEMS", orderColumn: nil))
        #expect(
            try swiftData.schema.entity(named: "CartItemModel").toMany(named: "modifiers")?.storage
                == .inverseForeignKey(
                    table: "ZCARTITEMMODIFIERMODEL", column: "Z1MODIFIERS", orderColumn: nil))
    }

    // MARK: - Minimal stores

    /// A folder with `favorites`, reflexive and ordered, as DuckDuckGo's model has it.
    static let bookmarks = ManagedObjectModel(entities: [
        EntityDescription(
            name: "Bookmark", attributes: [AttributeDescription(name: "title", type: .string)],
            relationships: [
                RelationshipDescription(
                    name: "favoriteFolders", destination: "Bookmark", inverse: "favorites", toMany: true),
                RelationshipDescription(
                    name: "favorites", destination: "Bookmark", inverse: "favoriteFolders", toMany: true, ordered: true),
            ])
    ])

    /// A store of a model with a root folder holding two favorites, in that order.
    func bookmarkStore(in folder: TemporaryDirectory) async throws -> (URL, [RowReference]) {
        let url = folder.path("bookmarks.sqlite")
        let store = try SQLiteStore(at: url, model: Self.bookmarks)
        let refs = try await store.newPrimaryKeys(forEntity: "Bookmark", count: 3).map {
            RowReference(entityName: "Bookmark", primaryKey: $0)
        }
        try await store.save(
            StoreChangeSet(inserted: [
                StoreRow(
                    reference: refs[0], attributes: ["title": .string("root")],
                    toMany: ["favorites": [refs[2], refs[1]]]),
                StoreRow(reference: refs[1], toMany: ["favoriteFolders": [refs[0]]]),
                StoreRow(reference: refs[2], toMany: ["favoriteFolders": [refs[0]]]),
            ]))
        return (url, refs)
    }

    @Test func createsTheReflexiveJoinTableAsCoreData() async throws {
        let folder = try TemporaryDirectory()
        let (url, _) = try await bookmarkStore(in: folder)
        let shape = try StoreTableNames(Connection(path: url.path, configuration: .readOnly))
        #expect(shape.tables["Z_1FAVORITES"] == ["Z_1FAVORITEFOLDERS", "Z_1FAVORITES", "Z_FOK_1FAVORITES"])
    }

    /// A store whose join table the other side names (as Tern named it before) opens, both sides
    /// read right, and writes go to that table.
    @Test func acceptsTheJoinTableNamedByTheOtherSide() async throws {
        let folder = try TemporaryDirectory()
        let (url, refs) = try await bookmarkStore(in: folder)
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.execute("ALTER TABLE Z_1FAVORITES RENAME TO Z_1FAVORITEFOLDERS")
        let store = try SQLiteStore(at: url, model: Self.bookmarks)
        #expect(
            try store.schema.entity(named: "Bookmark").toMany(named: "favoriteFolders")?.storage
                == .joinTable(
                    table: "Z_1FAVORITEFOLDERS", sourceColumn: "Z_1FAVORITES", destinationColumn: "Z_1FAVORITEFOLDERS",
                    orderColumn: nil))
        let rows = try await store.rows(for: refs)
        #expect(rows[0].toMany["favorites"] == [refs[2], refs[1]])
        #expect(rows[1].toMany["favoriteFolders"] == [refs[0]])
        var root = rows[0]
        root.toMany["favorites"] = [refs[1]]
        var dropped = rows[2]
        dropped.toMany["favoriteFolders"] = []
        try await store.save(StoreChangeSet(updated: [root, dropped]))
        #expect(try await store.rows(for: [refs[0]]).first?.toMany["favorites"] == [refs[1]])
    }

    /// Two subentities with a `text` attribute share `ZTEXT` and `ZTEXT1`; a store that numbered
    /// them otherwise still maps, each onto a column no other property took.
    @Test func acceptsOtherNumericSuffixes() throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Message"),
            EntityDescription(
                name: "Note", parent: "Message", attributes: [AttributeDescription(name: "text", type: .string)]),
            EntityDescription(
                name: "Text", parent: "Message", attributes: [AttributeDescription(name: "text", type: .string)]),
        ])
        let numbers = StoreSchema.assignedNumbers(for: model)
        let columns = { (names: [String]) in ["ZMESSAGE": Set(["Z_PK", "Z_ENT", "Z_OPT"] + names)] }
        let exact = try StoreSchema(model: model, numbers: numbers, actualColumns: columns(["ZTEXT", "ZTEXT1"]))
        #expect(try exact.entity(named: "Text").attribute(named: "text")?.column == "ZTEXT1")
        let other = try StoreSchema(model: model, numbers: numbers, actualColumns: columns(["ZTEXT", "ZTEXT2"]))
        #expect(try other.entity(named: "Note").attribute(named: "text")?.column == "ZTEXT")
        #expect(try other.entity(named: "Text").attribute(named: "text")?.column == "ZTEXT2")
        let error = try #require(throws: TernError.self) {
            try StoreSchema(model: model, numbers: numbers, actualColumns: columns(["ZTEXT"]))
        }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Text.text") && error.message.contains("ZTEXT1"))
    }

    /// Join columns are told apart across join tables, in the order the tables are named:
    /// tripaccount's `Z_4TRAVELS (Z_4CURRENCIES1, Z_9TRAVELS)` after `Z_3CURRENCIES (…, Z_4CURRENCIES)`.
    @Test func suffixesJoinColumnsAcrossJoinTables() throws {
        let many = { (name: String, destination: String, inverse: String) in
            RelationshipDescription(name: name, destination: destination, inverse: inverse, toMany: true)
        }
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Country", relationships: [many("currencies", "Currency", "countries")]),
            EntityDescription(
                name: "Currency",
                relationships: [many("countries", "Country", "currencies"), many("travels", "Travel", "currencies")]),
            EntityDescription(name: "Rate", relationships: [many("travels", "Travel", "rates")]),
            EntityDescription(
                name: "Travel",
                relationships: [many("currencies", "Currency", "travels"), many("rates", "Rate", "travels")]),
        ])
        let schema = try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model))
        #expect(schema.joinTables["Z_1CURRENCIES"]?.columns == ["Z_1COUNTRIES", "Z_2CURRENCIES"])
        #expect(schema.joinTables["Z_2TRAVELS"]?.columns == ["Z_2CURRENCIES1", "Z_4TRAVELS"])
        #expect(schema.joinTables["Z_3TRAVELS"]?.columns == ["Z_3RATES", "Z_4TRAVELS1"])
        #expect(
            try schema.entity(named: "Travel").toMany(named: "currencies")?.storage
                == .joinTable(
                    table: "Z_2TRAVELS", sourceColumn: "Z_4TRAVELS", destinationColumn: "Z_2CURRENCIES1",
                    orderColumn: nil))
        // A store without the suffix (as Tern wrote before) maps too.
        var actual = [
            "ZCOUNTRY": ["Z_PK"], "ZCURRENCY": ["Z_PK"], "ZRATE": ["Z_PK"], "ZTRAVEL": ["Z_PK"],
            "Z_1CURRENCIES": ["Z_1COUNTRIES", "Z_2CURRENCIES"], "Z_2TRAVELS": ["Z_2CURRENCIES", "Z_4TRAVELS"],
            "Z_3TRAVELS": ["Z_3RATES", "Z_4TRAVELS"],
        ].mapValues { Set($0 + ["Z_ENT", "Z_OPT"]) }
        let unsuffixed = try StoreSchema(
            model: model, numbers: StoreSchema.assignedNumbers(for: model), actualColumns: actual)
        #expect(unsuffixed.joinTables["Z_3TRAVELS"]?.columns == ["Z_3RATES", "Z_4TRAVELS"])
        actual["Z_3TRAVELS"] = ["Z_3RATES"]
        let error = try #require(throws: TernError.self) {
            try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model), actualColumns: actual)
        }
        #expect(error.message.contains("Rate.travels") && error.message.contains("Z_4TRAVELS1"))
    }

    /// The entity's name, not its number, decides which side names a join table: apptentive's
    /// `Z_5DISPLAYTYPES (Z_5MESSAGES, Z_2DISPLAYTYPES)`, ATMessage (a subentity, numbered after
    /// ATMessageDisplayType) over ATMessageDisplayType.
    @Test func theEntityNameSortingFirstNamesTheJoinTable() throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "ATMessageDisplayType",
                relationships: [
                    RelationshipDescription(
                        name: "messages", destination: "ATMessage", inverse: "displayTypes", toMany: true)
                ]),
            EntityDescription(name: "ATRecord", isAbstract: true),
            EntityDescription(
                name: "ATMessage", parent: "ATRecord",
                relationships: [
                    RelationshipDescription(
                        name: "displayTypes", destination: "ATMessageDisplayType", inverse: "messages", toMany: true)
                ]),
        ])
        let numbers = StoreSchema.assignedNumbers(for: model)
        #expect(numbers["ATMessage"]?.number == 3)
        let schema = try StoreSchema(model: model, numbers: numbers)
        #expect(schema.joinTables.mapValues(\.columns) == ["Z_3DISPLAYTYPES": ["Z_3MESSAGES", "Z_1DISPLAYTYPES"]])
        #expect(
            try schema.entity(named: "ATMessageDisplayType").toMany(named: "messages")?.storage
                == .joinTable(
                    table: "Z_3DISPLAYTYPES", sourceColumn: "Z_1DISPLAYTYPES", destinationColumn: "Z_3MESSAGES",
                    orderColumn: nil))
    }

    /// A log whose messages list their metadata, without an inverse.
    static let log = ManagedObjectModel(entities: [
        EntityDescription(
            name: "Message", attributes: [AttributeDescription(name: "text", type: .string)],
            relationships: [RelationshipDescription(name: "metadata", destination: "Metadata", toMany: true)]),
        EntityDescription(name: "Metadata", attributes: [AttributeDescription(name: "key", type: .string)]),
    ])

    @Test func keepsAToManyWithoutInverseInItsDestinationsTable() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("log.sqlite")
        let store = try SQLiteStore(at: url, model: Self.log)
        let shape = try StoreTableNames(Connection(path: url.path, configuration: .readOnly))
        #expect(
            shape.tables == [
                "ZMESSAGE": ["Z_PK", "Z_ENT", "Z_OPT", "ZTEXT"],
                "ZMETADATA": ["Z_PK", "Z_ENT", "Z_OPT", "Z1METADATA", "ZKEY"],
            ])
        let message = RowReference(
            entityName: "Message", primaryKey: try await store.newPrimaryKeys(forEntity: "Message", count: 1)[0])
        let items = try await store.newPrimaryKeys(forEntity: "Metadata", count: 2).map {
            RowReference(entityName: "Metadata", primaryKey: $0)
        }
        try await store.save(
            StoreChangeSet(
                inserted: [
                    StoreRow(reference: message, toMany: ["metadata": items])
                ] + items.map { StoreRow(reference: $0, attributes: ["key": .string("k")]) }))
        #expect(try await store.rows(for: [message]).first?.toMany["metadata"] == items)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        #expect(
            try raw.fetchValue("SELECT COUNT(*) FROM ZMETADATA WHERE Z1METADATA = \(message.primaryKey)") == .integer(2)
        )
    }

    /// A store that keeps a to-many without an inverse in a join table (as Tern wrote before)
    /// opens and reads it.
    @Test func acceptsAToManyWithoutInverseInAJoinTable() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("log.sqlite")
        _ = try SQLiteStore(at: url, model: Self.log)
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.execute("DROP INDEX ZMETADATA_Z1METADATA_INDEX")
        try connection.execute("ALTER TABLE ZMETADATA DROP COLUMN Z1METADATA")
        try connection.execute(
            "CREATE TABLE Z_1METADATA ( Z_1METADATA INTEGER, Z_2METADATA INTEGER, PRIMARY KEY (Z_1METADATA, Z_2METADATA) )"
        )
        try connection.execute("INSERT INTO ZMESSAGE (Z_PK, Z_ENT, Z_OPT, ZTEXT) VALUES (1, 1, 1, 'hello')")
        try connection.execute("INSERT INTO ZMETADATA (Z_PK, Z_ENT, Z_OPT, ZKEY) VALUES (1, 2, 1, 'a'), (2, 2, 1, 'b')")
        try connection.execute("INSERT INTO Z_1METADATA VALUES (1, 2), (1, 1)")
        let store = try SQLiteStore(at: url, model: Self.log, configuration: .readOnly)
        let message = RowReference(entityName: "Message", primaryKey: 1)
        #expect(
            try await store.rows(for: [message]).first?.toMany["metadata"]
                == [1, 2].map {
                    RowReference(entityName: "Metadata", primaryKey: $0)
                })
        // With neither, the message names the relationship and both forms looked for.
        try connection.execute("DROP TABLE Z_1METADATA")
        let error = try #require(throws: TernError.self) {
            try SQLiteStore(at: url, model: Self.log, configuration: .readOnly)
        }
        #expect(error.code == .schemaMismatch)
        #expect(
            error.message.contains("Message.metadata") && error.message.contains("Z1METADATA")
                && error.message.contains("Z_1METADATA"))
    }
}
