public import Foundation
public import TernCore
import TernFormats

/// A store kept in Core Data's XML store format (`NSXMLStoreType`), the one macOS apps write.
///
/// The whole store is read when opened and rewritten, durably, on each save (see
/// ``/TernCore/AtomicStore``). The metadata comes first in the file, so ``/TernCore/AtomicStore/metadata(at:)``
/// reads it without parsing the objects. Stores in Tern's own earlier XML format (version 1)
/// open too, and are written in Core Data's format on the next save. `docs/XMLStore.md`
/// describes both formats.
///
/// ```swift
/// let store = try XMLStore(at: url, model: model)
/// try await coordinator.addStore(store)
/// let metadata = try XMLStore.metadata(at: url)
/// ```
public typealias XMLStore = AtomicStore<XMLStoreFormat>

/// Core Data's XML store format: `<database>` holding `<databaseInfo>` (version, UUID, the
/// object-id counter and the metadata) then one `<object>` per row, entity names upper-cased
/// and property names lower-cased as Core Data writes them.
///
/// Use it through ``XMLStore``, which reads and writes with the store's model: the model
/// gives the names back their case, the values their types and the relationships their
/// counts. Objects are named `z` and their primary key, unique across the store, and the
/// file's `nextObjectID` is the highest key handed out. Reading refuses entity declarations
/// and external entities, and bounds nesting and size; it also reads the documents of Tern's
/// format version 1. Every value round-trips exactly; strings XML cannot hold (NUL and other
/// control characters) are written in base64, marked `encoding="base64"`.
///
/// ```swift
/// let text = String(decoding: try XMLStoreFormat.encode(contents, model: model), as: UTF8.self)
/// ```
public enum XMLStoreFormat: AtomicStoreFormat {
    /// ``/TernCore/StoreKind/xml``.
    public static var kind: StoreKind { .xml }

    /// The version of Tern's own earlier layout (`<database format="Tern" version="1">`),
    /// which is still read.
    public static let formatVersion = 1
    /// The largest store file accepted, in bytes.
    public static let maximumSize = 1 << 30
    /// The largest `<databaseInfo>` section ``metadata(at:)`` reads, in bytes.
    public static let maximumMetadataSize = 16 << 20

    /// `true`: Core Data names objects by one counter (`z102`), so keys are unique store-wide.
    public static var sharesPrimaryKeysAcrossEntities: Bool { true }

    /// Encodes a whole store as Core Data writes it, with the model's names, types and counts.
    ///
    /// - Parameters:
    ///   - contents: The metadata, rows and key counters.
    ///   - model: The model of the rows.
    /// - Returns: The document, in UTF-8.
    /// - Throws: ``/TernCore/TernError/Code/unwritableStore`` naming the object, entity and property when a
    ///   row holds an entity or property the model lacks, or a value that does not fit its
    ///   attribute's type.
    /// - Complexity: O(*n* log *n*) in the size of the store.
    public static func encode(_ contents: AtomicStoreContents, model: ManagedObjectModel) throws -> Data {
        try CoreDataMapping(model: model).document(of: contents).encoded()
    }

    /// Encodes a whole store without its model: names are upper- and lower-cased as Core Data
    /// writes them, attribute types are those of the values (`int64`, `double`, …) and
    /// relationships are `1/1` (to-one) or `0/0` (to-many). Prefer ``encode(_:model:)``.
    ///
    /// - Parameter contents: The metadata, rows and key counters.
    /// - Returns: The document, in UTF-8.
    /// - Throws: ``/TernCore/TernError/Code/unwritableStore`` when a name holds characters XML cannot hold.
    /// - Complexity: O(*n* log *n*) in the size of the store.
    public static func encode(_ contents: AtomicStoreContents) throws -> Data {
        try CoreDataMapping(model: nil).document(of: contents).encoded()
    }

    /// Decodes a whole store written by Core Data, by Tern, or in Tern's format version 1.
    ///
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - path: The file's path, for error messages.
    ///   - model: The model of the rows: it maps the file's names to entities and properties.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the document is malformed, unsafe,
    ///   truncated, not an XML store, or names an entity or property the model lacks in a way
    ///   that cannot be read (the message names the object id, entity and property).
    /// - Complexity: O(*n*) in the size of the document.
    public static func decode(_ data: Data, path: String, model: ManagedObjectModel) throws -> AtomicStoreContents {
        if isTernVersion1(data) { return try decodeVersion1(data, path: path) }
        let document = try CoreDataXMLDocument(data: data, path: path, limits: limits)
        return try CoreDataMapping(model: model).contents(of: document, path: path)
    }

    /// Decodes a store in Tern's format version 1, whose names are the model's; a store in
    /// Core Data's format needs its model (``decode(_:path:model:)``).
    ///
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the document is malformed or in Core
    ///   Data's format.
    /// - Complexity: O(*n*) in the size of the document.
    public static func decode(_ data: Data, path: String) throws -> AtomicStoreContents {
        guard isTernVersion1(data) else {
            throw TernError(
                .unreadableStore,
                "a Core Data XML store writes entity and property names in capitals and small letters, so it "
                    + "is read with its model; open it with the model",
                path: path)
        }
        return try decodeVersion1(data, path: path)
    }

    /// The file with other metadata: the `<databaseInfo>` is rewritten and the objects are
    /// kept as they are, so no model is needed.
    ///
    /// - Parameters:
    ///   - metadata: The new metadata.
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The new file, in Core Data's format (a version 1 file stays in version 1).
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the bytes are not an XML store.
    /// - Complexity: O(*n*) in the size of the file.
    public static func replacingMetadata(_ metadata: StoreMetadata, in data: Data, path: String) throws -> Data {
        if isTernVersion1(data) {
            var contents = try decodeVersion1(data, path: path)
            contents.metadata = metadata
            return try encode(contents)
        }
        var document = try CoreDataXMLDocument(data: data, path: path, limits: limits)
        document.info = CoreDataMapping.info(of: metadata, nextObjectID: document.info.nextObjectID)
        return try document.encoded()
    }

    /// Reads an XML store's metadata from its `<databaseInfo>`, without parsing the objects.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is missing, not an XML store or
    ///   its metadata is malformed.
    /// - Complexity: O(*m*) in the size of the metadata section.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        let end = Data("</databaseInfo>".utf8)
        var prefix = Data()
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while prefix.range(of: end, in: max(0, prefix.count - (64 << 10) - end.count)..<prefix.count) == nil {
                guard prefix.count < maximumMetadataSize, let chunk = try handle.read(upToCount: 64 << 10),
                    !chunk.isEmpty
                else {
                    throw TernError(
                        .unreadableStore,
                        "the XML store is damaged: no </databaseInfo> in its first \(maximumMetadataSize >> 20) MB; "
                            + "restore it from a backup",
                        path: url.path)
                }
                prefix.append(chunk)
            }
        } catch let error as TernError {
            throw error
        } catch {
            throw TernError(
                .unreadableStore, "could not read the XML store; check that the file exists and is readable",
                path: url.path, underlyingError: error)
        }
        guard let found = prefix.range(of: end) else {
            throw TernError(.unreadableStore, "the XML store is damaged: there is no </databaseInfo>", path: url.path)
        }
        var document = prefix[..<found.upperBound]
        document.append(Data("</database>".utf8))
        if isTernVersion1(document) {
            let root = try XMLElementTree.parse(Data(document), path: url.path, limits: limits)
            return try DecodingContext(path: url.path).metadata(inDatabase: root)
        }
        let info = try CoreDataXMLDocument(data: Data(document), path: url.path, limits: limits).info
        return try CoreDataMapping.metadata(of: info, path: url.path)
    }

    // MARK: - Non public

    /// The parser's limits for store files.
    static var limits: XMLElementTree.Limits {
        var limits = CoreDataXMLDocument.storeLimits
        limits.maximumSize = maximumSize
        limits.documentName = "XML store"
        return limits
    }

    /// Whether the document's root is Tern's version 1 `<database format="Tern">`.
    static func isTernVersion1(_ data: Data) -> Bool {
        guard let root = data.prefix(4_096).range(of: Data("<database".utf8)) else { return false }
        let tag = data[root.upperBound...].prefix { $0 != UInt8(ascii: ">") }
        return tag.range(of: Data("format=\"Tern\"".utf8)) != nil
    }

    /// Decodes a document of Tern's format version 1.
    static func decodeVersion1(_ data: Data, path: String) throws -> AtomicStoreContents {
        let root = try XMLElementTree.parse(data, path: path, limits: limits)
        let context = DecodingContext(path: path)
        var contents = AtomicStoreContents(metadata: try context.metadata(inDatabase: root))
        guard let info = root.child(named: "databaseInfo") else { throw context.invalid("there is no <databaseInfo>") }
        for key in info.child(named: "primaryKeys")?.children(named: "lastKey") ?? [] {
            guard let root = key[attribute: "root"], let last = Int64(key.text) else {
                throw context.invalid("a <lastKey> needs a root and an integer", line: key.line)
            }
            contents.lastPrimaryKeys[root] = last
        }
        for object in root.children(named: "object") { contents.rows.append(try context.row(from: object)) }
        contents.rows.sort { $0.reference < $1.reference }
        return contents
    }
}
