import Foundation
import TernCore
import TernMigration
import Testing

/// Splits each `Person.fullName` into a `Person` with first and last names, plus one `Nickname`
/// object per person that has a nickname; associates both with the source person.
struct SplitNamePolicy: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        let person = try manager.insertDestinationInstance(ofEntity: "Person")
        if case .value(.string(let full)?) = try manager.sourceValue(forKeyPath: ["fullName"], of: source) {
            let parts = full.split(separator: " ", maxSplits: 1).map(String.init)
            try manager.setDestinationValue(.string(parts.first ?? ""), forAttribute: "firstName", of: person)
            try manager.setDestinationValue(
                parts.count > 1 ? .string(parts[1]) : nil, forAttribute: "lastName", of: person)
        }
        manager.associate(source: source, withDestination: person, mapping: mapping)
    }

    func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        // Default relationship mappings first, then a check that the lookup goes both ways.
        try DefaultMigrationPolicy.setRelationships(of: destination, mapping: mapping, manager: manager)
        let sources = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination)
        guard manager.destinationInstances(forMapping: mapping.name, sourceInstances: sources) == [destination] else {
            throw MigrationError(.evaluationFailed, "associations do not round-trip")
        }
    }
}

/// Refuses every mapping at its end, to check that the last stage runs.
struct RefusingPolicy: EntityMigrationPolicy {
    func endEntityMapping(_ mapping: EntityMapping, manager: any MigrationManager) throws(MigrationError) {
        throw MigrationError(.evaluationFailed, "refused", mapping: mapping.name)
    }
}

@Suite struct MigrationPolicyTests {
    let v1: ManagedObjectModel
    let v2: ManagedObjectModel
    let rows: [StoreRow]

    init() throws {
        v1 = try ManagedObjectModel {
            Entity("Person") {
                Attribute("fullName", .string)
                Relationship("cars", to: "Car", inverse: "owner").toMany()
            }
            Entity("Car") {
                Attribute("plate", .string)
                Attribute("price", .integer32)
                Relationship("owner", to: "Person", inverse: "cars")
            }
        }
        v2 = try ManagedObjectModel {
            Entity("Person") {
                Attribute("firstName", .string).required()
                Attribute("lastName", .string)
                Relationship("cars", to: "Car", inverse: "owner").toMany()
            }
            Entity("Car") {
                Attribute("plate", .string)
                Attribute("price", .double)
                Relationship("owner", to: "Person", inverse: "cars")
            }
        }
        let ada = RowReference(entityName: "Person", primaryKey: 1)
        let alan = RowReference(entityName: "Person", primaryKey: 2)
        let car = { (key: Int64) in RowReference(entityName: "Car", primaryKey: key) }
        rows = [
            StoreRow(
                reference: ada, version: 1, attributes: ["fullName": .string("Ada Lovelace")],
                toMany: ["cars": [car(1), car(2)]]),
            StoreRow(
                reference: alan, version: 1, attributes: ["fullName": .string("Alan")], toMany: ["cars": [car(3)]]),
            StoreRow(
                reference: car(1), version: 1, attributes: ["plate": .string("A-1"), "price": .integer(500)],
                toOne: ["owner": ada]),
            StoreRow(
                reference: car(2), version: 1, attributes: ["plate": .string("B-2"), "price": .integer(5_000)],
                toOne: ["owner": ada]),
            StoreRow(
                reference: car(3), version: 1, attributes: ["plate": .string("C-3"), "price": .integer(900)],
                toOne: ["owner": alan]),
        ]
    }

    func mapping(carFilter: FetchPredicate? = nil, personPolicy: String = "SplitName") throws -> MappingModel {
        MappingModel(
            name: "Split", source: v1, destination: v2,
            entityMappings: [
                EntityMapping(
                    name: "PersonToPerson", kind: .custom, source: "Person", destination: "Person",
                    relationships: [
                        PropertyMapping("cars", try ValueExpression(#"destinationInstances("CarToCar", $source.cars)"#))
                    ],
                    policy: personPolicy),
                EntityMapping(
                    kind: .transform, source: "Car", destination: "Car", filter: carFilter,
                    attributes: [
                        PropertyMapping("plate", try ValueExpression("lowercase($source.plate)")),
                        PropertyMapping("price", try ValueExpression("$source.price / 100")),
                    ],
                    relationships: [
                        PropertyMapping("owner", try ValueExpression("destinationInstances($source.owner)"))
                    ]),
            ])
    }

    var policies: MigrationPolicyRegistry {
        var registry = MigrationPolicyRegistry()
        registry.register(SplitNamePolicy(), named: "SplitName")
        registry.register(RefusingPolicy(), named: "Refusing")
        return registry
    }

    @Test func runsTheThreeStagesOfACustomPolicy() throws {
        let mapping = try mapping()
        try mapping.validate(source: v1, destination: v2)
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        try MappingRunner(policies: policies).run([mapping], manager: manager)
        let people = manager.destinationRows.filter { $0.reference.entityName == "Person" }
        let cars = manager.destinationRows.filter { $0.reference.entityName == "Car" }
        #expect(people.map { $0.attributes["firstName"] } == [.string("Ada"), .string("Alan")])
        #expect(people.map { $0.attributes["lastName"] } == [.string("Lovelace"), nil])
        #expect(cars.map { $0.attributes["plate"] } == [.string("a-1"), .string("b-2"), .string("c-3")])
        #expect(cars.map { $0.attributes["price"] } == [.double(5), .double(50), .double(9)])
        #expect(people[0].toMany["cars"] == [cars[0].reference, cars[1].reference])
        #expect(cars[2].toOne["owner"] == people[1].reference)
        #expect(
            manager.destinationInstances(
                forMapping: "CarToCar", sourceInstances: [rows[4].reference, rows[2].reference])
                == [cars[2].reference, cars[0].reference])
        #expect(
            manager.sourceInstances(forMapping: "PersonToPerson", destinationInstance: people[1].reference) == [
                rows[1].reference
            ])
    }

    @Test func migratesOnlyTheObjectsThatPassTheFilter() throws {
        let mapping = try mapping(carFilter: try FetchPredicate("price < 1000"))
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        try MappingRunner(policies: policies).run([mapping], manager: manager)
        let cars = manager.destinationRows.filter { $0.reference.entityName == "Car" }
        #expect(cars.map { $0.attributes["plate"] } == [.string("a-1"), .string("c-3")])
        let people = manager.destinationRows.filter { $0.reference.entityName == "Person" }
        #expect(people[0].toMany["cars"] == [cars[0].reference])
    }

    @Test func stopsAtTheEndStageAndOnUnknownPolicies() throws {
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        #expect {
            try MappingRunner(policies: policies).run([try mapping(personPolicy: "Refusing")], manager: manager)
        } throws: { ($0 as? MigrationError)?.message == "refused" }
        #expect {
            try MappingRunner(policies: policies).run([try mapping(personPolicy: "Missing")], manager: manager)
        } throws: { error in
            guard let error = error as? MigrationError else { return false }
            return error.code == .unknownPolicy && error.mappingName == "PersonToPerson"
        }
        #expect(policies.names == ["Refusing", "SplitName"])
    }

    @Test func validatesTheObjectsAMappingCreated() throws {
        // The default policy leaves the required firstName empty, which the end stage reports.
        let plain = MappingModel(
            name: "Plain", source: v1, destination: v2,
            entityMappings: [
                EntityMapping(kind: .transform, source: "Person", destination: "Person")
            ])
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        do {
            try MappingRunner().run([plain], manager: manager)
            Issue.record("validation must fail")
        } catch {
            #expect(
                error.failures.map(\.description) == [
                    "Person.firstName: Person/p1 firstName is required but has no value",
                    "Person.firstName: Person/p2 firstName is required but has no value",
                ])
        }
    }

    @Test func copiesEveryStoredPropertyOfACopyMapping() throws {
        let inferred = try MappingModel.inferred(from: v1, to: v1)
        #expect(inferred.entityMappings.allSatisfy { $0.kind == .copy })
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v1)
        try MappingRunner().run([inferred], manager: manager)
        let migrated = manager.destinationRows.sorted { $0.reference < $1.reference }
        #expect(migrated.map(\.attributes) == rows.sorted { $0.reference < $1.reference }.map(\.attributes))
        #expect(
            migrated.filter { $0.reference.entityName == "Car" }.map { $0.toOne["owner"]?.primaryKey } == [1, 1, 2])
    }
}
