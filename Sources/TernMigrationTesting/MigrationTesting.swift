public import Foundation
public import TernCore
public import TernMigration
import TernSQLite
import TernStores

/// A kit for an app's own migration tests, with Swift Testing or XCTest: make a store of any
/// historical version with valid sample objects, migrate it and check what must hold afterwards,
/// and run the whole "users who skipped versions" matrix in one call.
///
/// Every function throws a ``MigrationTestError`` naming the source version, the step, the
/// entity and the property, so a failing `try` in a test says what broke.
///
/// ```swift
/// @Test func everyReleasedVersionMigrates() async throws {
///     let model = try XcodeModel.readVersionedModel(at: bundleURL)
///     let results = try await MigrationTesting.everyVersionMigrates(model: model, objectsPerEntity: 5)
///     #expect(results.count == model.versions.count - 1)
/// }
///
/// @Test func theShippedStoreMigrates() async throws {
///     let report = try await MigrationTesting.migrateAndValidate(copyOf: fixtureURL, model: model)
///     #expect(report.plan.destination == model.currentVersion.name)
/// }
/// ```
///
/// ## Topics
///
/// ### Making stores
/// - ``sampleObjects(for:count:)``
/// - ``makeStore(version:of:at:objects:kind:)``
///
/// ### Migrating and checking
/// - ``migrateAndValidate(store:model:to:mappings:policies:)``
/// - ``migrateAndValidate(copyOf:model:to:mappings:policies:)``
/// - ``everyVersionMigrates(model:mappings:policies:objectsPerEntity:kind:)``
public enum MigrationTesting {
    // MARK: - Making stores

    /// Creates a store of a model version holding the given objects.
    ///
    /// - Parameters:
    ///   - version: The version's name.
    ///   - model: The app's versioned model.
    ///   - url: Where to create the store; nothing may exist there.
    ///   - objects: The objects, such as ``sampleObjects(for:count:)`` makes (keys as given).
    ///   - kind: The store's type: SQLite, binary or XML.
    /// - Returns: The store's URL.
    /// - Throws: ``MigrationTestError`` with code ``MigrationTestError/Code/unknownVersion``, or
    ///   the store's error when it cannot be created.
    /// - Complexity: O(*n*) in the number of objects.
    @discardableResult
    public static func makeStore(
        version: String, of model: VersionedModel, at url: URL, objects: [StoreRow], kind: StoreKind = .sqlite
    ) async throws -> URL {
        let versionModel = try Self.model(version, of: model)
        let store = try await StoreFiles.create(at: url, kind: kind, model: versionModel)
        var start = 0
        while start < objects.count {
            let batch = Array(objects[start..<min(objects.count, start + 5_000)])
            _ = try await store.save(StoreChangeSet(inserted: batch))
            start += batch.count
        }
        return url
    }

    // MARK: - Migrating and checking

    /// Migrates a store to a version and checks what must hold afterwards: every source object
    /// the plan carries over is there (counted per destination entity, where every mapping into it
    /// copies or transforms without a filter), the values of attributes an inferred step carries
    /// unchanged are the same object by object, the store is at the version asked for, and a
    /// SQLite store verifies clean against it (but for what the migration relaxed and reported
    /// in ``/TernMigration/MigrationReport/warnings``, as Core Data relaxes it).
    ///
    /// - Parameters:
    ///   - url: The store, migrated in place.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the current version when nil.
    ///   - mappings: Explicit mappings for some steps.
    ///   - policies: The custom policies the mappings name.
    /// - Returns: The migration's report.
    /// - Throws: ``MigrationTestError``: `migrationFailed` with the migration's error kept as
    ///   ``MigrationTestError/underlyingError``, `objectsLost`, `valueChanged`, `wrongVersion` or
    ///   `invalidResult`, naming the source version and, where known, the entity and property.
    /// - Complexity: O(*n*) in the store's objects (read twice: before and after).
    @discardableResult
    public static func migrateAndValidate(
        store url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        policies: MigrationPolicyRegistry = MigrationPolicyRegistry()
    ) async throws -> MigrationReport {
        let metadata = try StoreFiles.metadata(at: url)
        let sourceVersion = model.version(matching: metadata)?.name ?? "(unknown version)"
        let before = try await Snapshot(of: url, model: model, version: sourceVersion)
        let report: MigrationReport
        do {
            report = try await StoreMigrator().migrateStore(
                at: .file(url), model: model, to: target, mappings: mappings,
                options: MigrationOptions(policies: policies))
        } catch {
            let step = (error as? MigrationError)?.versionName
            throw MigrationTestError(
                .migrationFailed, "\(sourceVersion): the migration failed: \(error)", sourceVersion: sourceVersion,
                step: step, entity: (error as? MigrationError)?.entityName,
                property: (error as? MigrationError)?.propertyName,
                underlyingError: error)
        }
        let destination = report.plan.destination
        let after = try await Snapshot(of: url, model: model, version: destination)
        guard try Self.model(destination, of: model).isCompatible(with: StoreFiles.metadata(at: url)) else {
            throw MigrationTestError(
                .wrongVersion, "\(sourceVersion): the migrated store is not at version \(destination)",
                sourceVersion: sourceVersion)
        }
        try Accounting(plan: report.plan, model: model, source: sourceVersion).check(before: before, after: after)
        if try StoreFiles.kind(ofStoreAt: url) == .sqlite {
            let verification = try await StoreVerifier.verify(
                storeAt: url, model: try Self.model(destination, of: model))
            // What the migration relaxed, as Core Data does, and reported is not a failure.
            let relaxed = Set(report.warnings.map { "\($0.entityName).\($0.propertyName)" })
            let problems = verification.problems.filter {
                !relaxed.contains("\($0.entityName ?? "").\($0.propertyName ?? "")")
            }
            if let problem = problems.first {
                throw MigrationTestError(
                    .invalidResult,
                    "\(sourceVersion) → \(destination): the migrated store has \(problems.count) problem(s), "
                        + "the first: \(problem)",
                    sourceVersion: sourceVersion, entity: problem.entityName, property: problem.propertyName)
            }
        }
        return report
    }

    /// ``migrateAndValidate(store:model:to:mappings:policies:)`` on a copy of a store (with its
    /// `-wal`, `-shm` and external data), for fixtures kept under test resources: the fixture
    /// itself is never written.
    ///
    /// - Parameters:
    ///   - fixture: The store to copy.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the current version when nil.
    ///   - mappings: Explicit mappings for some steps.
    ///   - policies: The custom policies the mappings name.
    /// - Returns: The migration's report; its `url` is the copy's, removed afterwards.
    /// - Throws: What ``migrateAndValidate(store:model:to:mappings:policies:)`` throws, or the
    ///   file system's error when the copy cannot be made.
    /// - Complexity: O(*n*) in the store's size.
    @discardableResult
    public static func migrateAndValidate(
        copyOf fixture: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        policies: MigrationPolicyRegistry = MigrationPolicyRegistry()
    ) async throws -> MigrationReport {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tern-migration-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent(fixture.lastPathComponent)
        var seen: Set<String> = []
        for file in [fixture] + StoreFiles.companionFiles(of: fixture)
        where seen.insert(file.lastPathComponent).inserted && FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.copyItem(at: file, to: folder.appendingPathComponent(file.lastPathComponent))
        }
        return try await migrateAndValidate(
            store: copy, model: model, to: target, mappings: mappings, policies: policies)
    }

    // MARK: - Non public

    /// A version's model, or the error naming the versions there are.
    static func model(_ name: String, of model: VersionedModel) throws(MigrationTestError) -> ManagedObjectModel {
        guard let version = model.version(named: name) else {
            throw MigrationTestError(
                .unknownVersion,
                "The model has no version \(name); its versions are \(model.versions.map(\.name).joined(separator: ", "))"
            )
        }
        return version.model
    }
}
