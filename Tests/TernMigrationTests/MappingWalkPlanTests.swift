import Foundation
import TernCore
import TernFormats
import Testing

@testable import TernMigration

/// A custom policy that says its stage 1 is independent, or not.
struct DeclaredPolicy: EntityMigrationPolicy {
    let independent: Bool

    func createsInstancesIndependently(for mapping: EntityMapping) -> Bool { independent }
}

/// Which entity mappings share a walk over their source in stage 1, and which keep their pass.
@Suite struct MappingWalkPlanTests {
    let events: VersionedModel
    let split: StepMapping

    init() throws {
        events = try XcodeModel.readVersionedModel(at: MigrationFixtures.eventModel)
        split = try StepMapping(contentsOf: MigrationFixtures.eventSplit)
    }

    /// The walks of each pass, by mapping name.
    func walks(_ passes: [MappingModel], policies: MigrationPolicyRegistry = MigrationPolicyRegistry()) throws
        -> [[[String]]]
    {
        let plan = try MappingWalkPlan(passes, policies: policies, destination: events.versions[1].model)
        #expect(
            plan.passes.map { $0.map(\.mapping.name) }
                == passes.map { pass in
                    pass.entityMappings.filter { $0.kind != .remove && $0.kind != .add }.map(\.name)
                })
        return plan.walks.map { $0.map { $0.map(\.mapping.name) } }
    }

    /// The seeds' split with both mappings custom, run by one policy.
    func customSplit(independent: Bool) -> ([MappingModel], MigrationPolicyRegistry) {
        var passes = split.passes
        for pass in passes.indices {
            for index in passes[pass].entityMappings.indices where passes[pass].entityMappings[index].kind == .transform
            {
                passes[pass].entityMappings[index].kind = .custom
                passes[pass].entityMappings[index].policyName = "Declared"
            }
        }
        var policies = MigrationPolicyRegistry()
        policies.register(DeclaredPolicy(independent: independent), named: "Declared")
        return (passes, policies)
    }

    @Test func theSeedsSplitIsOneWalkInTheFirstPass() throws {
        #expect(try walks(split.passes) == [[["EventToPrintedEvent", "EventToTimeStampEvent"]], []])
        let (passes, policies) = customSplit(independent: true)
        #expect(try walks(passes, policies: policies) == [[["EventToPrintedEvent", "EventToTimeStampEvent"]], []])
    }

    @Test func customPoliciesThatDoNotSaySoKeepTheirPass() throws {
        let (passes, policies) = customSplit(independent: false)
        #expect(try walks(passes, policies: policies) == [[["EventToPrintedEvent"]], [["EventToTimeStampEvent"]]])
    }

    @Test func aMappingThatAnEarlierPassLooksUpKeepsItsPass() throws {
        for lookup in [
            #"destinationInstances("EventToTimeStampEvent", $source.other)"#, "destinationInstances($source.other)",
        ] {
            var passes = split.passes
            passes[0].entityMappings[0].relationshipMappings = [PropertyMapping("other", try ValueExpression(lookup))]
            #expect(try walks(passes) == [[["EventToPrintedEvent"]], [["EventToTimeStampEvent"]]])
            // In one pass, every stage 1 comes before stage 2: the two share a walk again.
            let one = MappingModel(name: "Split", entityMappings: passes.flatMap(\.entityMappings))
            #expect(try walks([one]) == [[["EventToPrintedEvent", "EventToTimeStampEvent"]]])
        }
        // Looking up another mapping's objects is no reason to wait.
        var passes = split.passes
        passes[0].entityMappings[0].relationshipMappings = [
            PropertyMapping(
                "other", try ValueExpression(#"destinationInstances("EventToPrintedEvent", $source.other)"#))
        ]
        #expect(try walks(passes) == [[["EventToPrintedEvent", "EventToTimeStampEvent"]], []])
    }

    @Test func mappingsIntoTheSameTableOrAcrossADependentOneKeepTheirWalks() throws {
        // Two mappings into PrintedEvent would interleave its primary keys: two walks.
        var twice = split.passes
        twice[1].entityMappings[0].destinationEntityName = "PrintedEvent"
        twice[1].entityMappings[0].attributeMappings = twice[0].entityMappings[0].attributeMappings
        #expect(try walks(twice) == [[["EventToPrintedEvent"]], [["EventToTimeStampEvent"]]])
        // A custom mapping that does not say it is independent runs between them: no moving past it.
        var between = split.passes
        between[0].entityMappings.append(
            EntityMapping(name: "Opaque", kind: .custom, source: "Event", destination: "PrintedEvent", policy: "Opaque")
        )
        var policies = MigrationPolicyRegistry()
        policies.register(DeclaredPolicy(independent: false), named: "Opaque")
        #expect(
            try walks(between, policies: policies) == [
                [["EventToPrintedEvent"], ["Opaque"]], [["EventToTimeStampEvent"]],
            ])
    }
}

/// An attribute policy that upper-cases a name, run by the in-memory engine (one call per value).
struct UppercasedNamePolicy: AttributeMigrationPolicy {
    let sourceAttributeNames = ["name", "missing"]
    let destinationAttributeNames = ["title"]

    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
    {
        if case .string(let name)? = source[0] { destination[0] = .string(name.uppercased()) }
    }
}

@Suite struct AttributeMigrationPolicyDefaultTests {
    @Test func theDefaultEngineRunsAnAttributePolicyValueByValue() throws {
        let v1 = try ManagedObjectModel { Entity("Course") { Attribute("name", .string) } }
        let v2 = try ManagedObjectModel {
            Entity("Course") {
                Attribute("title", .string)
                Attribute("level", .integer16).default(.integer(3))
            }
        }
        let rows = ["algebra", "logic"].enumerated().map { index, name in
            StoreRow(
                reference: RowReference(entityName: "Course", primaryKey: Int64(index + 1)), version: 1,
                attributes: ["name": .string(name)])
        }
        let mapping = EntityMapping(kind: .custom, source: "Course", destination: "Course", policy: "Upper")
        var policies = MigrationPolicyRegistry()
        policies.register(UppercasedNamePolicy(), named: "Upper")
        let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        // "missing" is not an attribute of Course: the policy's source list is checked.
        #expect(throws: MigrationError.self) {
            try MappingRunner(policies: policies).run(
                [MappingModel(name: "Courses", entityMappings: [mapping])], manager: manager)
        }
        struct Upper: AttributeMigrationPolicy {
            let sourceAttributeNames = ["name"]
            let destinationAttributeNames = ["title"]
            func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
                throws(MigrationError)
            {
                try UppercasedNamePolicy().destinationValues(from: source + [nil], into: &destination)
            }
        }
        policies.register(Upper(), named: "Upper")
        let fresh = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
        try MappingRunner(policies: policies).run(
            [MappingModel(name: "Courses", entityMappings: [mapping])], manager: fresh)
        #expect(fresh.destinationRows.map { $0.attributes["title"] } == [.string("ALGEBRA"), .string("LOGIC")])
        #expect(fresh.destinationRows.map { $0.attributes["level"] } == [.integer(3), .integer(3)])
        #expect(
            fresh.destinationInstances(forMapping: mapping.name, sourceInstances: [rows[1].reference]) == [
                fresh.destinationRows[1].reference
            ])
    }
}
