package import Foundation
public import TernCore

/// How a store migration runs.
public struct MigrationOptions: Sendable {
    /// Where the migrated store goes, a file or a PostgreSQL store; nil migrates in place
    /// (atomically).
    public var destination: StoreLocation?
    /// Whether inferred steps run in place or are built beside the store; ``MigrationStrategy/automatic`` by default.
    public var strategy: MigrationStrategy = .automatic
    /// How many source objects are read per query.
    public var batchSize: Int
    /// The custom policies the mappings name.
    public var policies: MigrationPolicyRegistry
    /// The clock and UUID source of value expressions.
    public var environment: ExpressionEnvironment
    /// How long a migration of a PostgreSQL store waits for another process's migration of it to
    /// finish before failing; nil (the default) waits as long as it takes.
    public var lockTimeout: Duration?
    /// Whether entity mappings whose every value has an SQL form run as one `INSERT … SELECT` on
    /// stores that can (SQLite and PostgreSQL), with the results of the Swift path; true by default. Turn it off to
    /// run every mapping object by object (to compare the two, say).
    public var compilesMappingsToSQL = true

    /// Creates options.
    ///
    /// - Parameters:
    ///   - destination: Where the migrated store goes, a file or a PostgreSQL store; nil
    ///     migrates in place.
    ///   - batchSize: How many source objects are read per query.
    ///   - policies: The custom policies the mappings name.
    ///   - environment: The clock and UUID source of value expressions.
    ///   - strategy: Whether inferred steps run in place or are built beside the store.
    public init(
        destination: StoreLocation? = nil, batchSize: Int = 1000,
        policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        environment: ExpressionEnvironment = ExpressionEnvironment(), strategy: MigrationStrategy = .automatic
    ) {
        (self.destination, self.batchSize, self.policies, self.environment) = (
            destination, batchSize, policies, environment
        )
        self.strategy = strategy
    }

    /// The destination file, for the migrators of file stores; nil in place (or for a
    /// PostgreSQL destination, which TernStores' `StoreMigrator` never hands them).
    package var destinationURL: URL? { destination?.fileURL }
}
