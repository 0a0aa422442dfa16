import Foundation
import TernCore
import Testing

/// Objects keep their values packed, one slot per attribute: defaults, transient values,
/// snapshots and change tracking must behave as with one dictionary per object.
@Suite struct ManagedObjectStorageTests {
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("draft", .string).transient()
                    Attribute("count", .integer64).default(.integer(1))
                    Attribute("weight", .double)
                }
            }
        } catch {
            preconditionFailure("the test model is valid: \(error)")
        }
    }()

    func makeCoordinator() async throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(model: Self.model)
        try await coordinator.addStore(InMemoryStore(model: Self.model))
        return coordinator
    }

    @Test func insertedObjectsStartWithTheDefaultsAndOnlyStoredChangesCount() async throws {
        let coordinator = try await makeCoordinator()
        try await ObjectContext(coordinator: coordinator).perform { context in
            let note = context.insert("Note")
            #expect(note[attribute: "count"] == .integer(1))
            #expect(note[attribute: "title"] == nil && note[attribute: "weight"] == nil)
            note["title"] = "a"
            note["draft"] = "scribble"
            try await context.save()
            #expect(!note.hasChanges)
            note["draft"] = "other"
            #expect(note.changedKeys.isEmpty && !note.isUpdated)
            note["weight"] = 2.5
            #expect(note.changedKeys == ["weight"])
            note["weight"] = nil as Double?
            #expect(note.changedKeys.isEmpty)
        }
    }

    @Test func transientValuesSurviveRollbackAndRefreshButAreNeverSaved() async throws {
        let coordinator = try await makeCoordinator()
        let id = try await ObjectContext(coordinator: coordinator).perform { context in
            let note = context.insert("Note")
            note["title"] = "saved"
            try await context.save()
            return note.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            let note = try await context.object(with: id)
            #expect(note[attribute: "draft"] == nil)
            note["draft"] = "kept"
            note["title"] = "unsaved"
            context.rollback()
            #expect(note[attribute: "title"] == .string("saved"))
            #expect(note[attribute: "draft"] == .string("kept"))

            let other = ObjectContext(coordinator: context.coordinator)
            try await other.perform { other in
                let same = try await other.object(with: id)
                same["title"] = "elsewhere"
                try await other.save()
            }
            try await context.refresh(note, mergeChanges: false)
            #expect(note[attribute: "title"] == .string("elsewhere"))
            #expect(note[attribute: "draft"] == .string("kept"))
            #expect(note.committedValue(forAttribute: "title") == .string("elsewhere"))
        }
        let stored = try await coordinator.stores[0].fetch(StoreFetchRequest(entityName: "Note"))
        #expect(stored.map(\.attributes) == [["title": .string("elsewhere"), "count": .integer(1)]])
    }

    @Test func mergingKeepsTheObjectsOwnChanges() async throws {
        let coordinator = try await makeCoordinator()
        let id = try await ObjectContext(coordinator: coordinator).perform { context in
            let note = context.insert("Note")
            note["title"] = "one"
            note["weight"] = 1.0
            try await context.save()
            return note.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            let note = try await context.object(with: id)
            note["weight"] = 9.0
            try await ObjectContext(coordinator: context.coordinator).perform { other in
                let same = try await other.object(with: id)
                same["title"] = "two"
                same["weight"] = 5.0
                try await other.save()
            }
            try await context.refresh(note, mergeChanges: true)
            #expect(note[attribute: "title"] == .string("two"))
            #expect(note[attribute: "weight"] == .double(9))
            #expect(note.changedKeys == ["weight"])
        }
    }

    @Test func packedAttributesCompareAsDictionaries() {
        let forward = AttributeKeys.shared(names: ["a", "b", "c"])
        let backward = AttributeKeys.shared(names: ["c", "b", "a"])
        let short = PackedAttributes(keys: forward, values: [.integer(1)])
        let long = PackedAttributes(keys: forward, values: [.integer(1), nil, nil])
        let reordered = PackedAttributes(keys: backward, values: [nil, nil, .integer(1)])
        #expect(short == long && long == reordered)
        #expect(Set([short, long, reordered]).count == 1)
        #expect(short.dictionary == ["a": .integer(1)])
        #expect(PackedAttributes(keys: forward) == PackedAttributes(keys: forward, dictionary: [:]))
        #expect(PackedAttributes(keys: forward, dictionary: ["b": .bool(true), "z": .bool(true)])["b"] == .bool(true))
        #expect(long != PackedAttributes(keys: forward, values: [.integer(2)]))
    }
}
