import TernCore
import Testing

/// Behaviours about validation, constraints, versions and merge policies.
extension StoreConformance {
    func validationFailures() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let (error, ids) = await ObjectContext(coordinator: coordinator).perform { context in
            let nameless = context.insert("Person")
            let robot = context.insert("Person")
            robot["name"] = "R2D2"
            robot["age"] = 200
            let playlist = context.insert("Playlist")
            for _ in 0..<4 { playlist.add(context.insert("Song"), to: "songs") }
            let error = await #expect(throws: TernError.self) { try await context.save() }
            let hasChanges = context.hasChanges
            #expect(hasChanges)
            return (error, [nameless.objectID, robot.objectID, playlist.objectID])
        }
        #expect(error?.code == .validationFailed)
        let found = Set(
            (error?.failures ?? []).map { failure in
                let index = failure.objectID.flatMap { ids.firstIndex(of: $0) } ?? -1
                return "\(failure.entityName ?? "?").\(failure.propertyName ?? "?")@\(index)"
            })
        #expect(found == ["Person.name@0", "Person.name@1", "Person.age@1", "Playlist.songs@2"])
        #expect(error?.failures.allSatisfy { $0.code == .validationFailed } == true)
        #expect(try await ObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Person")) == 0)
    }

    func uniquenessConstraints() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let inContext = await ObjectContext(coordinator: coordinator).perform { context in
            for _ in 0..<2 { context.insert("Account")["email"] = "a@example.com" }
            return await #expect(throws: TernError.self) { try await context.save() }
        }
        #expect(inContext?.code == .validationFailed)
        #expect(inContext?.failures.map(\.propertyName) == ["email"])
        try await ObjectContext(coordinator: coordinator).perform { context in
            context.insert("Account")["email"] = "a@example.com"
            context.insert("Account")["email"] = "b@example.com"
            try await context.save()
        }
        let inStore = await ObjectContext(coordinator: coordinator).perform { context in
            context.insert("Account")["email"] = "a@example.com"
            return await #expect(throws: TernError.self) { try await context.save() }
        }
        #expect(inStore?.code == .constraintConflict)
        #expect(inStore?.failures.count == 1)
        #expect(try await ObjectContext(coordinator: coordinator).count(for: FetchRequest(entityName: "Account")) == 2)
    }

    func staleVersionIsRefused() async throws {
        let (_, store) = try await makeCoordinator()
        let key = try await store.newPrimaryKeys(forEntity: "Pet", count: 1)[0]
        let reference = RowReference(entityName: "Pet", primaryKey: key)
        let inserted = try await store.save(
            StoreChangeSet(inserted: [StoreRow(reference: reference, attributes: ["name": .string("a")])]))
        let version = try #require(inserted.newVersions[reference])
        let first = StoreRow(reference: reference, version: version, attributes: ["name": .string("b")])
        let updated = try await store.save(StoreChangeSet(updated: [first]))
        #expect(try #require(updated.newVersions[reference]) > version)
        var stale = first
        stale.attributes["name"] = .string("c")
        let error = await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(updated: [stale])) }
        #expect(error?.code == .mergeConflict)
        #expect(error?.failures.compactMap(\.objectID?.primaryKey) == [key])
        let staleDelete = await #expect(throws: TernError.self) {
            try await store.save(StoreChangeSet(deleted: [reference: version]))
        }
        #expect(staleDelete?.code == .mergeConflict)
        #expect(try await store.rows(for: [reference]).first?.attributes["name"] == .string("b"))
    }

    func mergePolicies() async throws {
        let cases: [(MergePolicy, [String: String])] = [
            (.storeTrumps, ["name": "Bea", "nickname": "C", "age": "31"]),
            (.objectTrumps, ["name": "Cy", "nickname": "C", "age": "31"]),
            (.overwrite, ["name": "Cy", "nickname": "C", "age": "30"]),
            (.rollback, ["name": "Bea", "nickname": "A", "age": "31"]),
        ]
        for (policy, expected) in cases {
            let result = try await conflict(policy: policy)
            #expect(result == expected, "merge policy \(policy)")
        }
        let (coordinator, _) = try await makeCoordinator()
        let error = try await conflict(policy: .error, coordinator: coordinator)
        #expect(error.code == .mergeConflict)
        #expect(error.failures.count == 1)
    }

    /// Two contexts change the same person; the second saves with `policy`. Returns the saved values.
    private func conflict(policy: MergePolicy) async throws -> [String: String] {
        let (coordinator, _) = try await makeCoordinator()
        let id = try await conflictingEdits(policy: policy, coordinator: coordinator)
        try #require(id.1 == nil)
        return try await ObjectContext(coordinator: coordinator).perform { context in
            let person = try await context.object(with: id.0)
            return [
                "name": person["name"] ?? "", "nickname": person["nickname"] ?? "",
                "age": (person["age"] as Int?).map(String.init) ?? "",
            ]
        }
    }

    private func conflict(policy: MergePolicy, coordinator: PersistentStoreCoordinator) async throws -> TernError {
        try #require(try await conflictingEdits(policy: policy, coordinator: coordinator).1)
    }

    private func conflictingEdits(
        policy: MergePolicy, coordinator: PersistentStoreCoordinator
    ) async throws -> (ObjectID, TernError?) {
        let id = try await ObjectContext(coordinator: coordinator).perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            person["nickname"] = "A"
            person["age"] = 30
            try await context.save()
            return person.objectID
        }
        let first = ObjectContext(coordinator: coordinator)
        let second = ObjectContext(coordinator: coordinator)
        _ = try await second.perform { context in try await context.object(with: id).objectID }
        try await first.perform { context in
            let person = try await context.object(with: id)
            person["name"] = "Bea"
            person["age"] = 31
            try await context.save()
        }
        return try await second.perform { context in
            context.mergePolicy = policy
            let person = try await context.object(with: id)
            person["name"] = "Cy"
            person["nickname"] = "C"
            do {
                try await context.save()
                return (id, nil)
            } catch let error as TernError {
                return (id, error)
            }
        }
    }
}
