package import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernStores

/// Loads one store description: recovers an interrupted move, finds the store (current
/// location, then legacy ones), moves, migrates, opens, adds and seeds it.
struct StoreLoader: Sendable {
    let description: StoreDescription
    let model: VersionedModel
    let coordinator: PersistentStoreCoordinator
    let emit: @Sendable (ContainerEvent) -> Void

    /// Runs every step and returns the open store, added to the coordinator.
    func load() async throws -> any PersistentStore {
        let url = description.url
        // A store added by an earlier call of loadStores that failed on a later store is kept.
        if let loaded = coordinator.store(at: url) { return loaded }
        if description.kind == .inMemory { return try await loadInMemory() }
        var lock: StoreLock?
        defer { lock?.release() }
        // The store's type, once read: each file is detected once on the way to the open store.
        var kind: StoreKind?
        if !description.options.isReadOnly {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            // Another process loading the same store (an app extension) finishes first.
            lock = try await StoreLock.acquire(for: url, timeout: description.options.lockTimeout) {
                emit(.waitingForStoreLock(url))
            }
            // A store moved or copied in is migrated on the way; one already in place here.
            kind = try await locate()
            if kind == nil, FileManager.default.fileExists(atPath: url.path) { kind = try await migrateIfNeeded(url) }
        }
        let exists = FileManager.default.fileExists(atPath: url.path)
        let current = model.currentVersion.model
        let store: any PersistentStore
        if exists || description.kind == .sqlite {
            store = try StoreFiles.open(
                at: url, kind: exists ? kind : .sqlite, model: current, isReadOnly: description.options.isReadOnly)
        } else {
            store = try await StoreFiles.create(at: url, kind: description.kind, model: current)
        }
        try await coordinator.addStore(store, configuration: description.configuration, versions: model)
        if case .records(let file, let options)? = description.seed, !description.options.isReadOnly {
            try await seed(store, from: file, options: options)
        }
        emit(.storeLoaded(url))
        return store
    }

    /// A new in-memory store (for previews and tests): nothing to find or migrate; seeded from records.
    private func loadInMemory() async throws -> any PersistentStore {
        let store = InMemoryStore(model: model.currentVersion.model, isReadOnly: description.options.isReadOnly)
        try await coordinator.addStore(store, configuration: description.configuration, versions: model)
        if case .records(let file, let options)? = description.seed {
            try await seed(store, from: file, options: options)
        }
        emit(.storeLoaded(description.url))
        return store
    }

    // MARK: - Locating

    /// Makes sure the current location holds the store if any location does: recovers an
    /// interrupted move, reports stray legacy stores, moves the first legacy store found, or
    /// copies the seed store. Returns the type of a store it moved or copied in (and migrated),
    /// nil when it placed none.
    private func locate() async throws -> StoreKind? {
        let url = description.url
        let manager = FileManager.default
        if let pending = try StoreRelocation.pending(for: url) {
            let recovery = try pending.recover()
            let source = URL(fileURLWithPath: pending.source)
            emit(.recoveredInterruptedMove(from: source, to: url, completed: recovery != .undone))
            if case .completedKeepingSource(let reason) = recovery {
                emit(.legacyStoreNotRemoved(at: source, current: url, reason: reason))
            }
        }
        let legacy = description.legacyLocations.filter {
            $0.standardizedFileURL.path != url.standardizedFileURL.path && manager.fileExists(atPath: $0.path)
        }
        if manager.fileExists(atPath: url.path) {
            for stray in legacy { emit(.strayLegacyStore(at: stray, current: url)) }
            return nil
        }
        if let first = legacy.first {
            // The legacy store is moved and then removed: roll back what a crashed writer left first.
            let kind = try StoreFiles.kind(ofStoreAt: first)
            if kind == .sqlite { try SQLiteStore.recoverInterruptedWrite(at: first) }
            let version = (try? StoreFiles.metadata(at: first, kind: kind)).flatMap {
                model.version(matching: $0)?.name
            }
            emit(.foundLegacyStore(at: first, version: version))
            let move = StoreRelocation(
                source: first.path, destination: url.path, phase: StoreRelocation.copying, removesSource: true)
            // The copy has the source's type.
            let kept = try await move.run(sourceKind: kind) { _ = try await migrateIfNeeded($0, kind: kind) }
            emit(.movedStore(from: first, to: url))
            if let kept { emit(.legacyStoreNotRemoved(at: first, current: url, reason: kept)) }
            for stray in legacy.dropFirst() { emit(.strayLegacyStore(at: stray, current: url)) }
            return kind
        } else if case .store(let seed)? = description.seed {
            let kind = try StoreFiles.kind(ofStoreAt: seed)
            let copy = StoreRelocation(
                source: seed.path, destination: url.path, phase: StoreRelocation.copying, removesSource: false)
            try await copy.run(sourceKind: kind) { _ = try await migrateIfNeeded($0, kind: kind) }
            emit(.copiedSeedStore(from: seed, to: url))
            return kind
        }
        return nil
    }

    // MARK: - Migrating

    /// Migrates the store at `url` in place to the current model version, when another version
    /// wrote it; returns its type. `kind` is the type when the caller knows it; the file is read
    /// for it otherwise.
    ///
    /// What a crashed writer left in a SQLite store is rolled back first: the container opens it
    /// read-write anyway, and the read-only read of its metadata would refuse it otherwise.
    private func migrateIfNeeded(_ url: URL, kind: StoreKind? = nil) async throws -> StoreKind {
        let kind = try kind ?? StoreFiles.kind(ofStoreAt: url)
        let metadata =
            try kind == .sqlite
            ? SQLiteStore.metadataRecoveringInterruptedWrite(at: url) : StoreFiles.metadata(at: url, kind: kind)
        let current = model.currentVersion
        guard !current.model.isCompatible(with: metadata) else { return kind }
        let writer = model.version(matching: metadata)?.name
        guard description.migration.isAutomatic else {
            throw TernError(
                .incompatibleStore,
                "the store was written by \(writer.map { "version \($0)" } ?? "no known version") of the model and migration is off; turn on automatic migration or migrate it with `tern migrate`",
                path: url.path)
        }
        emit(.migrating(store: url, from: writer ?? "?", to: current.name))
        let progress = Progress(totalUnitCount: 1)
        let options = MigrationOptions(
            batchSize: description.options.migrationBatchSize, policies: description.migration.policies)
        let report = try await reportingProgress(progress, phase: .migrating, of: url) {
            // SQLite stores stream in batches; binary and XML stores are migrated whole.
            try await StoreMigrator().migrateStore(
                resolvedAt: url, kind: kind, metadata: metadata, model: model, mappings: description.migration.mappings,
                options: options, progress: progress)
        }
        emit(.migrated(store: url, steps: report.plan.steps.count))
        return kind
    }

    // MARK: - Seeding

    /// The metadata key under which a store records the digest of the seed file imported into it.
    static let seedDigestKey = "TernSeedDigest"

    /// Imports a record file in a background context, unless the store already holds this file's records.
    private func seed(_ store: any PersistentStore, from file: URL, options: RecordImportOptions) async throws {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw TernError(
                .objectNotFound, "the seed file cannot be read; check that the app ships it", path: file.path,
                underlyingError: error)
        }
        let digest = PropertyListValue.data(Digest.sha256(Array(data)))
        var metadata = try await store.metadata()
        if metadata.applicationKeys[Self.seedDigestKey] == digest {
            emit(.seeded(store: description.url, summary: RecordImportSummary(), skipped: true))
            return
        }
        let context = ObjectContext(coordinator: coordinator)
        let progress = Progress(totalUnitCount: 1)
        let summary = try await reportingProgress(progress, phase: .seeding, of: description.url) {
            try await context.importRecords(from: file, options: options, progress: progress)
        }
        metadata = try await store.metadata()
        metadata.applicationKeys[Self.seedDigestKey] = digest
        try await store.setMetadata(metadata)
        emit(.seeded(store: description.url, summary: summary, skipped: false))
    }

    // MARK: - Non public

    /// Runs `work` while reporting the progress's fraction a few times a second, then 1.
    private func reportingProgress<T: Sendable>(
        _ progress: Progress, phase: ContainerEvent.Phase, of url: URL, _ work: () async throws -> T
    ) async throws -> T {
        let box = ProgressReference(progress)
        let emit = self.emit
        let reporter = Task {
            var last = -1.0
            while !Task.isCancelled {
                let fraction = box.progress.fractionCompleted
                if fraction != last {
                    emit(.progress(store: url, phase: phase, fraction: fraction))
                    last = fraction
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        defer { reporter.cancel() }
        let result = try await work()
        reporter.cancel()
        _ = await reporter.value
        emit(.progress(store: url, phase: phase, fraction: 1))
        return result
    }
}

/// A `Progress` shared with another task (the container's reporter, the demo's event reader).
package struct ProgressReference: @unchecked Sendable {
    // Foundation's Progress locks its own state, so reading and updating it from any thread is safe.
    package let progress: Progress
    package init(_ progress: Progress) { self.progress = progress }
}
