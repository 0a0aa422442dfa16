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
