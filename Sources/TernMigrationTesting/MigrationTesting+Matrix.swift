import Foundation
public import TernCore
public import TernMigration
public import TernSQLite

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
        model: VersionedModel, mappings: [StepMapping] = [], policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        objectsPerEntity: Int = 5, kind: StoreKind = .sqlite
    ) async throws -> [VersionResult] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-migration-matrix-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var results: [VersionResult] = []
        var failures: [MigrationTestError] = []
        let current = model.currentVersion.name
        for (index, version) in model.versions.enumerated() where version.name != current {
            do {
                let objects = try sampleObjects(for: version.model, count: objectsPerEntity)
                let url = folder.appendingPathComponent("\(index).\(kind == .sqlite ? "sqlite" : kind.rawValue)")
                try await makeStore(version: version.name, of: model, at: url, objects: objects, kind: kind)
                let report = try await migrateAndValidate(store: url, model: model, mappings: mappings, policies: policies)
                results.append(VersionResult(version: version.name, objects: objects.count, report: report))
            } catch let error as MigrationTestError {
                failures.append(error)
            } catch {
                failures.append(
                    MigrationTestError(
                        .migrationFailed, "\(version.name): \(error)", sourceVersion: version.name, underlying: error))
            }
        }
        guard var first = failures.first else { return results }
        if failures.count > 1 {
            first.message += " (and \(failures.count - 1) other version(s) failed: "
                + failures.dropFirst().compactMap(\.sourceVersion).joined(separator: ", ") + ")"
        }
        throw first
    }
}
