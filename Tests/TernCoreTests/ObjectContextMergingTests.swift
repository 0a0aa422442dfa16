import Foundation
import TernCore
import TernTestSupport
import Testing

@Suite struct ObjectContextMergingTests {
    @Test func didSaveEventsListTheChanges() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        var events = context.changes().makeAsyncIterator()
        let (ada, bea) = try await context.perform { context in
            let ada = context.insert("Person")
            ada["name"] = "Ada"
            let bea = context.insert("Person")
            bea["name"] = "Bea"
            try await context.save()
            return (ada.objectID, bea.objectID)
        }
        let inserted = try #require(await events.next())
        #expect(inserted.inserted == [ada, bea])
        try await context.perform { context in
            try await context.object(with: ada)["age"] = 3
            context.delete(try await context.object(with: bea))
            try await context.save()
        }
        let changed = try #require(await events.next())
        #expect(changed.updated == [ada])
        #expect(changed.changedKeys[ada] == ["age"])
        #expect(changed.deleted == [bea])
    }

    @Test func contextsMergeOtherSavesAutomatically() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let writer = ObjectContext(coordinator: coordinator)
        let reader = ObjectContext(coordinator: coordinator)
        let manual = ObjectContext(coordinator: coordinator)
        await reader.perform { $0.automaticallyMergesChanges = true }
        let id = try await writer.perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            try await context.save()
            return person.objectID
        }
        for context in [reader, manual] {
            _ = try await context.perform { context in try await context.object(with: id)["name"] as String? }
        }
        try await reader.perform { context in try await context.object(with: id)["nickname"] = "A" }
        try await writer.perform { context in
            try await context.object(with: id)["name"] = "Bea"
            try await context.save()
        }
        let seen = await reader.perform { context in
            let person = context.registeredObject(for: id)
            return [person?["name"] as String?, person?["nickname"] as String?]
        }
        #expect(seen == ["Bea", "A"])
        // Without merging, the context keeps serving the row it read.
        let stale = try await manual.perform { context in try await context.object(with: id)["name"] as String? }
        #expect(stale == "Ada")
        try await writer.perform { context in
            context.delete(try await context.object(with: id))
            try await context.save()
        }
        let gone = await reader.perform { context in context.registeredObject(for: id) == nil }
        #expect(gone)
    }

    @Test func childContextsSaveIntoTheirParent() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let parent = ObjectContext(coordinator: coordinator)
        let existing = try await parent.perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            try await context.save()
            return person.objectID
        }
        let child = ObjectContext(parent: parent)
        let newID = try await child.perform { context in
            let ada = try await context.object(with: existing)
            ada["age"] = 36
            let pet = context.insert("Pet")
            pet["name"] = "Rex"
            pet[toOne: "owner"] = ada
            try await context.save()
            return pet.objectID
        }
        #expect(try await ObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Pet")) == 0)
        let parentView = try await parent.perform { context in
            let ada = try await context.object(with: existing)
            let pets = ada.objects(for: "pets").map(\.objectID)
            let hasChanges = context.hasChanges
            try await context.save()
            return (ada["age"] as Int?, pets, hasChanges)
        }
        #expect(parentView.0 == 36)
        #expect(parentView.1 == [newID])
        #expect(parentView.2)
        let saved = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.fetch(FetchRequest(entityName: "Pet")).compactMap {
                $0[toOne: "owner"]?["name"] as String?
            }
        }
        #expect(saved == ["Ada"])
    }

    @Test func childFetchesSeeTheParentsPendingChanges() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let parent = ObjectContext(coordinator: coordinator)
        await parent.perform { context in context.insert("Pet")["name"] = "Rex" }
        let child = ObjectContext(parent: parent)
        let names = try await child.perform { context in
            try await context.fetch(FetchRequest(entityName: "Pet")).compactMap { $0["name"] as String? }
        }
        #expect(names == ["Rex"])
    }

    @Test func batchedIterationKeepsOneBatchInMemory() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        _ = try await context.batchInsert(entityName: "Pet", objects: (0..<95).map { ["name": .string("pet \($0)")] })
        var batched = FetchRequest(entityName: "Pet")
        batched.fetchBatchSize = 10
        let request = batched
        let (seen, peak) = try await context.perform { context in
            var seen = 0
            var peak = 0
            try await context.forEachBatch(of: request) { batch in
                seen += batch.count
                peak = max(peak, context.registeredObjectCount)
            }
            return (seen, peak)
        }
        #expect(seen == 95)
        #expect(peak <= 10)
    }

    @Test func batchUpdateAndDeleteReachTheStoreAndTheContext() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        let ids = try await context.batchInsert(
            entityName: "Pet", objects: [["name": .string("Rex")], ["name": .string("Tom")]])
        await #expect(throws: TernError.self) {
            try await context.batchInsert(entityName: "Pet", objects: [["name": .integer(1)]])
        }
        let held = try await context.perform { context in try await context.object(with: ids[0])["name"] as String? }
        #expect(held == "Rex")
        let updated = try await context.batchUpdate(
            FetchRequest(entityName: "Pet", predicate: try FetchPredicate("name == 'Rex'")),
            values: ["name": .string("Max")])
        #expect(updated == [ids[0]])
        let merged = try await context.perform { context in try await context.object(with: ids[0])["name"] as String? }
        #expect(merged == "Max")
        let deleted = try await context.batchDelete(FetchRequest(entityName: "Pet"))
        #expect(Set(deleted) == Set(ids))
        #expect(try await context.count(for: FetchRequest(entityName: "Pet")) == 0)
    }
}

@Suite struct ObjectContextConflictTests {
    @Test func childChangesReachTheStoreAfterTheParentGaveThemPermanentIDs() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let parent = ObjectContext(coordinator: coordinator)
        let child = ObjectContext(parent: parent)
        let petID = try await child.perform { context in
            let pet = context.insert("Pet")
            pet["name"] = "Rex"
            try await context.save()
            return pet.objectID
        }
        try await parent.perform { context in try await context.save() }
        try await child.perform { context in
            try await context.object(with: petID)["name"] = "Max"
            try await context.save()
        }
        try await parent.perform { context in try await context.save() }
        let names = try await ObjectContext(coordinator: coordinator).fetchDictionaries(FetchRequest(entityName: "Pet"))
        #expect(names == [["name": .string("Max")]])
    }

    @Test func rollbackPolicyUndeletesAnObjectChangedElsewhere() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let deleter = ObjectContext(coordinator: coordinator)
        let id = try await deleter.perform { context in
            let pet = context.insert("Pet")
            pet["name"] = "Rex"
            try await context.save()
            context.delete(pet)
            context.mergePolicy = .rollback
            return pet.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.object(with: id)["name"] = "Max"
            try await context.save()
        }
        try await deleter.perform { context in try await context.save() }
        let names = try await ObjectContext(coordinator: coordinator).fetchDictionaries(FetchRequest(entityName: "Pet"))
        #expect(names == [["name": .string("Max")]])
    }
}
