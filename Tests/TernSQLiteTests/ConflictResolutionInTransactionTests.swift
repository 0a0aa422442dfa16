import Foundation
import Synchronization
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Merge-policy conflicts are resolved inside the save's IMMEDIATE transaction: the conflicting
/// rows are read and the resolved change set written while the store's write lock is held, so no
/// other writer can slip in between the check and the write (issue #10: resolution used to read
/// the rows outside the transaction and retry).
@Suite struct ConflictResolutionInTransactionTests {
    static func pet(_ key: Int64, version: Int64 = 0, _ name: String) -> StoreRow {
        StoreRow(
            reference: RowReference(entityName: "Pet", primaryKey: key), version: version,
            attributes: ["name": .string(name)])
    }

    /// A store with one pet, saved by `a` at version 1 then renamed by `b` (version 2).
    static func conflictingStores(in folder: TemporaryDirectory) async throws -> (
        SQLiteStore, SQLiteStore, RowReference
    ) {
        let url = folder.path("pets.sqlite")
        let a = try SQLiteStore(at: url, model: ConformanceModel.model)
        let b = try SQLiteStore(at: url, model: ConformanceModel.model)
        let key = try await a.newPrimaryKeys(forEntity: "Pet", count: 1)[0]
        _ = try await a.save(StoreChangeSet(inserted: [pet(key, "Rex")]))
        _ = try await b.save(StoreChangeSet(updated: [pet(key, version: 1, "Max")]))
        return (a, b, RowReference(entityName: "Pet", primaryKey: key))
    }

    @Test func theResolverRunsUnderTheWriteLockAndItsResultIsWritten() async throws {
        let folder = try TemporaryDirectory()
        let (a, b, reference) = try await Self.conflictingStores(in: folder)
        let url = folder.path("pets.sqlite")
        let seen = Mutex<[String]>([])
        let resolver = StoreConflictResolver { changes, conflicts, stored in
            // Another writer tries to slip in between the check and the write.
            var configuration = SQLiteConfiguration()
            configuration.busyTimeout = .zero
            let intruder = try Connection(path: url.path, configuration: configuration)
            do {
                try intruder.execute("UPDATE ZPET SET ZNAME = 'Intruder', Z_OPT = Z_OPT + 1")
                seen.withLock { $0.append("intruder wrote") }
            } catch {
                seen.withLock { $0.append((error as? SQLiteError)?.resultCode == 5 ? "busy" : "\(error)") }
            }
            let row = try #require(stored[reference])
            seen.withLock {
                $0.append("\(conflicts.sorted()) \(row.version) \(row.attributes["name"].map { "\($0)" } ?? "nil")")
            }
            var resolved = changes
            resolved.updated = [Self.pet(reference.primaryKey, version: row.version, "Max and Rex")]
            return resolved
        }
        let result = try await a.save(
            StoreChangeSet(updated: [Self.pet(reference.primaryKey, version: 1, "Rex II")]),
            resolvingConflictsWith: resolver)
        let lines = seen.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.first == "busy", "the intruder must not get the write lock while the resolver runs")
        #expect(lines.last?.hasPrefix("[\(reference)] 2 ") == true, "the resolver sees the stored row: \(lines)")
        #expect(result.newVersions[reference] == 3)
        let stored = try #require(try await b.rows(for: [reference]).first)
        #expect(stored.version == 3)
        #expect(stored.attributes["name"] == .string("Max and Rex"))
    }

    /// Through the protocol existential, the store's own implementation answers, not the
    /// protocol extension's default (which would throw the conflict without resolving it).
    @Test func throughThePersistentStoreExistentialTheStoreResolves() async throws {
        let folder = try TemporaryDirectory()
        let (a, b, reference) = try await Self.conflictingStores(in: folder)
        let store: any PersistentStore = a
        let resolver = StoreConflictResolver { changes, _, stored in
            var resolved = changes
            resolved.updated = changes.updated.map { row in
                var row = row
                row.version = stored[row.reference]?.version ?? row.version
                return row
            }
            return resolved
        }
        _ = try await store.save(
            StoreChangeSet(updated: [Self.pet(reference.primaryKey, version: 1, "Rex II")]),
            resolvingConflictsWith: resolver)
        #expect(try await b.rows(for: [reference]).first?.attributes["name"] == .string("Rex II"))
    }

    /// A resolver that leaves the conflict in place fails the save, and nothing is written.
    @Test func anUnresolvedConflictStillFailsTheSave() async throws {
        let folder = try TemporaryDirectory()
        let (a, b, reference) = try await Self.conflictingStores(in: folder)
        let resolver = StoreConflictResolver { changes, _, _ in changes }
        let error = await #expect(throws: TernError.self) {
            _ = try await a.save(
                StoreChangeSet(updated: [Self.pet(reference.primaryKey, version: 1, "Rex II")]),
                resolvingConflictsWith: resolver)
        }
        #expect(error?.code == .mergeConflict)
        #expect(try await b.rows(for: [reference]).first?.attributes["name"] == .string("Max"))
    }

    /// Through contexts: under `.storeTrumps` a save over another writer's change keeps both
    /// changes (each on its own property) in one save, and the object ends up with the merge.
    @Test func aContextSaveMergesInsideTheTransaction() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("people.sqlite")
        let first = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await first.addStore(try SQLiteStore(at: url, model: ConformanceModel.model))
        let second = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await second.addStore(try SQLiteStore(at: url, model: ConformanceModel.model))
        let writer = ObjectContext(coordinator: first)
        let id = try await writer.perform { context in
            let person = context.insert("Person")
            person["name"] = "Ada"
            person["age"] = 36
            try await context.save()
            return person.objectID
        }
        let other = ObjectContext(coordinator: second)
        try await other.perform { context in
            let person = try await context.object(with: id)
            person["nickname"] = "Countess"
            try await context.save()
        }
        let merged = try await writer.perform { context in
            context.mergePolicy = .storeTrumps
            let person = try await context.object(with: id)
            person["age"] = 37
            try await context.save()
            return [person["age"] as Int? == 37, person["nickname"] as String? == "Countess", !person.hasChanges]
        }
        #expect(merged == [true, true, true])
        let stored = try await SQLiteStore(at: url, model: ConformanceModel.model).rows(for: [
            try #require(id.rowReference)
        ])
        #expect(stored.first?.attributes["age"] == .integer(37))
        #expect(stored.first?.attributes["nickname"] == .string("Countess"))
        #expect(stored.first?.version == 3)
    }
}
