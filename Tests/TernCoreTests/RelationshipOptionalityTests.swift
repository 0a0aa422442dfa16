import Foundation
import TernCore
import Testing

/// A relationship's minimum and maximum counts constrain it only when it is not empty, as in
/// Core Data: an optional relationship with `minCount="1"` (which older Xcode versions write for
/// optional to-one relationships) may be empty.
@Suite struct RelationshipOptionalityTests {
    /// `Car.owner`: optional to-one with a minimum of 1; `Car.parts`: optional to-many with a
    /// minimum of 2 and a maximum of 3; `Car.maker`: required to-one.
    static func model(makerRequired: Bool = false) -> ManagedObjectModel {
        var owner = RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")
        owner.minCount = 1
        var parts = RelationshipDescription(name: "parts", destination: "Part", toMany: true)
        parts.minCount = 2
        parts.maxCount = 3
        var relationships = [owner, parts]
        if makerRequired {
            relationships.append(RelationshipDescription(name: "maker", destination: "Person", isOptional: false))
        }
        return ManagedObjectModel(entities: [
            EntityDescription(
                name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)],
                relationships: relationships),
            EntityDescription(name: "Part", attributes: [AttributeDescription(name: "name", type: .string)]),
            EntityDescription(
                name: "Person",
                relationships: [
                    RelationshipDescription(name: "cars", destination: "Car", inverse: "owner", toMany: true)
                ]),
        ])
    }

    static func context(_ model: ManagedObjectModel) async throws -> ObjectContext {
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(InMemoryStore(model: model))
        return ObjectContext(coordinator: coordinator)
    }

    @Test func anOptionalRelationshipWithAMinimumIsNotRequired() throws {
        let owner = try #require(Self.model().relationship(named: "owner", inEntity: "Car"))
        #expect(!owner.isRequired)
        #expect(owner.minCount == 1 && owner.maxCount == 1)  // kept as written
        #expect(owner.allows(count: 0) && owner.allows(count: 1) && !owner.allows(count: 2))
        let parts = try #require(Self.model().relationship(named: "parts", inEntity: "Car"))
        #expect(parts.allows(count: 0) && !parts.allows(count: 1) && parts.allows(count: 3) && !parts.allows(count: 4))
        var required = parts
        required.isOptional = false
        #expect(required.isRequired && !required.allows(count: 0) && required.allows(count: 2))
        #expect(Self.model().validationIssues.isEmpty)
    }

    @Test func anObjectWithoutTheRelationshipSaves() async throws {
        let context = try await Self.context(Self.model())
        try await context.perform { context in
            let car = context.insert("Car")
            car["plate"] = "B-1"
            try await context.save()
        }
    }

    @Test func aNonEmptyToManyBelowItsMinimumStillFails() async throws {
        let context = try await Self.context(Self.model())
        let error = await context.perform { context -> TernError? in
            let car = context.insert("Car")
            let part = context.insert("Part")
            car.setObjects([part], for: "parts")
            do {
                try await context.save()
                return nil
            } catch {
                return error as? TernError
            }
        }
        #expect(error?.code == .validationFailed)
        #expect(String(describing: error).contains("fewer than 2"))
    }

    @Test func aRequiredRelationshipStillFailsWhenEmpty() async throws {
        let context = try await Self.context(Self.model(makerRequired: true))
        let error = await context.perform { context -> TernError? in
            _ = context.insert("Car")
            do {
                try await context.save()
                return nil
            } catch {
                return error as? TernError
            }
        }
        #expect(error?.code == .validationFailed)
        #expect(String(describing: error).contains("maker"))
    }

    @Test func batchInsertsWithRulesAcceptRowsWithoutTheRelationship() async throws {
        let context = try await Self.context(Self.model())
        let ids = try await context.batchInsert(
            entityName: "Car", objects: [["plate": .string("B-2")]], options: .enforcingModelRules)
        #expect(ids.count == 1)
        let strict = try await Self.context(Self.model(makerRequired: true))
        await #expect(throws: TernError.self) {
            try await strict.batchInsert(
                entityName: "Car", objects: [["plate": .string("B-3")]], options: .enforcingModelRules)
        }
    }
}
