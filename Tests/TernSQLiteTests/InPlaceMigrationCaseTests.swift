import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// One inferred change between two versions, with objects of the first version.
struct InferredCase: CustomTestStringConvertible, Sendable {
    var name: String
    var versions: @Sendable () throws -> VersionedModel
    var rows: [StoreRow]
    /// Whether the in-place planner handles the change (else the automatic strategy rebuilds it).
    var runsInPlace = true

    var testDescription: String { name }

    static func ref(_ entity: String, _ key: Int) -> RowReference {
        RowReference(entityName: entity, primaryKey: Int64(key))
    }

    static func row(
        _ entity: String, _ key: Int, version: Int64 = 1, _ attributes: [String: AttributeValue] = [:],
        toOne: [String: RowReference] = [:], toMany: [String: [RowReference]] = [:]
    ) -> StoreRow {
        StoreRow(reference: ref(entity, key), version: version, attributes: attributes, toOne: toOne, toMany: toMany)
    }

    static func pair(@VersionBuilder _ body: @Sendable @escaping () -> [ModelVersion])
        -> @Sendable () throws -> VersionedModel
    {
        { try VersionedModel("Case", body) }
    }
}

/// The inferred changes of the inference tests, each migrated in place and beside the store.
@Suite struct InPlaceMigrationCaseTests {
    static let cases: [InferredCase] = [
        InferredCase(
            name: "add and remove entities and properties, entity numbers shift",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Attribute("notes", .string).indexed()
                        Relationship("book", to: "Book", inverse: "recipes")
                    }
                    Entity("Book") { Relationship("recipes", to: "Recipe", inverse: "book").toMany() }
                    Entity("Shelf") { Attribute("label", .string) }
                }
                ModelVersion("v2") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Attribute("servings", .integer16).required().default(.integer(2))
                        Relationship("tags", to: "Tag", inverse: "recipes").toMany()
                    }
                    Entity("Tag") {
                        Attribute("name", .string)
                        Relationship("recipes", to: "Recipe", inverse: "tags").toMany()
                    }
                }
            },
            rows: [
                InferredCase.row("Book", 1, toMany: ["recipes": [InferredCase.ref("Recipe", 1)]]),
                InferredCase.row(
                    "Recipe", 1, version: 4, ["title": .string("Soup"), "notes": .string("hot")],
                    toOne: ["book": InferredCase.ref("Book", 1)]),
                InferredCase.row("Recipe", 3, ["title": .string("Tea")]),
                InferredCase.row("Shelf", 1, ["label": .string("top")]),
            ]),
        InferredCase(
            name: "rename an entity and its attributes",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Recipe") {
                        Attribute("title", .string).indexed()
                        Attribute("minutes", .integer16)
                    }
                }
                ModelVersion("v2") {
                    Entity("Dish") {
                        Attribute("heading", .string).renamed(from: "title").indexed()
                        Attribute("minutes", .integer16)
                    }.renamed(from: "Recipe")
                }
            },
            rows: [InferredCase.row("Recipe", 2, ["title": .string("Soup"), "minutes": .integer(5)])]),
        InferredCase(
            name: "optional becomes required with a default, required becomes optional",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Item") {
                        Attribute("count", .integer32)
                        Attribute("label", .string).required().default(.string("none"))
                    }
                }
                ModelVersion("v2") {
                    Entity("Item") {
                        Attribute("count", .integer32).required().default(.integer(7))
                        Attribute("label", .string)
                    }
                }
            },
            rows: [
                InferredCase.row("Item", 1, ["count": .integer(3), "label": .string("a")]),
                InferredCase.row("Item", 2, ["label": .string("b")]),
            ]),
        InferredCase(
            name: "one-to-one becomes one-to-many, to-many becomes ordered",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Relationship("photo", to: "Photo", inverse: "recipe")
                        Relationship("steps", to: "Step", inverse: "recipe").toMany()
                    }
                    Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
                    Entity("Step") {
                        Attribute("text", .string)
                        Relationship("recipe", to: "Recipe", inverse: "steps")
                    }
                }
                ModelVersion("v2") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Relationship("photo", to: "Photo", inverse: "recipe").toMany()
                        Relationship("steps", to: "Step", inverse: "recipe").toMany(ordered: true)
                    }
                    Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
                    Entity("Step") {
                        Attribute("text", .string)
                        Relationship("recipe", to: "Recipe", inverse: "steps")
                    }
                }
            },
            rows: InPlaceMigrationCaseTests.recipeWithSteps(ordered: false)),
        InferredCase(
            name: "ordered to-many becomes unordered",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Relationship("photo", to: "Photo", inverse: "recipe")
                        Relationship("steps", to: "Step", inverse: "recipe").toMany(ordered: true)
                    }
                    Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
                    Entity("Step") {
                        Attribute("text", .string)
                        Relationship("recipe", to: "Recipe", inverse: "steps")
                    }
                }
                ModelVersion("v2") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Relationship("photo", to: "Photo", inverse: "recipe")
                        Relationship("steps", to: "Step", inverse: "recipe").toMany()
                    }
                    Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
                    Entity("Step") {
                        Attribute("text", .string)
                        Relationship("recipe", to: "Recipe", inverse: "steps")
                    }
                }
            },
            rows: InPlaceMigrationCaseTests.recipeWithSteps(ordered: true)),
        InferredCase(
            name: "many-to-one becomes many-to-many",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Person") {
                        Attribute("name", .string)
                        Relationship("team", to: "Team", inverse: "members")
                    }
                    Entity("Team") {
                        Attribute("name", .string)
                        Relationship("members", to: "Person", inverse: "team").toMany()
                    }
                }
                ModelVersion("v2") {
                    Entity("Person") {
                        Attribute("name", .string)
                        Relationship("team", to: "Team", inverse: "members").toMany()
                    }
                    Entity("Team") {
                        Attribute("name", .string)
                        Relationship("members", to: "Person", inverse: "team").toMany()
                    }
                }
            },
            rows: [
                InferredCase.row(
                    "Team", 1, ["name": .string("red")],
                    toMany: ["members": [InferredCase.ref("Person", 1), InferredCase.ref("Person", 3)]]),
                InferredCase.row("Team", 2, ["name": .string("blue")]),
                InferredCase.row("Person", 1, ["name": .string("Ada")], toOne: ["team": InferredCase.ref("Team", 1)]),
                InferredCase.row("Person", 2, ["name": .string("Bob")]),
                InferredCase.row("Person", 3, ["name": .string("Cy")], toOne: ["team": InferredCase.ref("Team", 1)]),
            ]),
        InferredCase(
            name: "numbers widen",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Sample") {
                        Attribute("a", .integer16)
                        Attribute("b", .integer32)
                        Attribute("c", .float)
                        Attribute("d", .integer32)
                        Attribute("e", .integer64)
                    }
                }
                ModelVersion("v2") {
                    Entity("Sample") {
                        Attribute("a", .integer32)
                        Attribute("b", .integer64)
                        Attribute("c", .double)
                        Attribute("d", .double)
                        Attribute("e", .decimal)
                    }
                }
            },
            rows: [
                InferredCase.row(
                    "Sample", 1,
                    ["a": .integer(-3), "b": .integer(1 << 30), "c": .double(0.5), "d": .integer(7), "e": .integer(12)]),
                InferredCase.row("Sample", 2, ["d": .integer(-1)]),
            ]),
        InferredCase(
            name: "entities and properties move in the tree",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Car") {
                        Attribute("wheels", .integer16)
                        Attribute("spoiler", .string)
                    }
                    Entity("SportCar", parent: "Car") { Attribute("topSpeed", .double) }
                }
                ModelVersion("v2") {
                    Entity("Vehicle") { Attribute("wheels", .integer16) }.abstract()
                    Entity("Car", parent: "Vehicle")
                    Entity("SportCar", parent: "Vehicle") {
                        Attribute("spoiler", .string)
                        Attribute("topSpeed", .double)
                    }
                }
            },
            rows: [
                InferredCase.row("Car", 1, ["wheels": .integer(4), "spoiler": .string("lost")]),
                InferredCase.row(
                    "SportCar", 2, version: 3,
                    ["wheels": .integer(4), "spoiler": .string("big"), "topSpeed": .double(300)]),
                InferredCase.row("Car", 5, ["wheels": .integer(3)]),
            ]),
        InferredCase(
            name: "a subentity moves to the root",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Car") { Attribute("wheels", .integer16) }
                    Entity("SportCar", parent: "Car") { Attribute("topSpeed", .double) }
                    Entity("Truck", parent: "Car") { Attribute("load", .double) }
                }
                ModelVersion("v2") {
                    Entity("Car") { Attribute("wheels", .integer16) }
                    Entity("SportCar") {
                        Attribute("wheels", .integer16)
                        Attribute("topSpeed", .double)
                    }
                    Entity("Truck", parent: "Car") { Attribute("load", .double) }
                }
            },
            rows: [
                InferredCase.row("Car", 1, ["wheels": .integer(4)]),
                InferredCase.row("SportCar", 2, ["wheels": .integer(4), "topSpeed": .double(280)]),
                InferredCase.row("Truck", 3, ["wheels": .integer(6), "load": .double(12)]),
            ]),
        InferredCase(
            name: "a derived count is new, another derived attribute is new, a column is dropped, a default declared",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Book") {
                        Attribute("title", .string)
                        Attribute("isbn", .string).indexed()
                        Relationship("pages", to: "Page", inverse: "book").toMany()
                    }
                    Entity("Page") {
                        Attribute("number", .integer32)
                        Relationship("book", to: "Book", inverse: "pages")
                    }
                }
                ModelVersion("v2") {
                    Entity("Book") {
                        Attribute("title", .string)
                        Attribute("pageCount", .integer64).derived(from: "pages.@count")
                        Attribute("stamp", .date).derived(from: "now()")
                        Attribute("edition", .integer16).default(.integer(1))
                        Relationship("pages", to: "Page", inverse: "book").toMany()
                    }
                    Entity("Page") {
                        Attribute("number", .integer32)
                        Relationship("book", to: "Book", inverse: "pages")
                    }
                }
            },
            rows: [
                InferredCase.row(
                    "Book", 1, ["title": .string("A"), "isbn": .string("1")],
                    toMany: ["pages": [1, 2, 5].map { InferredCase.ref("Page", $0) }]),
                InferredCase.row("Book", 2, ["title": .string("B")]),
                InferredCase.row("Book", 4, ["title": .string("C")], toMany: ["pages": [InferredCase.ref("Page", 3)]]),
                InferredCase.row("Page", 1, ["number": .integer(1)], toOne: ["book": InferredCase.ref("Book", 1)]),
                InferredCase.row("Page", 2, ["number": .integer(2)], toOne: ["book": InferredCase.ref("Book", 1)]),
                InferredCase.row("Page", 3, ["number": .integer(1)], toOne: ["book": InferredCase.ref("Book", 4)]),
                InferredCase.row("Page", 4, ["number": .integer(9)]),
                InferredCase.row("Page", 5, ["number": .integer(3)], toOne: ["book": InferredCase.ref("Book", 1)]),
            ]),
        InferredCase(
            name: "a many-to-many becomes ordered, an ordered many-to-many is renumbered",
            versions: InferredCase.pair {
                ModelVersion("v1") {
                    Entity("Playlist") {
                        Attribute("name", .string)
                        Relationship("songs", to: "Song", inverse: "playlists").toMany()
                    }
                    Entity("Song") {
                        Attribute("title", .string)
                        Relationship("playlists", to: "Playlist", inverse: "songs").toMany()
                        Relationship("writers", to: "Writer", inverse: "songs").toMany(ordered: true)
                    }
                    Entity("Writer") {
                        Attribute("name", .string)
                        Relationship("songs", to: "Song", inverse: "writers").toMany()
                    }
                }
                ModelVersion("v2") {
                    Entity("Label") { Attribute("name", .string) }
                    Entity("Playlist") {
                        Attribute("name", .string)
                        Relationship("songs", to: "Song", inverse: "playlists").toMany(ordered: true)
                    }
                    Entity("Song") {
                        Attribute("title", .string)
                        Relationship("playlists", to: "Playlist", inverse: "songs").toMany()
                        Relationship("writers", to: "Writer", inverse: "songs").toMany(ordered: true)
                    }
                    Entity("Writer") {
                        Attribute("name", .string)
                        Relationship("songs", to: "Song", inverse: "writers").toMany()
                    }
                }
            },
            rows: InPlaceMigrationCaseTests.playlists),
        InferredCase(
            name: "a string default with a quote is declared, an optional one is left empty",
            versions: InferredCase.pair {
                ModelVersion("v1") { Entity("Note") { Attribute("text", .string) } }
                ModelVersion("v2") {
                    Entity("Note") {
                        Attribute("text", .string)
                        Attribute("author", .string).default(.string("it's me -- 'quoted'"))
                        Attribute("rank", .integer64).default(.integer(-4))
                    }
                }
            },
            rows: [InferredCase.row("Note", 1, ["text": .string("a")]), InferredCase.row("Note", 3)]),
    ]

    static let playlists: [StoreRow] = {
        func refs(_ entity: String, _ keys: [Int]) -> [RowReference] { keys.map { InferredCase.ref(entity, $0) } }
        return [
            InferredCase.row("Playlist", 1, ["name": .string("mix")], toMany: ["songs": refs("Song", [3, 1, 2])]),
            InferredCase.row("Playlist", 2, ["name": .string("calm")], toMany: ["songs": refs("Song", [2])]),
            InferredCase.row(
                "Song", 1, ["title": .string("one")],
                toMany: ["playlists": refs("Playlist", [1]), "writers": refs("Writer", [2, 1])]),
            InferredCase.row(
                "Song", 2, ["title": .string("two")],
                toMany: ["playlists": refs("Playlist", [1, 2]), "writers": refs("Writer", [1])]),
            InferredCase.row("Song", 3, ["title": .string("three")], toMany: ["playlists": refs("Playlist", [1])]),
            InferredCase.row("Writer", 1, ["name": .string("Ann")], toMany: ["songs": refs("Song", [1, 2])]),
            InferredCase.row("Writer", 2, ["name": .string("Ben")], toMany: ["songs": refs("Song", [1])]),
        ]
    }()

    static func recipeWithSteps(ordered: Bool) -> [StoreRow] {
        let steps = [3, 1, 2].map { InferredCase.ref("Step", $0) }
        return [
            InferredCase.row(
                "Recipe", 1, ["title": .string("Soup")],
                toOne: ["photo": InferredCase.ref("Photo", 1)], toMany: ["steps": steps]),
            InferredCase.row("Recipe", 2, ["title": .string("Tea")]),
            InferredCase.row("Photo", 1, toOne: ["recipe": InferredCase.ref("Recipe", 1)]),
            InferredCase.row("Photo", 2),
            InferredCase.row("Step", 1, ["text": .string("boil")], toOne: ["recipe": InferredCase.ref("Recipe", 1)]),
            InferredCase.row("Step", 2, ["text": .string("serve")], toOne: ["recipe": InferredCase.ref("Recipe", 1)]),
            InferredCase.row("Step", 3, ["text": .string("chop")], toOne: ["recipe": InferredCase.ref("Recipe", 1)]),
            InferredCase.row("Step", 4, ["text": .string("spare")]),
        ]
    }

    @Test(arguments: cases)
    func inferredChangeInPlaceEqualsRebuild(_ change: InferredCase) async throws {
        let versions = try change.versions()
        #expect(MappingInference(from: versions.versions[0].model, to: versions.versions[1].model).isInferable)
        let directory = try TemporaryDirectory()
        let url = directory.path("Case.sqlite")
        try await MigrationStores.make(at: url, model: versions.versions[0].model, rows: change.rows)
        try await InPlaceMigrationTests.compare(url, model: versions, expectInPlace: change.runsInPlace)
    }

    /// A store of the case whose name starts with `prefix`, migrated in place; its URL and destination model.
    static func migratedInPlace(_ prefix: String, in directory: TemporaryDirectory) async throws -> (
        URL, ManagedObjectModel
    ) {
        let change = try #require(cases.first { $0.name.hasPrefix(prefix) })
        let versions = try change.versions()
        let url = directory.path("Case.sqlite")
        try await MigrationStores.make(at: url, model: versions.versions[0].model, rows: change.rows)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: versions, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        return (url, versions.versions[1].model)
    }

    @Test func orderedManyToManyRelationshipsHaveTheirOrderAfterMigratingInPlace() async throws {
        let directory = try TemporaryDirectory()
        let (url, model) = try await Self.migratedInPlace("a many-to-many becomes ordered", in: directory)
        func keys(_ rows: [StoreRow], _ name: String) -> [[Int64]] {
            rows.map { ($0.toMany[name] ?? []).map(\.primaryKey) }
        }
        let playlists = try await MigrationStores.rows(of: "Playlist", at: url, model: model)
        #expect(playlists.map { $0.attributes["name"] } == [.string("mix"), .string("calm")])
        // Unordered before: the new order is the keys' order, as a rebuild gives.
        #expect(keys(playlists, "songs") == [[1, 2, 3], [2]])
        let songs = try await MigrationStores.rows(of: "Song", at: url, model: model)
        #expect(songs.map { $0.attributes["title"] } == [.string("one"), .string("two"), .string("three")])
        #expect(keys(songs, "writers") == [[2, 1], [1], []])
        #expect(keys(songs, "playlists") == [[1], [1, 2], [1]])
        let writers = try await MigrationStores.rows(of: "Writer", at: url, model: model)
        #expect(keys(writers, "songs") == [[1, 2], [1]])
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let positions = try connection.fetchAll(
            "SELECT Z_FOK_3SONGS FROM Z_2SONGS WHERE Z_2PLAYLISTS = 1 ORDER BY Z_3SONGS")
        #expect(positions.map { $0[0].int64 } == [1024, 2048, 3072])
    }

    @Test func aNewDerivedCountHoldsEachObjectsCountAndKeepsCounting() async throws {
        let directory = try TemporaryDirectory()
        let (url, model) = try await Self.migratedInPlace("a derived count is new", in: directory)
        let books = try await MigrationStores.rows(of: "Book", at: url, model: model)
        #expect(books.map(\.reference.primaryKey) == [1, 2, 4])
        #expect(books.map { $0.attributes["title"] } == [.string("A"), .string("B"), .string("C")])
        #expect(books.map { $0.attributes["pageCount"] } == [.integer(3), .integer(0), .integer(1)])
        #expect(books.map { $0.attributes["edition"] } == [.integer(1), .integer(1), .integer(1)])
        #expect(books.allSatisfy { $0.attributes["stamp"] == nil && $0.attributes["isbn"] == nil })
        let pages = try await MigrationStores.rows(of: "Page", at: url, model: model)
        #expect(pages.map { $0.attributes["number"] } == [1, 2, 1, 9, 3].map { Optional(AttributeValue.integer($0)) })
        #expect(pages.map { $0.toOne["book"]?.primaryKey } == [1, 1, 4, nil, 1])
        // The count triggers exist again: a new page of book 2 counts.
        let store = try SQLiteStore(at: url, model: model)
        let page = StoreRow(
            reference: InferredCase.ref("Page", 6), attributes: ["number": .integer(1)],
            toOne: ["book": InferredCase.ref("Book", 2)])
        _ = try await store.save(StoreChangeSet(inserted: [page]))
        let counted = try await MigrationStores.rows(of: "Book", at: url, model: model)
        #expect(counted.map { $0.attributes["pageCount"] } == [.integer(3), .integer(1), .integer(1)])
    }
}
