import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// An entity that leaves the inheritance tree a relationship points into: the relationship can no
/// longer hold its objects, so the links to them are dropped (join rows deleted, to-one keys
/// cleared, counts and order updated) and the objects stay, in place and built beside alike.
@Suite struct MovedEntityLinkTests {
    /// v1: `Dog` and `Cat` are animals; v2: `Dog` leaves `Animal`, as a root of its own or under `Pet`.
    static func zoo(dogUnderPet: Bool) throws -> VersionedModel {
        try VersionedModel("Zoo") {
            for (version, moved) in [("v1", false), ("v2", true)] {
                ModelVersion(version) {
                    Entity("Animal") {
                        Attribute("name", .string)
                        Relationship("zoos", to: "Zoo", inverse: "animals").toMany()
                        Relationship("home", to: "Zoo", inverse: "residents")
                        Relationship("fans", to: "Keeper", inverse: "favourite").toMany()
                    }
                    Entity("Cat", parent: "Animal") { Attribute("lives", .integer16) }
                    Entity("Dog", parent: moved ? (dogUnderPet ? "Pet" : nil) : "Animal") {
                        if moved && !dogUnderPet { Attribute("name", .string) }
                        Attribute("bark", .string)
                    }
                    Entity("Pet") { Attribute("name", .string) }
                    Entity("Keeper") {
                        Attribute("name", .string)
                        Relationship("favourite", to: "Animal", inverse: "fans")
                    }
                    Entity("Zoo") {
                        Attribute("name", .string)
                        Attribute("residentCount", .integer64).derived(from: "residents.@count")
                        Relationship("animals", to: "Animal", inverse: "zoos").toMany()
                        Relationship("residents", to: "Animal", inverse: "home").toMany(ordered: true)
                    }
                }
            }
        }
    }

    static func ref(_ entity: String, _ key: Int) -> RowReference { InPlaceEntityMoveTests.ref(entity, key) }

    /// Dogs 3 and 4 are in both zoos' animals and residents, and a keeper's favourite.
    static let rows: [StoreRow] = {
        let animals: [(entity: String, key: Int, name: String, zoos: [Int], home: Int?, fans: [Int])] = [
            ("Animal", 1, "gnu", [1], 1, []), ("Cat", 2, "tom", [1], 1, [2]), ("Dog", 3, "rex", [1, 2], 1, [1]),
            ("Dog", 4, "fido", [1], 1, []), ("Cat", 5, "kit", [2], 2, []),
        ]
        var rows = animals.map { animal in
            StoreRow(
                reference: ref(animal.entity, animal.key), attributes: ["name": .string(animal.name)],
                toOne: animal.home.map { ["home": ref("Zoo", $0)] } ?? [:],
                toMany: ["zoos": animal.zoos.map { ref("Zoo", $0) }, "fans": animal.fans.map { ref("Keeper", $0) }])
        }
        let members = { (keys: [Int]) in keys.map { key in ref(animals.first { $0.key == key }?.entity ?? "", key) } }
        rows += [
            StoreRow(reference: ref("Zoo", 1), attributes: ["name": .string("north")],
                     toMany: ["animals": members([1, 2, 3, 4]), "residents": members([3, 1, 4, 2])]),
            StoreRow(reference: ref("Zoo", 2), attributes: ["name": .string("south")],
                     toMany: ["animals": members([3, 5]), "residents": members([5])]),
            StoreRow(reference: ref("Keeper", 1), attributes: ["name": .string("ann")], toOne: ["favourite": ref("Dog", 3)]),
            StoreRow(reference: ref("Keeper", 2), attributes: ["name": .string("bo")], toOne: ["favourite": ref("Cat", 2)]),
            StoreRow(reference: ref("Pet", 1), attributes: ["name": .string("goldie")]),
        ]
        return rows
    }()

    @Test(arguments: [false, true])
    func linksToObjectsThatLeaveTheTreeAreDroppedInPlaceAndBesideAlike(dogUnderPet: Bool) async throws {
        let model = try Self.zoo(dogUnderPet: dogUnderPet)
        let v2 = try #require(model.version(named: "v2")?.model)
        let directory = try TemporaryDirectory()
        let (inPlace, rebuilt, report, _, graph) = try await InPlaceEntityMoveTests.migrateBothWays(
            model, rows: Self.rows, in: directory)

        // The plan says which links go.
        let changes = report.plan.steps.flatMap(\.changes).filter { $0.kind == .dropLinks }.map(\.summary).sorted()
        #expect(changes == [
            "drop links from Keeper.favourite to Dog objects (Dog is no longer a kind of Animal)",
            "drop links from Zoo.animals to Dog objects (Dog is no longer a kind of Animal)",
            "drop links from Zoo.residents to Dog objects (Dog is no longer a kind of Animal)",
        ])

        // Every object stays; the links to dogs are gone, the others kept in order, counts updated.
        #expect(graph.count == Self.rows.count)
        #expect(graph.contains(
            #"Zoo name=string("north") residentCount=integer(2) animals->[Animal:string("gnu"),Cat:string("tom")] residents->[Animal:string("gnu"),Cat:string("tom")]"#))
        #expect(graph.contains(
            #"Zoo name=string("south") residentCount=integer(1) animals->[Cat:string("kit")] residents->[Cat:string("kit")]"#))
        #expect(graph.contains(#"Keeper name=string("ann")"#))
        #expect(graph.contains(#"Keeper name=string("bo") favourite->Cat:string("tom")"#))
        let dogs = graph.filter { $0.hasPrefix("Dog ") }
        #expect(dogs.count == 2 && dogs.contains { $0.contains(#"name=string("rex")"#) }, "\(dogs)")
        for url in [inPlace, rebuilt] {
            let verification = try await StoreVerifier.verify(storeAt: url, model: v2)
            #expect(verification.problems.isEmpty, "\(url.lastPathComponent): \(verification.problems)")
        }
        let connection = try Connection(path: inPlace.path, configuration: .readOnly)
        let joinTable = try #require(try StoreSchema(model: v2, numbers: StoreSchema.assignedNumbers(for: v2)).joinTables.keys.first)
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM \(.identifier(joinTable))")?.int64 == 3)
    }

    @Test func aPlanForAnEmitterThatCannotDropLinksIsRefused() throws {
        let model = try Self.zoo(dogUnderPet: false)
        let (from, to) = (model.versions[0].model, model.versions[1].model)
        let source = try StoreSchema(model: from, numbers: StoreSchema.assignedNumbers(for: from))
        let destination = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
        let mapping = try MappingModel.inferred(from: from, to: to)
        #expect(throws: InPlaceUnsupported.self) {
            try TableMigrationPlan(source: source, destination: destination, mapping: mapping, largestKeys: [:])
        }
        let plan = try TableMigrationPlan(
            source: source, destination: destination, mapping: mapping, largestKeys: [:], dropsLinks: true)
        let dog = try #require(source.entities["Dog"]?.number)
        let exclusions = plan.joinRebuilds.flatMap { $0.exclusions.values.joined() }
        #expect(!exclusions.isEmpty && exclusions.allSatisfy { $0.numbers == [dog] && $0.table == "ZANIMAL" })
        #expect(plan.derivedCounts.map(\.column) == ["ZRESIDENTCOUNT"])
    }
}
