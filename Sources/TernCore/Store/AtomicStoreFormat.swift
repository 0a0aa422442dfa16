public import Foundation

/// A file format for an ``AtomicStore``: how a whole store is turned into bytes and back.
///
/// Core Data's `NSAtomicStore` subclasses (the binary and XML stores) read the whole file when
/// they open and write the whole file on each save; a format only has to encode and decode,
/// and ``AtomicStore`` does the rest (rows in memory, durable replacement of the file). A
/// format also reads the metadata alone, without decoding the rows.
///
/// ```swift
/// enum JSONLinesFormat: AtomicStoreFormat {
///     static let kind = StoreKind("JSONLines")
///     static func encode(_ contents: AtomicStoreContents) throws -> Data { … }
///     static func decode(_ data: Data, path: String) throws -> AtomicStoreContents { … }
///     static func metadata(at url: URL) throws -> StoreMetadata { … }
/// }
/// typealias JSONLinesStore = AtomicStore<JSONLinesFormat>
/// ```
public protocol AtomicStoreFormat: Sendable {
    /// The store type the format writes, recorded in the metadata.
    static var kind: StoreKind { get }

    /// Encodes a whole store.
    ///
    /// - Parameter contents: The metadata, rows and key counters.
    /// - Returns: The file's bytes.
    /// - Throws: ``TernError/Code/unwritableStore`` when a value cannot be encoded.
    /// - Complexity: O(*n*) in the size of the store.
    static func encode(_ contents: AtomicStoreContents) throws -> Data

    /// Decodes a whole store, refusing damaged or hostile bytes.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``TernError/Code/unreadableStore`` when the bytes are not a valid store.
    /// - Complexity: O(*n*) in the size of the file.
    static func decode(_ data: Data, path: String) throws -> AtomicStoreContents

    /// Reads a store file's metadata without decoding its rows.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``TernError/Code/unreadableStore`` when the file is missing, damaged or of
    ///   another format.
    /// - Complexity: Proportional to the size of the metadata, not of the store.
    static func metadata(at url: URL) throws -> StoreMetadata

    /// Encodes a whole store with the model of its rows, for formats that record model types
    /// or names (``encode(_:)`` by default).
    ///
    /// - Parameters:
    ///   - contents: The metadata, rows and key counters.
    ///   - model: The model of the rows.
    /// - Returns: The file's bytes.
    /// - Throws: ``TernError/Code/unwritableStore`` when a value cannot be encoded.
    /// - Complexity: O(*n*) in the size of the store.
    static func encode(_ contents: AtomicStoreContents, model: ManagedObjectModel) throws -> Data

    /// Decodes a whole store with the model of its rows, for formats whose files need it
    /// (``decode(_:path:)`` by default).
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    ///   - model: The model of the rows.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``TernError/Code/unreadableStore`` when the bytes are not a valid store.
    /// - Complexity: O(*n*) in the size of the file.
    static func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> AtomicStoreContents

    /// A store file's bytes with other metadata and the same rows, without a model (decoding
    /// and encoding the whole store by default).
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The new file's bytes.
    /// - Throws: ``TernError/Code/unreadableStore`` when the bytes are not a valid store.
    /// - Complexity: O(*n*) in the size of the file.
    static func replacingMetadata(_ metadata: StoreMetadata, in data: Data, path: String) throws -> Data

    /// Whether primary keys are unique across the whole store rather than within each
    /// inheritance root (`false` by default): files that name objects by one counter need it.
    static var sharesPrimaryKeysAcrossEntities: Bool { get }
}

extension AtomicStoreFormat {
    /// ``encode(_:)``: the format needs no model.
    public static func encode(_ contents: AtomicStoreContents, model: ManagedObjectModel) throws -> Data {
        try encode(contents)
    }

    /// ``decode(_:path:)``: the format needs no model.
    public static func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> AtomicStoreContents {
        try decode(data, path: path)
    }

    /// Decodes the store and encodes it again with the new metadata.
    public static func replacingMetadata(_ metadata: StoreMetadata, in data: Data, path: String) throws -> Data {
        var contents = try decode(data, path: path)
        contents.metadata = metadata
        return try encode(contents)
    }

    /// `false`: keys are unique within each inheritance root, as in SQLite stores.
    public static var sharesPrimaryKeysAcrossEntities: Bool { false }
}

/// Everything an atomic store file holds.
///
/// ```swift
/// let contents = try BinaryStoreFormat.decode(Data(contentsOf: url), path: url.path)
/// print(contents.metadata.uuid, contents.rows.count)
/// ```
public struct AtomicStoreContents: Sendable, Hashable {
    /// The store's metadata.
    public var metadata: StoreMetadata
    /// Every row, ordered by reference.
    public var rows: [StoreRow]
    /// The last primary key handed out, by inheritance root.
    public var lastPrimaryKeys: [String: Int64]

    /// Creates store contents.
    ///
    /// - Parameters:
    ///   - metadata: The store's metadata.
    ///   - rows: Its rows.
    ///   - lastPrimaryKeys: The last primary key handed out, by inheritance root.
    public init(metadata: StoreMetadata, rows: [StoreRow] = [], lastPrimaryKeys: [String: Int64] = [:]) {
        self.metadata = metadata
        self.rows = rows
        self.lastPrimaryKeys = lastPrimaryKeys
    }
}
