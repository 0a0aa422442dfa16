import Foundation

/// The scenarios of an ``ObjectContext`` over a store (inserting, fetching, counting): the Tern
/// side is ``TernSide``, the baseline ``BaselineSide``.
struct ContextScenario: ScenarioImplementation {
    /// One of the insert, fetch and count scenarios.
    let scenario: Scenario

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        try await TernSide(url: input.store, rows: input.rows).run(scenario)
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        try BaselineSide(url: input.store, rows: input.rows).run(scenario)
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        scenario.writes ? try BaselineSide.checksumOfRows(at: input.store) : nil
    }
}
