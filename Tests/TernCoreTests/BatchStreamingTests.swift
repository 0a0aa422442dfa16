import Foundation
import TernCore
import TernTestSupport
import Testing

/// Batch inserts fed batch by batch, and what a context keeps of the temporary IDs it saved.
@Suite struct BatchStreamingTests {
    @Test func streamedBatchesReachAStoreWithoutAPathOfItsOwnAllOrNothing() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        var batches: [[[String: AttributeValue]]] = [
            [["name": .string("Rex")], ["name": .string("Max")]], [["name": .string("Bo")]],
        ]
        let inserted = try await context.batchInsert(entityName: "Pet") {
            batches.isEmpty ? nil : batches.removeFirst()
        }
        #expect(inserted == 3)
        #expect(try await context.count(for: FetchRequest(entityName: "Pet")) == 3)
        await #expect(throws: TernError.self) {
            var failing: [[[String: AttributeValue]]] = [[["name": .string("Ann")]], [["name": .integer(1)]]]
            _ = try await context.batchInsert(entityName: "Pet") { failing.isEmpty ? nil : failing.removeFirst() }
        }
        #expect(try await context.count(for: FetchRequest(entityName: "Pet")) == 3)
        let child = ObjectContext(parent: context)
        await #expect(throws: TernError.self) { _ = try await child.batchInsert(entityName: "Pet") { nil } }
    }

    @Test func temporaryIDsLeadToSavedObjectsUntilTheContextIsReset() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let found = try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            let temporary = person.objectID
            try await context.save()
            let before = try await context.object(with: temporary) === person
            let permanent = person.objectID
            context.reset()
            let again: String? = try await context.object(with: permanent)["name"]
            var afterReset = true
            do {
                _ = try await context.object(with: temporary)
            } catch {
                afterReset = false
            }
            return [before, again == "Ada", afterReset]
        }
        #expect(found == [true, true, false])
    }
}
