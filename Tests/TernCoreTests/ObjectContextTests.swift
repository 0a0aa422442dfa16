import Foundation
import TernCore
import TernTestSupport
import Testing

final class PersonObject: ManagedObject {
    var name: String? {
        get { self["name"] }
        set { self["name"] = newValue }
    }
    var age: Int? {
        get { self["age"] }
        set { self["age"] = newValue }
    }
    var pets: [ManagedObject] { objects(for: "pets") }
}

/// A coordinator over a fresh in-memory store with the conformance model.
func makeObjectsCoordinator() async throws -> PersistentStoreCoordinator {
    let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
    try await coordinator.addStore(InMemoryStore(model: ConformanceModel.model))
    return coordinator
}

@Suite struct ObjectContextTests {
    @Test func typedSubclassesAreMadeForTheirEntity() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let id = try await ObjectContext(coordinator: coordinator).perform { context in
            context.register(PersonObject.self, forEntity: "Person")
            let ada = context.insert(PersonObject.self)
            ada.name = "Ada"
            ada.age = 36
            #expect(ada[attribute: "age"] == .integer(36))
            try await context.save()
            return ada.objectID
        }
        let read = try await ObjectContext(coordinator: coordinator).perform { context in
            context.register(PersonObject.self, forEntity: "Person")
            let people = try await context.fetch(FetchRequest(entityName: "Person"), as: PersonObject.self)
            let same = try await context.object(with: id) as? PersonObject
            return [people.first?.name, same?.name, String(describing: people.first?.age)]
        }
        #expect(read == ["Ada", "Ada", "Optional(36)"])
    }

    @Test func savingGivesPermanentIDsEverywhere() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let (before, after, petOwner) = try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            let pet = context.insert("Pet")
            pet[toOne: "owner"] = person
            let before = person.objectID
            try await context.save()
            #expect(context.registeredObject(for: person.objectID) === person)
            return (before, person.objectID, pet.objectIDs(for: "owner"))
        }
        #expect(before.isTemporary)
        #expect(!after.isTemporary)
        #expect(after.storeIdentifier == coordinator.stores.first?.identifier)
        #expect(petOwner == [after])
    }

    @Test func hasChangesRollbackAndChangedKeys() async throws {
        let coordinator = try await makeObjectsCoordinator()
        try await ObjectContext(coordinator: coordinator).perform { context in
            var hasChanges = context.hasChanges
            #expect(!hasChanges)
            let person = context.insert("Person")
            person["name"] = "Ada"
            hasChanges = context.hasChanges
            #expect(hasChanges && person.isInserted)
            try await context.save()
            hasChanges = context.hasChanges
            #expect(!hasChanges && !person.hasChanges)
            person["name"] = "Bea"
            person["age"] = 3
            #expect(person.isUpdated)
            #expect(person.changedKeys == ["name", "age"])
            #expect(person.committedValue(forAttribute: "name") == .string("Ada"))
            let extra = context.insert("Person")
            context.rollback()
            hasChanges = context.hasChanges
            #expect(!hasChanges)
            #expect(person["name"] == "Ada")
            #expect(person[attribute: "age"] == nil)
            #expect(context.registeredObject(for: extra.objectID) == nil)
        }
    }

    @Test func setValueRefusesWrongTypes() async throws {
        let coordinator = try await makeObjectsCoordinator()
        try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            #expect(throws: TernError.self) { try person.setValue(.integer(1), forAttribute: "name") }
            #expect(throws: TernError.self) { try person.setValue(.string("x"), forAttribute: "missing") }
            try person.setValue(.string("Ada"), forAttribute: "name")
            #expect(person["name"] == "Ada")
        }
    }

    @Test func objectWithAnUnknownIDThrows() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let store = try #require(coordinator.stores.first)
        let missing = ObjectID(entityName: "Person", storeIdentifier: store.identifier, primaryKey: 999)
        let error = await #expect(throws: TernError.self) {
            try await ObjectContext(coordinator: coordinator).perform { context in
                _ = try await context.object(with: missing)
            }
        }
        #expect(error?.code == .objectNotFound)
    }

    @Test func refreshDropsOrKeepsChanges() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        let id = try await context.perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            try await context.save()
            return person.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { other in
            let person = try await other.object(with: id)
            person["age"] = 40
            try await other.save()
        }
        let values = try await context.perform { context in
            let person = try await context.object(with: id)
            person["name"] = "Bea"
            try await context.refresh(person, mergeChanges: true)
            let merged = [person["name"] as String?, (person["age"] as Int?).map(String.init)]
            try await context.refresh(person, mergeChanges: false)
            return merged + [person["name"] as String?]
        }
        #expect(values == ["Bea", "40", "Ada"])
    }

    @Test func dictionariesAndCounts() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator)
        _ = try await context.batchInsert(
            entityName: "Person",
            objects: [
                ["name": .string("Ada"), "age": .integer(36)], ["name": .string("Bea")],
            ])
        var request = FetchRequest(entityName: "Person", sortDescriptors: [FetchSort(key: "name")])
        request.propertiesToFetch = ["name"]
        #expect(try await context.fetchDictionaries(request) == [["name": .string("Ada")], ["name": .string("Bea")]])
        #expect(try await context.count(for: request) == 2)
        request.fetchLimit = 1
        #expect(try await context.fetchObjectIDs(request).count == 1)
    }
}

@Suite struct ObjectContextFaultTests {
    @Test func changesThroughFaultsApplyOnSave() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let personID = try await StoreConformance(.inMemory).insertPersonWithPets(coordinator)
        let wasFault = try await ObjectContext(coordinator: coordinator).perform { context in
            var request = FetchRequest(entityName: "Pet", predicate: try FetchPredicate("name == 'Rex'"))
            request.relationshipKeyPathsForPrefetching = []
            let rex = try #require(try await context.fetch(request).first)
            let fault = rex[toOne: "owner"]?.isFault ?? false
            rex[toOne: "owner"] = nil
            try await context.save()
            return fault
        }
        #expect(wasFault)
        let pets = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.object(with: personID).objects(for: "pets").compactMap { $0["name"] as String? }
        }
        #expect(pets == ["Tom"])
    }

    @Test func mainQueueContextsRunOnTheMainActor() async throws {
        let coordinator = try await makeObjectsCoordinator()
        let context = ObjectContext(coordinator: coordinator, queue: .main)
        let id = try await context.perform { context in
            MainActor.preconditionIsolated()
            let pet = context.insert("Pet")
            try await context.save()
            return pet.objectID
        }
        #expect(!id.isTemporary)
    }
}
