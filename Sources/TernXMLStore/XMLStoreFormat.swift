public import Foundation
public import TernCore
import TernFormats

/// A store kept in Tern's XML file format: Core Data's `NSXMLStoreType`, in a readable format
/// of Tern's own inspired by Core Data's (described in `docs/XMLStore.md`).
///
/// The whole store is read when opened and rewritten, durably, on each save (see
/// ``AtomicStore``). The metadata comes first in the file, so ``AtomicStore/metadata(at:)``
/// reads it without parsing the rows.
///
/// ```swift
/// let store = try XMLStore(at: url, model: model)
/// try await coordinator.addStore(store)
/// let metadata = try XMLStore.metadata(at: url)
/// ```
public typealias XMLStore = AtomicStore<XMLStoreFormat>

/// Tern's XML store format: `<database>` holding `<databaseInfo>` (metadata and key counters)
/// then one `<object>` per row.
///
/// Use it through ``XMLStore``. Reading refuses entity declarations and external entities,
/// and bounds nesting and size. Every value round-trips exactly: numbers and dates are written
/// with all their digits, and strings XML cannot hold (NUL and other control characters) are
/// written in base64.
///
/// ```swift
/// let text = String(decoding: try XMLStoreFormat.encode(contents), as: UTF8.self)
/// ```
public enum XMLStoreFormat: AtomicStoreFormat {
    /// ``StoreKind/xml``.
    public static var kind: StoreKind { .xml }

    /// The version of the layout this code writes and reads (`<database version="1">`).
    public static let formatVersion = 1
    /// The largest store file accepted, in bytes.
    public static let maximumSize = 1 << 30
    /// The largest `<databaseInfo>` section ``metadata(at:)`` reads, in bytes.
    public static let maximumMetadataSize = 16 << 20

    /// Encodes a whole store as an XML document.
    ///
    /// - Parameter contents: The metadata, rows and key counters.
    /// - Returns: The document, in UTF-8.
    /// - Complexity: O(*n*) in the size of the store.
    public static func encode(_ contents: AtomicStoreContents) throws -> Data {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<database format=\"Tern\" version=\"\(formatVersion)\">\n <databaseInfo>\n"
        xml += "  <UUID>\(XMLElementTree.escape(contents.metadata.uuid))</UUID>\n  <metadata>\n"
        var dictionary = contents.metadata.propertyList
        dictionary.removeValue(forKey: StoreMetadata.Key.storeUUID)
        appendPropertyList(.dictionary(dictionary), indent: "   ", to: &xml)
        xml += "  </metadata>\n  <primaryKeys>\n"
        for (root, last) in contents.lastPrimaryKeys.sorted(by: { $0.key < $1.key }) {
            xml += "   <lastKey root=\"\(XMLElementTree.escape(root))\">\(last)</lastKey>\n"
        }
        xml += "  </primaryKeys>\n </databaseInfo>\n"
        for row in contents.rows { appendObject(row, to: &xml) }
        xml += "</database>\n"
        return Data(xml.utf8)
    }

    /// Decodes a whole store.
    ///
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``TernError/Code/unreadableStore`` when the document is malformed, unsafe,
    ///   truncated, of a newer version or not an XML store.
    /// - Complexity: O(*n*) in the size of the document.
    public static func decode(_ data: Data, path: String) throws -> AtomicStoreContents {
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

    /// Reads an XML store's metadata from its `<databaseInfo>`, without parsing the rows.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``TernError/Code/unreadableStore`` when the file is missing, not an XML store or
    ///   its metadata is malformed.
    /// - Complexity: O(*m*) in the size of the metadata section.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        let context = DecodingContext(path: url.path)
        let end = Data("</databaseInfo>".utf8)
        var prefix = Data()
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            while prefix.range(of: end, in: max(0, prefix.count - (64 << 10) - end.count)..<prefix.count) == nil {
                guard prefix.count < maximumMetadataSize, let chunk = try handle.read(upToCount: 64 << 10),
                      !chunk.isEmpty
                else {
                    throw context.invalid("no </databaseInfo> in its first \(maximumMetadataSize >> 20) MB")
                }
                prefix.append(chunk)
            }
        } catch let error as TernError {
            throw error
        } catch {
            throw TernError(
                .unreadableStore, "could not read the XML store; check that the file exists and is readable",
                path: url.path)
        }
        guard let found = prefix.range(of: end) else { throw context.invalid("there is no </databaseInfo>") }
        var document = prefix[..<found.upperBound]
        document.append(Data("</database>".utf8))
        let root = try XMLElementTree.parse(Data(document), path: url.path, limits: limits)
        return try context.metadata(inDatabase: root)
    }

    // MARK: - Non public

    /// The parser's limits for store files.
    static var limits: XMLElementTree.Limits {
        var limits = XMLElementTree.Limits()
        limits.maximumSize = maximumSize
        limits.code = .unreadableStore
        limits.documentName = "Tern XML store"
        return limits
    }

    private static func appendObject(_ row: StoreRow, to xml: inout String) {
        xml += " <object type=\"\(XMLElementTree.escape(row.reference.entityName))\""
        xml += " pk=\"\(row.reference.primaryKey)\" version=\"\(row.version)\">\n"
        for (name, value) in row.attributes.sorted(by: { $0.key < $1.key }) {
            let (type, text, base64) = encodedValue(value)
            xml += "  <attribute name=\"\(XMLElementTree.escape(name))\" type=\"\(type)\""
            xml += base64 ? " encoding=\"base64\">" : ">"
            xml += text + "</attribute>\n"
        }
        for (name, reference) in row.toOne.sorted(by: { $0.key < $1.key }) {
            xml += "  <relationship name=\"\(XMLElementTree.escape(name))\" kind=\"to-one\""
            xml += " idrefs=\"\(XMLElementTree.escape(reference.description))\"/>\n"
        }
        for (name, references) in row.toMany.sorted(by: { $0.key < $1.key }) {
            let refs = references.map(\.description).joined(separator: " ")
            xml += "  <relationship name=\"\(XMLElementTree.escape(name))\" kind=\"to-many\""
            xml += " idrefs=\"\(XMLElementTree.escape(refs))\"/>\n"
        }
        xml += " </object>\n"
    }
}
