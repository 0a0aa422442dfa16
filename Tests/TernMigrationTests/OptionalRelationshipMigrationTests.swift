import Foundation
import TernCore
import TernMigration
import Testing

/// An inferred migration may add an optional relationship that has a minimum count (the
/// `optional="YES" minCount="1" maxCount="1"` older Xcode versions write): existing objects
/// stay valid with the relationship empty, as Core Data's lightweight migration finds.
@Suite struct OptionalRelationshipMigrationTests {
    static func versions(ownerIsOptional: Bool) -> VersionedModel {
        let person = EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)])
        let v1 = ManagedObjectModel(entities: [
            EntityDescription(name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)]), person,
        ])
        var owner = RelationshipDescription(name: "owner", destination: "Person", isOptional: ownerIsOptional)
        owner.minCount = 1
        let v2 = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)], relationships: [owner]),
            person,
        ])
        return VersionedModel(
            name: "Cars", versions: [ModelVersion(name: "v1", model: v1), ModelVersion(name: "v2", model: v2)],
            current: "v2")
    }

    @Test func addingAnOptionalRelationshipWithAMinimumIsInferred() throws {
        let model = Self.versions(ownerIsOptional: true)
        let source = try #require(model.version(named: "v1")).model
        let plan = try MigrationPlanner(model: model).plan(storeHashes: source.entityVersionHashes)
        #expect(plan.isExecutable)
        let step = try #require(plan.steps.first)
        #expect(plan.steps.count == 1 && step.kind == .inferred)
        #expect(step.changes.map(\.summary).contains("add relationship Car.owner"))
        let inference = MappingInference(from: source, to: model.currentVersion.model)
        #expect(inference.isInferable, "\(inference.issues.map(\.message))")
    }

    /// Core Data refuses a new required relationship only when the entity has objects (its
    /// validation error 134110): the inference accepts it and leaves the count to the store.
    @Test func addingARequiredRelationshipIsInferredAndLeftToTheStoresCount() throws {
        let model = Self.versions(ownerIsOptional: false)
        let source = try #require(model.version(named: "v1")).model
        let inference = MappingInference(from: source, to: model.currentVersion.model)
        #expect(inference.isInferable)
        #expect(
            inference.changes.map(\.summary) == [
                "add relationship Car.owner, required (the store must have no Car objects; checked before migrating)"
            ])
    }
}
