import Foundation
import TernTestSupport
import Testing

/// Two processes update the same objects of one SQLite store; each merge policy resolves the
/// version conflicts the other process causes, and no update is lost but by the policy's rule.
@Suite struct TwoProcessMergePolicyTests {
    @Test(arguments: TwoProcessConflict.policies)
    func conflictsBetweenProcessesFollowThePolicy(_ policy: String) throws {
        let folder = try TemporaryDirectory()
        let rounds = 4
        let outcome = try TwoProcessConflict.run(
            storeArguments: ["sqlite", folder.path("tallies.sqlite").path], policy: policy, objects: 3, rounds: rounds)
        let expected = TwoProcessConflict.expectedTally(policy: policy, rounds: rounds)
        #expect(outcome.second.store == Array(repeating: expected, count: 3))
        #expect(outcome.first.store == outcome.second.store)
        // The last saver's view is what the store holds: nothing it saved was lost.
        #expect(outcome.second.view == outcome.second.store)
        // Every increment a process saw saved is in the store, except those `overwrite` lets B
        // replace with its stale values.
        #expect(outcome.second.applied == expected[1] * 3)
        #expect(outcome.first.applied == rounds * 3)
        if policy != "overwrite" { #expect(outcome.first.applied == expected[0] * 3) }
        // Under `error` every save but A's first conflicts once and is retried.
        let conflicts = policy == "error" ? [rounds - 1, rounds] : [0, 0]
        #expect([outcome.first.conflicts, outcome.second.conflicts] == conflicts)
    }
}
