public import Foundation
public import TernCore
public import TernMigration
import TernSQLite

extension MigrationTesting {
    /// How one historical version's store migrated to the current version.
    public struct VersionResult: Sendable {
        /// The version the store was made at.
        public var version: String
        /// The number of objects the store was made with.
        public var objects: Int
        /// The migration's report.
        public var report: MigrationReport
    }

    /// The "users who skipped versions" matrix in one call: for every historical version, a store
    /// of sample objects (``sampleObjects(for:count:)``) migrated to the current version and
    /// checked (``migrateAndValidate(store:model:to:mappings:policies:)``).
    ///
    /// - Parameters:
    ///   - model: The app's versioned model, its versions in migration order.
    ///   - mappings: Explicit mappings for some steps.
    ///   - policies: The custom policies the mappings name.
    ///   - objectsPerEntity: How many sample objects of each concrete entity.
    ///   - kind: The stores' type.
    /// - Returns: One result per version other than the current one, in version order.
    /// - Throws: The first version's failure, a ``MigrationTestError`` naming the source version,
    ///   the step and the property; every version is tried before throwing, and the error's
    ///   message lists the other failing versions too.
    /// - Complexity: One store and one migration per version.
    public static func everyVersionMigrates(
        model: VersionedModel, mappings: [StepMapping] = [],
        policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        objectsPerEntity: Int = 5, kind: StoreKind = .sqlite
    ) async throws -> [VersionResult] {
        let checks = await check(
            model: model, mappings: mappings, policies: policies, objectsPerEntity: objectsPerEntity, kind: kind)
        let failures = checks.compactMap(\.failure)
        guard var first = failures.first else {
            return checks.compactMap { check in
                check.report.map { VersionResult(version: check.source, objects: check.objects, report: $0) }
            }
        }
        if failures.count > 1 {
            first.message +=
                " (and \(failures.count - 1) other version(s) failed: "
                + failures.dropFirst().compactMap(\.sourceVersion).joined(separator: ", ") + ")"
        }
        throw first
    }

    /// How one store migrated to the current version, passed or not.
    public struct CheckResult: Sendable {
        /// The version a sample store was made at, or the path of a given store.
        public var source: String
        /// Whether the source is a given store rather than a generated one.
        public var isStore: Bool
        /// The number of objects the store held.
        public var objects: Int
        /// The migration's report, when it ran and passed its checks.
        public var report: MigrationReport?
        /// Why it failed, when it did.
        public var failure: MigrationTestError?
        /// How long making (for a sample store), migrating and checking took.
        public var duration: Duration

        /// Whether the store migrated and passed every check.
        public var passed: Bool { failure == nil }
    }

    /// Migrates a sample store of every historical version, and a copy of each given store, to
    /// the current version, and checks each (``migrateAndValidate(store:model:to:mappings:policies:)``);
    /// failures are returned, not thrown, for a report of the whole matrix (`tern check-migrations`).
    ///
    /// - Parameters:
    ///   - model: The app's versioned model.
    ///   - mappings: Explicit mappings for some steps.
    ///   - policies: The custom policies the mappings name.
    ///   - objectsPerEntity: How many sample objects of each concrete entity.
    ///   - stores: Real stores to check too (copied first, never written).
    ///   - kind: The sample stores' type.
    /// - Returns: One result per historical version, then one per given store.
    /// - Complexity: One store and one migration per version and per store.
    public static func check(
        model: VersionedModel, mappings: [StepMapping] = [],
        policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        objectsPerEntity: Int = 5, stores: [URL] = [], kind: StoreKind = .sqlite
    ) async -> [CheckResult] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tern-migration-matrix-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var results: [CheckResult] = []
        let clock = ContinuousClock()
        let current = model.currentVersion.name
        for (index, version) in model.versions.enumerated() where version.name != current {
            let start = clock.now
            var result = CheckResult(source: version.name, isStore: false, objects: 0, duration: .zero)
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let objects = try sampleObjects(for: version.model, count: objectsPerEntity)
                result.objects = objects.count
                let url = folder.appendingPathComponent("\(index).\(kind == .sqlite ? "sqlite" : kind.rawValue)")
                try await makeStore(version: version.name, of: model, at: url, objects: objects, kind: kind)
                result.report = try await migrateAndValidate(
                    store: url, model: model, mappings: mappings, policies: policies)
            } catch {
                result.failure = Self.failure(error, source: version.name)
            }
            result.duration = clock.now - start
            results.append(result)
        }
        for store in stores {
            let start = clock.now
            var result = CheckResult(source: store.path, isStore: true, objects: 0, duration: .zero)
            do {
                let report = try await migrateAndValidate(
                    copyOf: store, model: model, mappings: mappings, policies: policies)
                result.report = report
                result.objects = report.objectsPerStep.first ?? 0
            } catch {
                result.failure = Self.failure(error, source: store.lastPathComponent)
            }
            result.duration = clock.now - start
            results.append(result)
        }
        return results
    }

    /// An error as a test failure, naming its source.
    private static func failure(_ error: any Error, source: String) -> MigrationTestError {
        if let failure = error as? MigrationTestError { return failure }
        return MigrationTestError(
            .migrationFailed, "\(source): \(error)", sourceVersion: source, underlyingError: error)
    }
}
