import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// An entity that leaves the inheritance tree a relationship points into: the relationship can no
/// longer hold its objects, so the links to them are dropped (join rows deleted, to-one keys
/// cleared, counts and order updated) and the objects stay, in place and built beside alike.
@Suite struct MovedEntityLinkTests {
    static let rows = ZooVersions.rows

    @Test(arguments: [false, true])
    func linksToObjectsThatLeaveTheTreeAreDroppedInPlaceAndBesideAlike(dogUnderPet: Bool) async throws {
        let model = try ZooVersions.model(dogUnderPet: dogUnderPet)
        let v2 = try #require(model.version(named: "v2")?.model)
        let directory = try TemporaryDirectory()
        let (inPlace, rebuilt, report, _, graph) = try await InPlaceEntityMoveTests.migrateBothWays(
            model, rows: Self.rows, in: directory)

        // The plan says which links go.
        let changes = report.plan.steps.flatMap(\.changes).filter { $0.kind == .dropLinks }.map(\.summary).sorted()
        #expect(
            changes == [
                "drop links from Keeper.favourite to Dog objects (Dog is no longer a kind of Animal)",
                "drop links from Zoo.animals to Dog objects (Dog is no longer a kind of Animal)",
                "drop links from Zoo.residents to Dog objects (Dog is no longer a kind of Animal)",
            ])

        // Every object stays; the links to dogs are gone, the others kept in order, counts updated.
        #expect(graph.count == Self.rows.count)
        #expect(
            graph.contains(
                #"Zoo name=string("north") residentCount=integer(2) animals->[Animal:string("gnu"),Cat:string("tom")] residents->[Animal:string("gnu"),Cat:string("tom")]"#
            ))
        #expect(
            graph.contains(
                #"Zoo name=string("south") residentCount=integer(1) animals->[Cat:string("kit")] residents->[Cat:string("kit")]"#
            ))
        #expect(graph.contains(#"Keeper name=string("ann")"#))
        #expect(graph.contains(#"Keeper name=string("bo") favourite->Cat:string("tom")"#))
        let dogs = graph.filter { $0.hasPrefix("Dog ") }
        #expect(dogs.count == 2 && dogs.contains { $0.contains(#"name=string("rex")"#) }, "\(dogs)")
        for url in [inPlace, rebuilt] {
            let verification = try await StoreVerifier.verify(storeAt: url, model: v2)
            #expect(verification.problems.isEmpty, "\(url.lastPathComponent): \(verification.problems)")
        }
        let connection = try Connection(path: inPlace.path, configuration: .readOnly)
        let joinTable = try #require(
            try StoreSchema(model: v2, numbers: StoreSchema.assignedNumbers(for: v2)).joinTables.keys.first)
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM \(.identifier(joinTable))")?.int64 == 3)
    }

    @Test func aPlanForAnEmitterThatCannotDropLinksIsRefused() throws {
        let model = try ZooVersions.model(dogUnderPet: false)
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
