public import Foundation
public import TernCore
public import TernFormats
public import TernMigration

/// Where a container's store lives, where older versions of the app kept it, how it migrates
/// and what it starts with: Core Data's `NSPersistentStoreDescription`, with typed options.
///
/// ```swift
/// let library = support.appendingPathComponent("Recipes.sqlite")
/// var description = StoreDescription(url: library)
/// description.legacyLocations = [documents.appendingPathComponent("Recipes.sqlite")]
/// description.migration = .automatic(mappings: try ChefsBook.mappings(for: model), policies: ChefsBook.policies)
/// description.seed = .records(starterURL, RecordImportOptions(format: .json))
/// ```
public struct StoreDescription: Sendable {
    /// The store's current location.
    public var url: URL
    /// The type of a store created at ``url``; an existing file is opened as the type its contents
    /// show. With ``/TernCore/StoreKind/inMemory`` the container starts from an empty store in memory
    /// each time (previews, tests): ``url`` only names it, and only a ``Seed/records(_:_:)`` seed applies.
    public var kind: StoreKind
    /// The model configuration whose entities the store holds; nil for every entity.
    public var configuration: String?
    /// How the store is opened.
    public var options: StoreOptions
    /// What happens when the store was written by an older version of the model.
    public var migration: Migration
    /// Where older versions of the app kept the store, in order of preference. When ``url`` has no
    /// store, the first one found is moved there (see ``PersistentContainer/loadStores()``).
    public var legacyLocations: [URL]
    /// The starter data of a new store, if any.
    public var seed: Seed?

    /// Creates a description of a SQLite store that migrates automatically (steps inferred).
    ///
    /// - Parameters:
    ///   - url: The store's current location.
    ///   - kind: The type of a new store; SQLite by default.
    public init(url: URL, kind: StoreKind = .sqlite) {
        self.url = url
        self.kind = kind
        self.configuration = nil
        self.options = StoreOptions()
        self.migration = .automatic()
        self.legacyLocations = []
        self.seed = nil
    }

    // MARK: - Migration

    /// What a container does with a store written by an older version of the model.
    public struct Migration: Sendable {
        /// Whether the store is migrated; when false, loading such a store fails.
        public var isAutomatic: Bool
        /// Explicit mappings for some steps; the other steps are inferred.
        public var mappings: [StepMapping]
        /// The custom policies the mappings name.
        public var policies: MigrationPolicyRegistry

        /// Migrates to the current version as ``/TernMigration/MigrationPlanner`` plans it: one
        /// inferred step, or a chain where these mappings (or an explicit version order) call for one.
        ///
        /// - Parameters:
        ///   - mappings: Explicit step mappings; steps without one are inferred.
        ///   - policies: The custom entity migration policies the mappings name.
        /// - Returns: The policy.
        public static func automatic(
            mappings: [StepMapping] = [], policies: MigrationPolicyRegistry = MigrationPolicyRegistry()
        ) -> Migration {
            Migration(isAutomatic: true, mappings: mappings, policies: policies)
        }

        /// Never migrates: a store of another version fails to load with ``/TernCore/TernError/Code/incompatibleStore``.
        public static let none = Migration(isAutomatic: false, mappings: [], policies: MigrationPolicyRegistry())
    }

    // MARK: - Seeding

    /// The starter data of a store.
    public enum Seed: Sendable {
        /// A store file shipped with the app, copied on first launch (when neither the current
        /// location nor a legacy one has a store) and migrated if an older model version wrote it.
        case store(URL)
        /// A TSV, CSV or JSON file imported in a background context, with upsert by uniqueness
        /// key, so that a store that already holds the same objects gets no duplicates. It is
        /// imported again only when the file's contents change (a digest is kept in the store's metadata).
        case records(URL, RecordImportOptions)
    }
}

/// How a container opens a store.
///
/// ```swift
/// var options = StoreOptions()
/// options.isReadOnly = true
/// ```
public struct StoreOptions: Sendable, Hashable {
    /// Whether saves are refused; a read-only store is never moved, migrated or seeded.
    public var isReadOnly: Bool
    /// How many objects a migration step reads per query.
    public var migrationBatchSize: Int
    /// How long loading waits for another process that holds the store's lock (see
    /// `docs/Container.md`); `.zero` fails at once, nil waits as long as it takes.
    public var lockTimeout: Duration?

    /// Creates options: writable, 1,000 objects per migration batch, 30 seconds' wait for the lock.
    ///
    /// - Parameters:
    ///   - isReadOnly: Whether saves are refused.
    ///   - migrationBatchSize: How many objects a migration step reads per query.
    ///   - lockTimeout: How long loading waits for another process holding the store's lock.
    public init(isReadOnly: Bool = false, migrationBatchSize: Int = 1000, lockTimeout: Duration? = .seconds(30)) {
        self.isReadOnly = isReadOnly
        self.migrationBatchSize = migrationBatchSize
        self.lockTimeout = lockTimeout
    }
}
