import Foundation
import TernCore

/// The `stress` mode: one writer of the merge-policy stress test (`ConcurrencyStressTests`).
///
/// The writer fetches every `Counter` once and keeps the objects, so its snapshots go stale as
/// other writers save. In round r it sets its own attribute to r on every counter and saves
/// under the policy; with `.error` a conflict makes it reset, fetch again and retry the round.
/// Its attribute is nobody else's, so under `.error`, `.storeTrumps` and `.objectTrumps` each
/// counter must end with every writer's last round; `.overwrite` and `.rollback` may lose values
/// by their rules.
enum StressWriter {
    /// The policies by name.
    static let policies: [String: MergePolicy] = [
        "error": .error, "storeTrumps": .storeTrumps, "objectTrumps": .objectTrumps,
        "overwrite": .overwrite, "rollback": .rollback,
    ]

    /// Runs `rounds` rounds; returns how many conflicts made it retry.
    @discardableResult
    static func run(_ objects: ObjectContext, attribute: String, policy: MergePolicy, rounds: Int) async throws -> Int {
        try await objects.perform { context in
            context.mergePolicy = policy
            var counters = try await context.fetch(FetchRequest(entityName: "Counter"))
            var retries = 0
            for round in 1...rounds {
                while true {
                    for counter in counters { counter[attribute: attribute] = .integer(Int64(round)) }
                    do {
                        try await context.save()
                        break
                    } catch let error as TernError where error.code == .mergeConflict && policy == .error {
                        retries += 1
                        context.reset()
                        counters = try await context.fetch(FetchRequest(entityName: "Counter"))
                    }
                }
                await Task.yield()
            }
            return retries
        }
    }
}
