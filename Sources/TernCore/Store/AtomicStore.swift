public import Foundation
import Synchronization

/// A store that keeps every row in memory, reads its whole file when opened and rewrites the
/// whole file on each save: Core Data's atomic stores (`NSBinaryStoreType`, `NSXMLStoreType`).
///
/// The file format is the `Format` parameter; TernBinaryStore and TernXMLStore provide
/// `BinaryStore` and `XMLStore`. Fetching, version checks and uniqueness work as in
/// ``InMemoryStore``. A save writes a temporary file beside the store, flushes it to disk and
/// renames it over the old file, so a crash leaves either the old or the new store, never a
/// half-written one; temporary files a crash left behind are removed on the next open.
///
/// Saves are serialised: the store's lock is held while the file is written, so reads wait
/// for a save in progress. Only one process may have a store open for writing.
///
/// ```swift
/// let store = try BinaryStore(at: url, model: model)        // creates the file if missing
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try await coordinator.addStore(store)
/// let metadata = try BinaryStore.metadata(at: url)          // without reading the rows
/// ```
///
/// ## Topics
/// - ``init(at:model:isReadOnly:)``
/// - ``metadata(at:)``
/// - ``setMetadata(_:at:)``
public final class AtomicStore<Format: AtomicStoreFormat>: PersistentStore {
    /// The store's UUID.
    public let identifier: String
    /// The store file.
    public let url: URL
    /// The store file.
    public var location: URL? { url }
    /// The format's store type.
    public var kind: StoreKind { Format.kind }
    /// Whether saves are refused; a read-only store never writes its file.
    public let isReadOnly: Bool
    /// The model the store was opened with.
    public let model: ManagedObjectModel

    private let state: Mutex<RowTable>

    /// Opens the store at a file, creating an empty one when there is none.
    ///
    /// Opening writable first deletes temporary files left by a crash during a save. A new
    /// store is written at once, with metadata from `model` (type, fresh UUID, version hashes).
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The model of the rows; the coordinator checks that it matches the metadata.
    ///   - isReadOnly: Whether saves are refused; a read-only store must exist.
    /// - Throws: ``TernError/Code/unreadableStore`` for a damaged file or one of another format,
    ///   ``TernError/Code/objectNotFound`` for a missing read-only store,
    ///   ``TernError/Code/ioFailure`` when the new file cannot be written.
    /// - Complexity: O(*n*) in the size of the file.
    public init(at url: URL, model: ManagedObjectModel, isReadOnly: Bool = false) throws {
        self.url = url
        self.model = model
        self.isReadOnly = isReadOnly
        if !isReadOnly { DurableFile.removeTemporaryFiles(for: url) }
        var table: RowTable
        if FileManager.default.fileExists(atPath: url.path) {
            let contents = try Format.decode(Self.readData(at: url), path: url.path, model: model)
            table = RowTable(
                metadata: contents.metadata, rows: contents.rows, lastKeys: contents.lastPrimaryKeys, model: model)
        } else if isReadOnly {
            throw TernError(
                .objectNotFound, "there is no \(Format.kind) store at this path to open read-only; check the path",
                path: url.path)
        } else {
            table = RowTable(metadata: StoreMetadata(newStoreOf: Format.kind, uuid: UUID().uuidString, model: model))
            try Self.write(table, model: model, to: url)
        }
        table.sharesKeysAcrossEntities = Format.sharesPrimaryKeysAcrossEntities
        self.identifier = table.metadata.uuid
        self.state = Mutex(table)
    }

    // MARK: - Metadata without opening

    /// Reads a store file's metadata without reading its rows.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``TernError/Code/unreadableStore`` when the file is missing, damaged or of
    ///   another format.
    /// - Complexity: Proportional to the size of the metadata, not of the store.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        try Format.metadata(at: url)
    }

    /// Replaces a store file's metadata, keeping its rows.
    ///
    /// The file is replaced as durably as by a save. Do not call it while the store is open.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - url: The store file.
    /// - Throws: ``TernError/Code/unreadableStore`` for a damaged file, ``TernError/Code/ioFailure``
    ///   when it cannot be written.
    /// - Complexity: O(*n*) in the size of the file.
    public static func setMetadata(_ metadata: StoreMetadata, at url: URL) throws {
        try DurableFile.write(Format.replacingMetadata(metadata, in: readData(at: url), path: url.path), to: url)
    }

    // MARK: - Metadata

    /// The store's metadata.
    public func metadata() async throws -> StoreMetadata {
        state.withLock { $0.metadata }
    }

    /// Replaces the store's metadata and writes the file.
    ///
    /// - Throws: ``TernError/Code/unwritableStore`` when the store is read-only,
    ///   ``TernError/Code/ioFailure`` when the file cannot be written (the metadata is then unchanged).
    /// - Complexity: O(*n*) in the size of the store.
    public func setMetadata(_ metadata: StoreMetadata) async throws {
        try checkWritable()
        try state.withLock { table in
            var next = table
            next.metadata = metadata
            try Self.write(next, model: model, to: url) { table = next }
        }
    }

    // MARK: - Reading

    /// Fetches from the rows in memory, as ``InMemoryStore`` does; the file is not read.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    public func fetch(_ request: StoreFetchRequest) async throws -> [StoreRow] {
        try state.withLock { $0 }.select(request, model: model, storeIdentifier: identifier)
    }

    /// One page of the rows matching the request, after a position: keyset pagination over the
    /// rows in memory, so rows saved or deleted between pages are seen as the protocol describes.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved, per page.
    public func fetchPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) async throws -> StoreFetchPage {
        try state.withLock { $0 }.page(request, after: position, size: size, model: model, storeIdentifier: identifier)
    }

    /// The references ``fetch(_:)`` would return, from the rows in memory.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    public func fetchReferences(_ request: StoreFetchRequest) async throws -> [RowReference] {
        try await fetch(request).map(\.reference)
    }

    /// How many rows ``fetch(_:)`` would return, counted in memory.
    ///
    /// - Complexity: O(*n*) in the number of rows of the entities involved.
    public func count(_ request: StoreFetchRequest) async throws -> Int {
        try state.withLock { $0 }.count(request, model: model, storeIdentifier: identifier)
    }

    /// Looks rows up in memory by reference, in order, leaving out the missing ones.
    ///
    /// - Complexity: O(*k*) in the number of references.
    public func rows(for references: [RowReference]) async throws -> [StoreRow] {
        rowsSynchronously(for: references)
    }

    /// The rows with these references, looked up in memory at once: how faults of this store fire.
    ///
    /// - Complexity: O(*k*) in the number of references.
    public func rowsSynchronously(for references: [RowReference]) -> [StoreRow] {
        state.withLock { table in references.compactMap(table.row(for:)) }
    }

    // MARK: - Writing

    /// Applies a change set and rewrites the file; nothing changes, in memory or on disk, when
    /// the save fails.
    ///
    /// The one exception: when the new file is in place but flushing its folder to disk fails,
    /// the save throws ``TernError/Code/ioFailure`` and yet the store (in memory and in the file)
    /// holds the changes, which a power loss could still undo.
    ///
    /// - Throws: ``TernError/Code/mergeConflict`` on a version mismatch,
    ///   ``TernError/Code/constraintConflict`` on a broken uniqueness constraint,
    ///   ``TernError/Code/unwritableStore`` when read-only, ``TernError/Code/ioFailure`` when the
    ///   file cannot be written.
    /// - Complexity: O(*n*) in the size of the store: the whole file is rewritten.
    public func save(_ changes: StoreChangeSet) async throws -> StoreSaveResult {
        try checkWritable()
        return try state.withLock { table in
            var next = table
            let result = try next.apply(changes, model: model, storeIdentifier: identifier)
            try Self.write(next, model: model, to: url) { table = next }
            return result
        }
    }

    /// Reserves primary keys, shared by the entity's inheritance root.
    ///
    /// Keys are recorded in the file with the next save; keys reserved but never saved may be
    /// handed out again after the store is reopened.
    ///
    /// - Throws: ``TernError/Code/objectNotFound`` when the model has no such entity.
    public func newPrimaryKeys(forEntity entity: String, count: Int) async throws -> [Int64] {
        try state.withLock { try $0.newPrimaryKeys(forEntity: entity, count: count, model: model) }
    }

    // MARK: - Non public

    private func checkWritable() throws {
        if isReadOnly {
            throw TernError(
                .unwritableStore,
                "the \(Format.kind) store was opened read-only, so it is never written; open it writable to save",
                path: url.path)
        }
    }

    private static func readData(at url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw TernError(
                .unreadableStore, "could not read the \(Format.kind) store file; check that it exists and is readable",
                path: url.path, underlyingError: error)
        }
    }

    /// Writes the table durably; `replaced` runs once the file holds it, so that the rows in
    /// memory always match the file even if only the final flush of the folder fails.
    private static func write(
        _ table: RowTable, model: ManagedObjectModel, to url: URL, replaced: () -> Void = {}
    ) throws {
        let contents = AtomicStoreContents(
            metadata: table.metadata, rows: table.allRows, lastPrimaryKeys: table.lastKeys)
        try DurableFile.write(Format.encode(contents, model: model), to: url, replaced: replaced)
    }
}

extension AtomicStore: PrimaryKeyCounting {
    /// The last primary key handed out, by inheritance root, as the file records them and the
    /// saves since raised them.
    package func lastPrimaryKeys() async throws -> [String: Int64] {
        state.withLock { $0.lastKeys }
    }
}
