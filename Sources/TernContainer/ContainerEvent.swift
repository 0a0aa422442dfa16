public import Foundation
public import TernFormats

/// What a ``PersistentContainer`` reports while it loads its stores, in order: see
/// ``PersistentContainer/events()`` and ``PersistentContainer/didLoadStoresNotification``.
///
/// ```swift
/// for await event in container.events() {
///     switch event {
///     case .strayLegacyStore(let stray, let current): log("kept \(current.path), \(stray.path) left alone")
///     case .ready: refetch()
///     default: break
///     }
/// }
/// ```
public enum ContainerEvent: Sendable, Hashable {
    /// Another process (an app extension, another copy of the app) holds the store's lock while
    /// it loads the store; this container waits for it, up to ``StoreOptions/lockTimeout``.
    case waitingForStoreLock(URL)
    /// A move that a crash interrupted was finished (its journal said the new store was
    /// complete: the legacy one was removed) or undone (the half-made copy was removed and the
    /// move starts again from the legacy store).
    case recoveredInterruptedMove(from: URL, to: URL, completed: Bool)
    /// No store at the current location; a legacy one was found, written by that model version
    /// (nil when no version of the model matches it).
    case foundLegacyStore(at: URL, version: String?)
    /// The legacy store was copied to the current location, made durable, and then removed.
    case movedStore(from: URL, to: URL)
    /// The legacy store was copied to the current location and made durable, but it could not
    /// be removed (`reason`; typically its folder is read-only). The current store is used; the
    /// legacy copy is left as it is, reported this once, and seen as a stray
    /// (``strayLegacyStore(at:current:)``) by later loads, which never move it again.
    case legacyStoreNotRemoved(at: URL, current: URL, reason: String)
    /// Both the current location and this legacy location hold a store: the current one is
    /// used, and the legacy one is left as it is (never merged, never deleted).
    case strayLegacyStore(at: URL, current: URL)
    /// A new store was made from the bundled seed store.
    case copiedSeedStore(from: URL, to: URL)
    /// The store is being migrated from one version to the current one.
    case migrating(store: URL, from: String, to: String)
    /// Work on a store advanced; `fraction` goes from 0 to 1.
    case progress(store: URL, phase: Phase, fraction: Double)
    /// The store was migrated; it now matches the current model version.
    case migrated(store: URL, steps: Int)
    /// Starter records were imported: the objects inserted and updated per entity. The summary
    /// is empty and `skipped` true when the store already held this seed file's records.
    case seeded(store: URL, summary: RecordImportSummary, skipped: Bool)
    /// One store is open and added to the coordinator.
    case storeLoaded(URL)
    /// Every store is loaded: contexts can fetch.
    case ready
    /// Loading failed; the message says what went wrong and what to do.
    case failed(store: URL?, message: String)

    /// What a ``progress(store:phase:fraction:)`` event measures.
    public enum Phase: String, Sendable, Hashable {
        /// A migration to the current model version.
        case migrating
        /// The import of starter records.
        case seeding
    }
}
