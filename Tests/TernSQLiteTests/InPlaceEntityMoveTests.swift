import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Entities that move under another inheritance root, migrated in place: their objects get new
/// keys in the new root's table, and every reference to them follows.
@Suite struct InPlaceEntityMoveTests {
    /// v1: `Animal` and `Dog` are two roots; v2: `Dog` is a subentity of `Animal` (its `name` moves up).
    static func kennel() throws -> VersionedModel {
        try VersionedModel("Kennel") {
            for (version, moved) in [("v1", false), ("v2", true)] {
                ModelVersion(version) {
                    Entity("Animal") {
                        Attribute("name", .string)
                        Relationship("fans", to: "Keeper", inverse: "best").toMany()
                    }
                    Entity("Dog", parent: moved ? "Animal" : nil) {
                        if !moved { Attribute("name", .string) }
                        Attribute("bark", .string)
                        Relationship("walker", to: "Keeper", inverse: "dogs")
                        Relationship("toys", to: "Toy", inverse: "dogs").toMany()
                        Relationship("puppies", to: "Puppy", inverse: "mother").toMany(ordered: true)
                    }
                    Entity("Keeper") {
                        Attribute("name", .string)
                        Relationship("dogs", to: "Dog", inverse: "walker").toMany()
                        Relationship("best", to: "Animal", inverse: "fans")
                    }
                    Entity("Toy") {
                        Attribute("name", .string)
                        Relationship("dogs", to: "Dog", inverse: "toys").toMany()
                    }
                    Entity("Puppy") {
                        Attribute("name", .string)
                        Relationship("mother", to: "Dog", inverse: "puppies")
                    }
                }
            }
        }
    }

    static func ref(_ entity: String, _ key: Int) -> RowReference {
        RowReference(entityName: entity, primaryKey: Int64(key))
    }

    static func refs(_ entity: String, _ keys: [Int]) -> [RowReference] { keys.map { ref(entity, $0) } }

    /// Animals 1, 2, 3 and dogs 1, 2, 5 (their keys clash), with every kind of reference to the dogs.
    static let rows: [StoreRow] = [
        StoreRow(
            reference: ref("Animal", 1), attributes: ["name": .string("cat")], toMany: ["fans": refs("Keeper", [2])]),
        StoreRow(reference: ref("Animal", 2), version: 3, attributes: ["name": .string("owl")]),
        StoreRow(
            reference: ref("Animal", 3), attributes: ["name": .string("eel")], toMany: ["fans": refs("Keeper", [1])]),
        StoreRow(
            reference: ref("Dog", 1), version: 2, attributes: ["name": .string("rex"), "bark": .string("woof")],
            toOne: ["walker": ref("Keeper", 2)],
            toMany: ["toys": refs("Toy", [1, 2]), "puppies": refs("Puppy", [3, 1])]),
        StoreRow(
            reference: ref("Dog", 2), attributes: ["name": .string("fido")], toOne: ["walker": ref("Keeper", 2)],
            toMany: ["toys": refs("Toy", [2])]),
        StoreRow(
            reference: ref("Dog", 5), attributes: ["name": .string("lassie"), "bark": .string("yip")],
            toOne: ["walker": ref("Keeper", 1)], toMany: ["puppies": refs("Puppy", [2])]),
        StoreRow(
            reference: ref("Keeper", 1), attributes: ["name": .string("ann")], toOne: ["best": ref("Animal", 3)],
            toMany: ["dogs": refs("Dog", [5])]),
        StoreRow(
            reference: ref("Keeper", 2), attributes: ["name": .string("bo")], toOne: ["best": ref("Animal", 1)],
            toMany: ["dogs": refs("Dog", [1, 2])]),
        StoreRow(reference: ref("Toy", 1), attributes: ["name": .string("ball")], toMany: ["dogs": refs("Dog", [1])]),
        StoreRow(
            reference: ref("Toy", 2), attributes: ["name": .string("bone")], toMany: ["dogs": refs("Dog", [1, 2])]),
        StoreRow(reference: ref("Puppy", 1), attributes: ["name": .string("pip")], toOne: ["mother": ref("Dog", 1)]),
        StoreRow(reference: ref("Puppy", 2), attributes: ["name": .string("dot")], toOne: ["mother": ref("Dog", 5)]),
        StoreRow(reference: ref("Puppy", 3), attributes: ["name": .string("bit")], toOne: ["mother": ref("Dog", 1)]),
    ]

    /// Every object of a store as a line naming its values and the names of the objects it refers
    /// to (keys left out: they differ between a rebuild and an in-place migration).
    static func graph(at url: URL, model: ManagedObjectModel) async throws -> [String] {
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        var names: [RowReference: String] = [:]
        var rows: [StoreRow] = []
        for entity in model.entities where !entity.isAbstract {
            let fetched = try await store.fetch(StoreFetchRequest(entityName: entity.name)).filter {
                $0.reference.entityName == entity.name
            }
            for row in fetched { names[row.reference] = row.attributes["name"].map { "\($0)" } ?? "?" }
            rows += fetched
        }
        return rows.map { row in
            let attributes = row.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            let toOne = row.toOne.sorted { $0.key < $1.key }.map {
                "\($0.key)->\($0.value.entityName):\(names[$0.value] ?? "missing")"
            }
            let toMany = row.toMany.sorted { $0.key < $1.key }.map { name, targets in
                var listed = targets.map { "\($0.entityName):\(names[$0] ?? "missing")" }
                if model.relationship(named: name, inEntity: row.reference.entityName)?.isOrdered != true {
                    listed.sort()
                }
                return "\(name)->[\(listed.joined(separator: ","))]"
            }
            return "\(row.reference.entityName) " + (attributes + toOne + toMany).joined(separator: " ")
        }.sorted()
    }

    /// Two copies of a store of `rows` under the model's first version, one migrated in place and
    /// one built beside; checks that each ran so and that both hold the same objects with the same
    /// values and references (``graph(at:model:)``).
    ///
    /// - Returns: The two stores, the reports, and the in-place store's graph.
    static func migrateBothWays(_ model: VersionedModel, rows: [StoreRow], in directory: TemporaryDirectory)
        async throws
        -> (inPlace: URL, rebuilt: URL, report: MigrationReport, beside: MigrationReport, graph: [String])
    {
        let last = try #require(model.versions.last?.model)
        let inPlace = directory.path("InPlace.sqlite")
        let rebuilt = directory.path("Rebuilt.sqlite")
        try await MigrationStores.make(at: inPlace, model: model.versions[0].model, rows: rows)
        try FileManager.default.copyItem(at: inPlace, to: rebuilt)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: inPlace, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let beside = try await SQLiteStoreMigrator().migrateStore(
            at: rebuilt, model: model, options: MigrationOptions(strategy: .rebuild))
        #expect(beside.inPlaceSteps.isEmpty)
        let graph = try await Self.graph(at: inPlace, model: last)
        let rebuiltGraph = try await Self.graph(at: rebuilt, model: last)
        #expect(graph == rebuiltGraph, "\(graph.joined(separator: "\n"))\n---\n\(rebuiltGraph.joined(separator: "\n"))")
        return (inPlace, rebuilt, report, beside, graph)
    }

    @Test func anEntityMovedUnderAnotherRootMigratesInPlaceWithNewKeysAndEveryReference() async throws {
        let model = try Self.kennel()
        let v2 = try #require(model.version(named: "v2")?.model)
        let directory = try TemporaryDirectory()
        let (inPlace, _, report, beside, graph) = try await Self.migrateBothWays(model, rows: Self.rows, in: directory)
        #expect(report.objectsPerStep == beside.objectsPerStep)
        #expect(graph.count == Self.rows.count)
        #expect(
            graph.contains(
                #"Dog bark=string("woof") name=string("rex") walker->Keeper:string("bo") puppies->[Puppy:string("bit"),Puppy:string("pip")] toys->[Toy:string("ball"),Toy:string("bone")]"#
            ))
        #expect(graph.contains(#"Toy name=string("bone") dogs->[Dog:string("fido"),Dog:string("rex")]"#))
        #expect(graph.contains(#"Keeper name=string("ann") best->Animal:string("eel") dogs->[Dog:string("lassie")]"#))

        // Animals keep their keys; dogs follow the animals' largest key, in their own order.
        let animals = try await MigrationStores.rows(of: "Animal", at: inPlace, model: v2)
        #expect(animals.map(\.reference.primaryKey) == [1, 2, 3])
        let dogs = try await MigrationStores.rows(of: "Dog", at: inPlace, model: v2)
        #expect(dogs.map(\.reference.primaryKey) == [4, 5, 8])
        #expect(dogs.map { $0.attributes["name"] } == [.string("rex"), .string("fido"), .string("lassie")])
        let connection = try Connection(path: inPlace.path, configuration: .readOnly)
        let largest = try connection.fetchValue("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Animal'")?.int64
        #expect(largest == 8)
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM sqlite_master WHERE name = 'ZDOG'")?.int64 == 0)
        let verification = try await StoreVerifier.verify(storeAt: inPlace, model: v2)
        #expect(verification.problems.isEmpty, "\(verification.problems)")

        // New objects get keys after every moved one.
        let store = try SQLiteStore(at: inPlace, model: v2)
        #expect(try await store.newPrimaryKeys(forEntity: "Dog", count: 1) == [9])
    }

    @Test func anEmptyStoreWithAMovedEntityMigratesInPlace() async throws {
        let model = try Self.kennel()
        let directory = try TemporaryDirectory()
        let url = directory.path("Kennel.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: [])
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        #expect(report.objectsPerStep == [0])
    }

    @Test func globalIdentitiesFollowTheMovedObjectsToTheirNewKeys() async throws {
        let model = try Self.kennel()
        let directory = try TemporaryDirectory()
        let url = directory.path("Kennel.sqlite")
        var configuration = SQLiteConfiguration()
        configuration.tracksGlobalIdentifiers = true
        let identities: (rex: UUID, cat: UUID)
        do {
            let store = try SQLiteStore(at: url, model: model.versions[0].model, configuration: configuration)
            _ = try await store.save(StoreChangeSet(inserted: Self.rows))
            let rex = try #require(try await store.globalIdentity(of: Self.ref("Dog", 1)))
            let cat = try #require(try await store.globalIdentity(of: Self.ref("Animal", 1)))
            identities = (rex.identifier, cat.identifier)
        }
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let store = try SQLiteStore(at: url, model: try #require(model.version(named: "v2")?.model))
        #expect(try await store.globalIdentity(withIdentifier: identities.rex)?.reference == Self.ref("Dog", 4))
        #expect(try await store.globalIdentity(withIdentifier: identities.cat)?.reference == Self.ref("Animal", 1))
    }

    /// v1: `Dog` and `Cat` are animals; v2: `Dog` is a pet, `Pet` (a root with keys of its own) gains a subentity.
    static func pets() throws -> VersionedModel {
        try VersionedModel("Pets") {
            for (version, moved) in [("v1", false), ("v2", true)] {
                ModelVersion(version) {
                    Entity("Animal") { Attribute("name", .string) }
                    Entity("Cat", parent: "Animal") { Attribute("lives", .integer16) }
                    Entity("Dog", parent: moved ? "Pet" : "Animal") {
                        Attribute("bark", .string)
                        Relationship("walker", to: "Keeper", inverse: "dogs")
                    }
                    Entity("Pet") {
                        Attribute("name", .string)
                        Relationship("owner", to: "Keeper", inverse: "pet")
                    }
                    Entity("Keeper") {
                        Attribute("name", .string)
                        Relationship("dogs", to: "Dog", inverse: "walker").toMany()
                        Relationship("pet", to: "Pet", inverse: "owner")
                    }
                }
            }
        }
    }

    @Test func aSubentityMovedToAnotherRootLeavesItsTableAndKeepsItsReferences() async throws {
        let model = try Self.pets()
        let v2 = try #require(model.version(named: "v2")?.model)
        let rows = [
            StoreRow(reference: Self.ref("Animal", 1), attributes: ["name": .string("gnu")]),
            StoreRow(reference: Self.ref("Cat", 2), attributes: ["name": .string("tom"), "lives": .integer(9)]),
            StoreRow(
                reference: Self.ref("Dog", 3), attributes: ["name": .string("rex"), "bark": .string("woof")],
                toOne: ["walker": Self.ref("Keeper", 1)]),
            StoreRow(
                reference: Self.ref("Dog", 4), attributes: ["name": .string("fido")],
                toOne: ["walker": Self.ref("Keeper", 1)]),
            StoreRow(
                reference: Self.ref("Pet", 1), attributes: ["name": .string("goldie")],
                toOne: ["owner": Self.ref("Keeper", 1)]),
            StoreRow(
                reference: Self.ref("Pet", 2), attributes: ["name": .string("polly")],
                toOne: ["owner": Self.ref("Keeper", 2)]),
            StoreRow(
                reference: Self.ref("Keeper", 1), attributes: ["name": .string("ann")],
                toOne: ["pet": Self.ref("Pet", 1)],
                toMany: ["dogs": Self.refs("Dog", [3, 4])]),
            StoreRow(
                reference: Self.ref("Keeper", 2), attributes: ["name": .string("bo")],
                toOne: ["pet": Self.ref("Pet", 2)]),
        ]
        let directory = try TemporaryDirectory()
        let (inPlace, _, _, _, graph) = try await Self.migrateBothWays(model, rows: rows, in: directory)
        #expect(graph.count == rows.count)
        #expect(
            graph.contains(
                #"Keeper name=string("ann") pet->Pet:string("goldie") dogs->[Dog:string("fido"),Dog:string("rex")]"#))
        #expect(graph.contains(#"Dog bark=string("woof") name=string("rex") walker->Keeper:string("ann")"#))
        let dogs = try await MigrationStores.rows(of: "Dog", at: inPlace, model: v2)
        #expect(dogs.map(\.reference.primaryKey) == [5, 6])
        let cats = try await MigrationStores.rows(of: "Cat", at: inPlace, model: v2)
        #expect(cats.map(\.reference.primaryKey) == [2])
        let verification = try await StoreVerifier.verify(storeAt: inPlace, model: v2)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
    }

    @Test func thePlanRekeysOnlyWhenItsEmitterCan() throws {
        let model = try Self.kennel()
        let (from, to) = (model.versions[0].model, model.versions[1].model)
        let source = try StoreSchema(model: from, numbers: StoreSchema.assignedNumbers(for: from))
        let destination = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
        let mapping = try MappingModel.inferred(from: from, to: to)
        // An emitter that cannot shift keys (PostgreSQL's today) gets a refusal, and builds beside.
        #expect(throws: InPlaceUnsupported.self) {
            try TableMigrationPlan(source: source, destination: destination, mapping: mapping, largestKeys: [:])
        }
        let animal = try #require(source.entities["Animal"]?.number)
        let dog = try #require(source.entities["Dog"]?.number)
        let plan = try TableMigrationPlan(
            source: source, destination: destination, mapping: mapping, largestKeys: [animal: 7, dog: 5],
            rekeysMovedEntities: true)
        // Dogs follow the animals' largest key; the animals' table keeps its keys and is copied first.
        #expect(plan.keyOffsets == [dog: 7])
        let rebuild = try #require(plan.rebuilds.first { $0.table.name == "ZANIMAL" })
        #expect(rebuild.copy?.sourceTable == "ZANIMAL" && rebuild.copy?.keyOffset == 0)
        #expect(rebuild.movedCopies.map(\.sourceTable) == ["ZDOG"] && rebuild.movedCopies.map(\.keyOffset) == [7])
        #expect(plan.carriedKeys["ZANIMAL"] == 12)
        #expect(plan.replacedTables.contains("ZDOG"))
    }
}
