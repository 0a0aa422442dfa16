import TernCore
import Testing

/// Behaviours about faults firing on access, inaccessible objects, child contexts and IDs.
extension StoreConformance {
    func faultsFireOnAccess() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        let seen = await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.fault(for: personID)
            let wasFault = person.isFault
            let name: String? = person["name"]
            let pets = person.objects(for: "pets")
            let petsWereFaults = pets.allSatisfy(\.isFault)
            let petNames = pets.compactMap { $0["name"] as String? }.sorted()
            let owners = pets.compactMap { $0[toOne: "owner"]?.objectID }
            return (wasFault, person.isFault, name, petsWereFaults, petNames, owners)
        }
        #expect(seen.0)
        #expect(!seen.1)
        #expect(seen.2 == "Ada")
        #expect(seen.3)
        #expect(seen.4 == ["Rex", "Tom"])
        #expect(seen.5 == [personID, personID])
        // Writing a fault fires it too, and the change is saved.
        try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.fault(for: personID)
            person["nickname"] = "Countess"
            #expect(person.changedKeys == ["nickname"])
            try await context.save()
        }
        let nickname = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.object(with: personID)["nickname"] as String?
        }
        #expect(nickname == "Countess")
    }

    func faultsOfDeletedRowsBecomeInaccessible() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        let outcome = try await ObjectContext(coordinator: coordinator).perform { context in
            var request = FetchRequest(entityName: "Pet", predicate: try FetchPredicate("name == 'Rex'"))
            request.relationshipKeyPathsForPrefetching = []
            let rex = try #require(try await context.fetch(request).first)
            let owner = try #require(rex[toOne: "owner"])
            let wasFault = owner.isFault
            try await ObjectContext(coordinator: coordinator).perform { other in
                other.delete(try await other.object(with: personID))
                try await other.save()
            }
            let name: String? = owner["name"]
            let pets = owner.objects(for: "pets")
            owner["nickname"] = "ignored"
            let error = #expect(throws: TernError.self) { try owner.fireFault() }
            let setError = #expect(throws: TernError.self) {
                try owner.setValue(.string("x"), forAttribute: "nickname")
            }
            let state = [wasFault, owner.isInaccessible, owner.isDeleted, owner.isFault, context.hasChanges]
            try await context.save()
            return (name, pets.count, error?.code, setError?.code, state)
        }
        #expect(outcome.0 == nil)
        #expect(outcome.1 == 0)
        #expect(outcome.2 == .objectNotFound)
        #expect(outcome.3 == .objectNotFound)
        #expect(outcome.4 == [true, true, true, false, false])
        await #expect(throws: TernError.self) {
            try await ObjectContext(coordinator: coordinator).perform { context in
                _ = try await context.object(with: personID)
            }
        }
        // An object related to one whose row is gone cannot be saved.
        let error = await ObjectContext(coordinator: coordinator).perform { context in
            let pet = context.insert("Pet")
            pet[toOne: "owner"] = context.fault(for: personID)
            return await #expect(throws: TernError.self) { try await context.save() }
        }
        #expect(error?.code == .validationFailed)
        #expect(error?.failures.map(\.propertyName) == ["owner"])
    }

    func childContextFaultsSeeTheParentsChanges() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let personID = try await insertPersonWithPets(coordinator)
        let parent = ObjectContext(coordinator: coordinator)
        let (petIDs, newID) = try await parent.perform { context in
            let person = try await context.object(with: personID)
            person["name"] = "Bea"
            let pets = person.objects(for: "pets").sorted {
                ($0["name"] as String? ?? "") < ($1["name"] as String? ?? "")
            }
            context.delete(pets[0])
            let pet = context.insert("Pet")
            pet["name"] = "Kit"
            return (pets.map(\.objectID), pet.objectID)
        }
        let child = ObjectContext(parent: parent)
        let seen = await child.perform { context in
            let person = context.fault(for: personID)
            let rex = context.fault(for: petIDs[0])
            let tom = context.fault(for: petIDs[1])
            let kit = context.fault(for: newID)
            return [
                person["name"] as String?, rex["name"] as String?, rex.isInaccessible ? "inaccessible" : "accessible",
                tom["name"] as String?, kit["name"] as String?,
            ]
        }
        #expect(seen == ["Bea", nil, "inaccessible", "Tom", "Kit"])
        // Changes the parent makes later show in the child's next perform.
        await parent.perform { context in context.registeredObject(for: personID)?["name"] = "Cy" }
        let later = await child.perform { context in
            context.reset()
            return context.fault(for: personID)["name"] as String?
        }
        #expect(later == "Cy")
    }

    func childContextsAdoptPermanentIDs() async throws {
        let (coordinator, store) = try await makeCoordinator()
        let parent = ObjectContext(coordinator: coordinator)
        let child = ObjectContext(parent: parent)
        let (temporaryID, permanentID) = try await child.perform { context in
            let pet = context.insert("Pet")
            pet["name"] = "Rex"
            try await context.save()
            let temporaryID = pet.objectID
            try await parent.perform { parent in try await parent.save() }
            let byTemporary = try await context.object(with: temporaryID)
            let byPermanent = try await context.object(with: pet.objectID)
            #expect(byTemporary === pet)
            #expect(byPermanent === pet)
            #expect(context.registeredObject(for: temporaryID) === pet)
            pet["name"] = "Max"
            try await context.save()
            return (temporaryID, pet.objectID)
        }
        #expect(temporaryID.isTemporary)
        #expect(!permanentID.isTemporary)
        #expect(permanentID.storeIdentifier == store.identifier)
        let names = try await parent.perform { context in
            let pet = try await context.object(with: temporaryID)
            #expect(pet.objectID == permanentID)
            let hasChanges = context.hasChanges
            #expect(hasChanges)
            try await context.save()
            return try await ObjectContext(coordinator: coordinator).fetchDictionaries(FetchRequest(entityName: "Pet"))
        }
        #expect(names == [["name": .string("Max")]])
        // Obtaining permanent IDs before a save.
        let (obtained, saved) = try await ObjectContext(coordinator: coordinator).perform { context in
            let pet = context.insert("Pet")
            pet["name"] = "Kit"
            try await context.obtainPermanentIDs(for: [pet])
            let obtained = pet.objectID
            #expect(pet.isInserted)
            try await context.save()
            return (obtained, pet.objectID)
        }
        #expect(!obtained.isTemporary)
        #expect(obtained == saved)
        let kit = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.object(with: obtained)["name"] as String?
        }
        #expect(kit == "Kit")
    }
}
