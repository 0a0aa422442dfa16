import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import Testing

/// Several contexts on several tasks and two processes write the same SQLite store at once,
/// under each merge policy: no update is lost other than by the policy's own rule.
///
/// Each writer owns one attribute of every `Counter` and sets it to its round number, one save a
/// round, keeping its objects between rounds so that its snapshots go stale (the loop is
/// `StressWriter` in `tern-crash-helper`, and ``writer(_:attribute:policy:rounds:)`` here).
/// Under `.error` (with retries), `.storeTrumps` and `.objectTrumps` every counter must end with
/// every writer's last round; under `.overwrite` the last save's writer keeps its last round and
/// others may go back to older rounds; under `.rollback` a writer may lose its own rounds. No
/// value is ever one nobody wrote, no counter is lost and the store verifies clean.
/// `TERN_STRESS_ROUNDS` sets the rounds (20 by default).
@Suite(.serialized) struct ConcurrencyStressTests {
    static let counterCount = 12
    static let inProcessWriters = ["a", "b", "c"]
    static let processWriters = ["p", "q"]
    static let policies: [String] = ["error", "storeTrumps", "objectTrumps", "overwrite", "rollback"]
    static let rounds = Int(ProcessInfo.processInfo.environment["TERN_STRESS_ROUNDS"] ?? "") ?? 20

    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Counter") {
                Attribute("slot", .integer64)
                for name in inProcessWriters + processWriters { Attribute(name, .integer64) }
            }
        }
    }

    static func policy(named name: String) -> MergePolicy {
        switch name {
        case "storeTrumps": .storeTrumps
        case "objectTrumps": .objectTrumps
        case "overwrite": .overwrite
        case "rollback": .rollback
        default: .error
        }
    }

    /// One in-process writer, as `StressWriter` in the helper: its attribute set to 1…rounds.
    static func writer(_ objects: ObjectContext, attribute: String, policy: MergePolicy, rounds: Int) async throws {
        try await objects.perform { context in
            context.mergePolicy = policy
            var counters = try await context.fetch(FetchRequest(entityName: "Counter"))
            for round in 1...rounds {
                while true {
                    for counter in counters { counter[attribute: attribute] = .integer(Int64(round)) }
                    do {
                        try await context.save()
                        break
                    } catch let error as TernError where error.code == .mergeConflict && policy == .error {
                        context.reset()
                        counters = try await context.fetch(FetchRequest(entityName: "Counter"))
                    }
                }
                await Task.yield()
            }
        }
    }

    @Test(arguments: policies)
    func writersOnTasksAndProcessesLoseNoUpdateButByThePolicysRule(policyName: String) async throws {
        let helper = try #require(
            CrashHarness.builtExecutable(named: "tern-crash-helper"), "tern-crash-helper is not built")
        let folder = try TemporaryDirectory()
        let url = folder.path("Counters.sqlite")
        let model = try Self.model()
        do {
            let store = try SQLiteStore(at: url, model: model)
            let keys = try await store.newPrimaryKeys(forEntity: "Counter", count: Self.counterCount)
            _ = try await store.save(
                StoreChangeSet(
                    inserted: keys.map { key in
                        var attributes: [String: AttributeValue] = ["slot": .integer(key)]
                        for name in Self.inProcessWriters + Self.processWriters { attributes[name] = .integer(0) }
                        return StoreRow(
                            reference: RowReference(entityName: "Counter", primaryKey: key), attributes: attributes)
                    }))
        }
        let policy = Self.policy(named: policyName)
        let processes = try Self.processWriters.map { name in
            try CrashHarness.launch(helper, ["stress", url.path, name, policyName, String(Self.rounds)])
        }
        let store = try SQLiteStore(at: url, model: model)
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in Self.inProcessWriters {
                group.addTask {
                    try await Self.writer(
                        ObjectContext(coordinator: coordinator), attribute: name, policy: policy, rounds: Self.rounds)
                }
            }
            try await group.waitForAll()
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "a writer process failed under \(policyName)")
        }

        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.problems.isEmpty, "\(report.problems.prefix(3))")
        let rows = try await SQLiteStore(at: url, model: model, configuration: .readOnly)
            .fetch(StoreFetchRequest(entityName: "Counter"))
        #expect(rows.count == Self.counterCount)
        let writers = Self.inProcessWriters + Self.processWriters
        var lost: [String: Int] = [:]
        for row in rows {
            let values = writers.map { name -> Int64 in
                guard case .integer(let value)? = row.attributes[name] else { return -1 }
                return value
            }
            #expect(values.allSatisfy { (0...Int64(Self.rounds)).contains($0) }, "\(row.reference): \(values)")
            for (name, value) in zip(writers, values) where value != Self.rounds { lost[name, default: 0] += 1 }
            switch policy {
            case .error, .storeTrumps, .objectTrumps:
                #expect(
                    values.allSatisfy { $0 == Self.rounds },
                    "\(policyName) lost an update of \(row.reference): \(values)")
            case .overwrite:
                #expect(
                    values.contains(Int64(Self.rounds)), "no writer's last save survived in \(row.reference): \(values)"
                )
            default:
                break
            }
        }
        print(
            "stress[\(policyName)]: \(writers.count) writers × \(Self.rounds) rounds on \(Self.counterCount) counters; "
                + "counters missing a writer's last round: \(lost.isEmpty ? "none" : lost.sorted { $0.key < $1.key }.description)"
        )
    }
}
