public import Foundation
import TernBinaryStore
public import TernCore
import TernFormats
public import TernSQLite
import TernXMLStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Layering: TernCore knows no store file format, and each store module knows only its own, so
// the operations that must handle every type (detecting a file's type, reading its metadata,
// copying, destroying, migrating between types) live in this small module that depends on all
// of them. A registry in TernCore would need every app to register the modules it links before
// use; a module that simply knows the types cannot forget one.

/// Store files of every type: find a file's type from its contents, read and write its
/// metadata without loading data, open, copy and destroy it.
///
/// The type always comes from the file's first bytes (SQLite's header, `TERNBIN1`, an XML
/// prolog), never from its extension.
///
/// ```swift
/// let kind = try StoreFiles.kind(ofStoreAt: url)          // .sqlite, .binary or .xml
/// var metadata = try StoreFiles.metadata(at: url)
/// metadata.applicationKeys["seeded"] = .bool(true)
/// try StoreFiles.setMetadata(metadata, at: url)
/// ```
public enum StoreFiles {
    // MARK: - Type detection

    /// The type of the store file at a location, from its contents.
    ///
    /// - Parameter url: The store file.
    /// - Returns: ``/TernCore/StoreKind/sqlite``, ``/TernCore/StoreKind/binary`` or ``/TernCore/StoreKind/xml``.
    /// - Throws: ``/TernCore/TernError/Code/objectNotFound`` when there is no file,
    ///   ``/TernCore/TernError/Code/unreadableStore`` when it cannot be read or is of no known type.
    /// - Complexity: Reads at most 64 bytes.
    public static func kind(ofStoreAt url: URL) throws -> StoreKind {
        StoreAccessLog.record(.typeDetected, path: url.path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TernError(.objectNotFound, "there is no store file at this path; check the path", path: url.path)
        }
        let head: Data
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            head = try handle.read(upToCount: 64) ?? Data()
        } catch {
            throw TernError(
                .unreadableStore, "the store file cannot be read; check its permissions", path: url.path,
                underlyingError: error)
        }
        if head.starts(with: Data("SQLite format 3\u{0}".utf8)) { return .sqlite }
        if head.starts(with: BinaryStoreFormat.magic) { return .binary }
        var text = Substring(String(decoding: head, as: UTF8.self))
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        if text.drop(while: \.isWhitespace).hasPrefix("<") { return .xml }
        throw TernError(
            .unreadableStore, "the file is not a SQLite, binary or XML store (its first bytes match none of them)",
            path: url.path)
    }

    // MARK: - Metadata

    /// Reads a store file's metadata without loading its data, whatever its type.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``/TernCore/TernError`` when the type is unknown or the file damaged, ``/TernSQLite/SQLiteError`` for
    ///   a SQLite file that is not a Core Data store.
    /// - Complexity: Proportional to the metadata, not to the store.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        try metadata(at: url, kind: nil)
    }

    /// A store file's metadata, for a caller that has already read the file's type.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - kind: Its type; read from the file when nil.
    /// - Returns: The metadata.
    /// - Throws: As ``metadata(at:)``.
    package static func metadata(at url: URL, kind: StoreKind?) throws -> StoreMetadata {
        switch try kind ?? self.kind(ofStoreAt: url) {
        case .sqlite: try SQLiteStore.metadata(at: url)
        case .binary: try BinaryStore.metadata(at: url)
        default: try XMLStore.metadata(at: url)
        }
    }

    /// Replaces a store file's metadata, keeping its data; the store must not be open.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata; keys Tern does not interpret are written as they are.
    ///   - url: The store file.
    /// - Throws: ``/TernCore/TernError`` or ``/TernSQLite/SQLiteError`` when the file cannot be read or written.
    /// - Complexity: O(1) data pages for SQLite; O(*n*) for atomic stores, which rewrite the file.
    public static func setMetadata(_ metadata: StoreMetadata, at url: URL) throws {
        switch try kind(ofStoreAt: url) {
        case .sqlite: try SQLiteStore.setMetadata(metadata, at: url)
        case .binary: try BinaryStore.setMetadata(metadata, at: url)
        default: try XMLStore.setMetadata(metadata, at: url)
        }
    }

    // MARK: - Opening

    /// Opens the store file at a location as a store of its type.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - kind: The type to open or create; nil to detect it from an existing file.
    ///   - model: The model of the rows; required to create a store. A SQLite store opened
    ///     without one uses the model cached in the file.
    ///   - isReadOnly: Whether saves are refused; the file is then never written.
    ///   - unreadableValues: What reads of a SQLite store do with a value they cannot give (see
    ///     ``/TernSQLite/SQLiteStore/unreadableValueLog``); binary and XML stores hold only values they read.
    /// - Returns: The open store.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` for an in-memory or unknown kind, any error of
    ///   opening the store.
    public static func open(
        at url: URL, kind: StoreKind? = nil, model: ManagedObjectModel?, isReadOnly: Bool = false,
        unreadableValues: SQLiteConfiguration.UnreadableValues = .fail
    ) throws -> any PersistentStore {
        let kind = try kind ?? self.kind(ofStoreAt: url)
        if kind == .sqlite {
            var configuration = SQLiteConfiguration(isReadOnly: isReadOnly)
            configuration.unreadableValues = unreadableValues
            return try SQLiteStore(at: url, model: model, configuration: configuration)
        }
        let storeModel = try model ?? storedModel(at: url)
        switch kind {
        case .binary: return try BinaryStore(at: url, model: storeModel, isReadOnly: isReadOnly)
        case .xml: return try XMLStore(at: url, model: storeModel, isReadOnly: isReadOnly)
        default:
            throw TernError(
                .unsupported, "a \(kind) store has no file to open; use SQLite, Binary or XML", path: url.path)
        }
    }

    /// Creates an empty store of a type; binary and XML stores record the model in their
    /// metadata (``modelCacheKey``) so that they can later be opened without it.
    ///
    /// - Parameters:
    ///   - url: Where the store goes; no file may exist there.
    ///   - kind: ``/TernCore/StoreKind/sqlite``, ``/TernCore/StoreKind/binary`` or ``/TernCore/StoreKind/xml``.
    ///   - model: The model of the rows.
    /// - Returns: The open store.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` when a file exists or the kind has no file;
    ///   any error of writing the store.
    public static func create(at url: URL, kind: StoreKind, model: ManagedObjectModel) async throws
        -> any PersistentStore
    {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw TernError(
                .unsupported, "a file already exists at this path; remove it or pick another", path: url.path)
        }
        let store = try open(at: url, kind: kind, model: model)
        if kind != .sqlite {
            var metadata = try await store.metadata()
            metadata.applicationKeys[modelCacheKey] = .data(try ModelCache.encode(model))
            try await store.setMetadata(metadata)
        }
        return store
    }

    /// Copies every row of a store into a new store of any type, keeping primary keys,
    /// relationships and metadata, in batches: the streaming part of
    /// ``TernCore/PersistentStoreCoordinator/copyStore(_:to:kind:isReadOnly:batchSize:)``
    /// without a coordinator.
    ///
    /// - Parameters:
    ///   - store: The store to copy; it may be read-only.
    ///   - url: Where the new store goes; no file may exist there.
    ///   - kind: The new store's type.
    ///   - batchSize: How many rows are read and written at a time.
    ///   - progress: Counts the rows copied, if given; its total is set here (rows × passes:
    ///     a SQLite copy reads the source twice).
    /// - Returns: The new store, open and writable.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` when a file exists at `url`; any error of
    ///   reading or writing, after which the new store is removed.
    /// - Complexity: O(*n*) in the number of rows.
    public static func copy(
        _ store: any PersistentStore, to url: URL, kind: StoreKind, batchSize: Int = 500, progress: Progress? = nil
    ) async throws -> any PersistentStore {
        try await StoreMigration.copy(
            store, to: url, kind: kind, isReadOnly: false, batchSize: batchSize, progress: progress)
    }

    /// Copies the store file at `source` into a new store file of any type, as ``copy(_:to:kind:batchSize:progress:)``
    /// does, without opening the copy: what `tern convert` runs.
    ///
    /// Between SQLite and binary stores the rows stream from file to file in batches, so memory
    /// stays bounded by the batch even though a binary store, once opened, holds every row: a
    /// binary source is read front to back (twice when the model has relationships) and its
    /// checksum checked before the copy is moved into place. Other types go through the opened
    /// source store.
    ///
    /// ```swift
    /// let rows = try await StoreFiles.convert(storeAt: sqliteURL, to: binaryURL, kind: .binary)
    /// ```
    ///
    /// - Parameters:
    ///   - source: The store file; it is only read.
    ///   - model: The model to read it with; nil for the one the store records.
    ///   - destination: Where the new store goes; no file may exist there.
    ///   - kind: The new store's type: ``/TernCore/StoreKind/sqlite``, ``/TernCore/StoreKind/binary`` or
    ///     ``/TernCore/StoreKind/xml``.
    ///   - batchSize: How many rows are read and written at a time.
    ///   - progress: Counts the rows copied, if given.
    /// - Returns: How many rows were copied.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` when a file exists at `destination`; any error
    ///   of reading or writing, after which nothing is left at `destination`.
    /// - Complexity: O(*n*) in the number of rows; memory O(`batchSize`) between SQLite and binary stores.
    public static func convert(
        storeAt source: URL, model: ManagedObjectModel? = nil, to destination: URL, kind: StoreKind,
        batchSize: Int = 500, progress: Progress? = nil
    ) async throws -> Int64 {
        let sourceKind = try self.kind(ofStoreAt: source)
        if sourceKind == .binary, kind == .sqlite {
            return try await StoreMigration.writeSQLite(
                fromBinaryAt: source, model: try model ?? storedModel(at: source), to: destination,
                batchSize: max(1, batchSize), progress: progress)
        }
        let store = try open(at: source, kind: sourceKind, model: model, isReadOnly: true)
        return try await StoreMigration.write(
            store, to: destination, kind: kind, batchSize: max(1, batchSize), progress: progress)
    }

    /// Calls `body` with the rows of one entity (subentities not included), at most `size` at a
    /// time, in primary-key order. SQLite stores are read batch by batch.
    ///
    /// - Parameters:
    ///   - store: The store to read.
    ///   - entity: The entity.
    ///   - size: The largest batch.
    ///   - body: Called with each batch.
    /// - Throws: Any error of reading, or of `body`.
    /// - Complexity: O(*n*); memory bounded by `size` for SQLite stores.
    public static func forEachBatch(
        of store: any PersistentStore, entity: String, size: Int = 500, _ body: ([StoreRow]) async throws -> Void
    ) async throws {
        try await StoreMigration.forEachBatch(of: store, entities: [entity], size: size, body)
    }

    // MARK: - Files of a store

    /// Every file and folder that belongs to the store at a location: the file, its `-wal`,
    /// `-shm` and `-journal` files and its `.<name>_SUPPORT` folder (external data).
    ///
    /// - Parameter url: The store file.
    /// - Returns: The paths, whether or not they exist.
    public static func companionFiles(of url: URL) -> [URL] {
        [url] + ["-wal", "-shm", "-journal"].map { URL(fileURLWithPath: url.path + $0) } + [supportFolder(of: url)]
    }

    /// The `.<name>_SUPPORT` folder beside a store, where external binary data lives.
    ///
    /// - Parameter url: The store file.
    public static func supportFolder(of url: URL) -> URL {
        let name = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
    }

    /// Deletes a store: its file, `-wal`, `-shm` and `-journal` files, its `_SUPPORT` folder,
    /// temporary files an interrupted atomic save left and a container's lock file (unless a
    /// container holds it), and nothing else.
    ///
    /// Close the store first (remove it from its coordinator and drop it): open connections
    /// would keep writing into deleted files.
    ///
    /// - Parameter url: The store file.
    /// - Throws: ``/TernCore/TernError/Code/ioFailure`` when a file exists and cannot be removed.
    public static func destroy(at url: URL) throws {
        for file in companionFiles(of: url) where FileManager.default.fileExists(atPath: file.path) {
            do {
                try FileManager.default.removeItem(at: file)
            } catch {
                throw TernError(
                    .ioFailure, "could not remove a file of the store; check the folder's permissions", path: file.path,
                    underlyingError: error)
            }
        }
        DurableFile.removeTemporaryFiles(for: url)
        removeUnusedLockFile(of: url)
    }

    /// The lock file a container takes (`flock`) while it loads the store at `url`:
    /// `.<store name>.tern-lock` beside it.
    package static func lockFile(of url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-lock")
    }

    /// Removes a destroyed store's lock file, unless someone holds the lock. The file is removed
    /// while this process holds its lock; a process that opened the old file and then gets its
    /// lock sees that the file is no longer at its path and starts over (`StoreLock`), so two
    /// processes never hold "the" lock at once. A crash at any point leaves at worst an unused
    /// lock file, which holds no data.
    private static func removeUnusedLockFile(of url: URL) {
        let file = lockFile(of: url)
        guard let handle = FileHandle(forUpdatingAtPath: file.path) else { return }
        defer { try? handle.close() }
        guard flock(handle.fileDescriptor, LOCK_EX | LOCK_NB) == 0 else { return }
        unlink(file.path)
        _ = flock(handle.fileDescriptor, LOCK_UN)
    }

    // MARK: - Non public

    /// The metadata key under which binary and XML stores written by TernStores keep their
    /// model, as Core Data's compressed model cache (SQLite stores keep it in `Z_MODELCACHE`).
    public static let modelCacheKey = "TernModelCache"

    /// The model recorded in an atomic store's metadata, for opening it without one.
    private static func storedModel(at url: URL) throws -> ManagedObjectModel {
        guard case .data(let cache)? = try metadata(at: url).applicationKeys[modelCacheKey] else {
            throw TernError(
                .unsupported, "the store does not record its model; give the model to open it", path: url.path)
        }
        do {
            return try ModelCache.decode(cache)
        } catch {
            throw TernError(
                .unreadableStore, "the model recorded in the store is damaged; give the model", path: url.path,
                underlyingError: error)
        }
    }
}
