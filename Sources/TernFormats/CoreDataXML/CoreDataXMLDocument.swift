package import TernCore

/// A Core Data XML store document (`NSXMLStoreType`), read and written without a model.
///
/// This is the file as Core Data and Xcode write it (`.xcmappingmodel/xcmapping.xml` files are
/// such documents too): a `<database>` holding a `<databaseInfo>` (store version, UUID, the
/// object-id counter and the metadata property list) and one `<object>` per managed object.
/// Entity names appear upper-cased and property names lower-cased, exactly as in the file;
/// mapping them back to a model is the reader's business (see `XMLStoreFormat`). Values are
/// kept as the text of their elements, in document order. `docs/XMLStore.md` describes the
/// format.
///
/// ```swift
/// let document = try CoreDataXMLDocument(data: Data(contentsOf: url), path: url.path)
/// for object in document.objects where object.type == "XDDEVENTITYMAPPING" {
///     print(object.id, object.attribute(named: "sourcename")?.text ?? "")
/// }
/// let bytes = try document.encoded()   // as Core Data writes it
/// ```
package struct CoreDataXMLDocument: Sendable, Hashable {
    /// The `<databaseInfo>` section.
    package var info: DatabaseInfo
    /// The `<object>` elements, in document order.
    package var objects: [Object]

    /// Creates a document.
    ///
    /// - Parameters:
    ///   - info: The `<databaseInfo>` section.
    ///   - objects: The objects, in the order they are written.
    package init(info: DatabaseInfo = DatabaseInfo(), objects: [Object] = []) {
        self.info = info
        self.objects = objects
    }

    /// The `<version>` every Core Data release since Mac OS X 10.4 writes.
    package static let storeVersion: Int64 = 134_481_920

    /// The document type declaration Core Data writes, naming its DTD.
    package static let doctype = "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">"

    /// The `<databaseInfo>` section: everything but the objects.
    package struct DatabaseInfo: Sendable, Hashable {
        /// `<version>`: ``CoreDataXMLDocument/storeVersion`` in every known file; nil when absent.
        package var version: Int64?
        /// `<UUID>`: the store's identifier (`NSStoreUUIDKey`); nil when absent.
        package var uuid: String?
        /// `<nextObjectID>`: the object-id counter; nil when absent. In the files Core Data
        /// writes it is the number of the highest `z` id handed out.
        package var nextObjectID: Int64?
        /// The dictionary of `<metadata><plist>`; nil for an empty `<metadata></metadata>` (as
        /// Mac OS X 10.4 wrote) or none at all.
        package var metadata: [String: PropertyListValue]?

        /// Creates a database info section.
        ///
        /// - Parameters:
        ///   - version: `<version>`.
        ///   - uuid: `<UUID>`.
        ///   - nextObjectID: `<nextObjectID>`.
        ///   - metadata: The metadata dictionary.
        package init(
            version: Int64? = CoreDataXMLDocument.storeVersion, uuid: String? = nil, nextObjectID: Int64? = nil,
            metadata: [String: PropertyListValue]? = nil
        ) {
            self.version = version
            self.uuid = uuid
            self.nextObjectID = nextObjectID
            self.metadata = metadata
        }
    }

    /// One `<object>`: a managed object.
    package struct Object: Sendable, Hashable {
        /// `type`: the entity name as written (Core Data upper-cases it: `XDDEVENTITYMAPPING`).
        package var type: String
        /// `id`: the object's identifier, unique in the document (Core Data writes `z` and a
        /// number: `z102`).
        package var id: String
        /// The `<attribute>` elements, in document order; Core Data writes none for nil values.
        package var attributes: [Attribute]
        /// The `<relationship>` elements, in document order.
        package var relationships: [Relationship]

        /// Creates an object.
        ///
        /// - Parameters:
        ///   - type: The entity name as written.
        ///   - id: The object's identifier.
        ///   - attributes: Its attributes.
        ///   - relationships: Its relationships.
        package init(type: String, id: String, attributes: [Attribute] = [], relationships: [Relationship] = []) {
            self.type = type
            self.id = id
            self.attributes = attributes
            self.relationships = relationships
        }

        /// The first attribute with that name as written.
        ///
        /// - Complexity: O(*n*) in the number of attributes.
        package func attribute(named name: String) -> Attribute? {
            attributes.first { $0.name == name }
        }

        /// The first relationship with that name as written.
        ///
        /// - Complexity: O(*n*) in the number of relationships.
        package func relationship(named name: String) -> Relationship? {
            relationships.first { $0.name == name }
        }
    }

    /// One `<attribute>`: a non-nil attribute value as text.
    package struct Attribute: Sendable, Hashable {
        /// `name`: the property name as written (Core Data lower-cases it).
        package var name: String
        /// `type`: how the text is to be read, one of ``AttributeType``'s spellings in the files
        /// Core Data writes (`string`, `int16`, `bool`, `binary`, …).
        package var type: String
        /// The element's text, unescaped: digits, base64, or the string itself.
        package var text: String

        /// Creates an attribute.
        ///
        /// - Parameters:
        ///   - name: The property name as written.
        ///   - type: The type spelling.
        ///   - text: The value as text.
        package init(name: String, type: String, text: String) {
            self.name = name
            self.type = type
            self.text = text
        }
    }

    /// One `<relationship>`: the objects a relationship of an object refers to.
    package struct Relationship: Sendable, Hashable {
        /// `name`: the property name as written (Core Data lower-cases it).
        package var name: String
        /// `type`: the relationship's minimum and maximum counts as `min/max` (`1/1` for a
        /// to-one, `0/0` for an unbounded to-many).
        package var type: String
        /// `destination`: the destination entity's name as written (upper-cased).
        package var destination: String
        /// `idrefs`: the ids of the objects referred to, in document order; empty when the
        /// attribute is absent, as Core Data writes an empty relationship.
        package var idrefs: [String]

        /// Creates a relationship.
        ///
        /// - Parameters:
        ///   - name: The property name as written.
        ///   - type: The counts as `min/max`.
        ///   - destination: The destination entity's name as written.
        ///   - idrefs: The ids referred to.
        package init(name: String, type: String, destination: String, idrefs: [String] = []) {
            self.name = name
            self.type = type
            self.destination = destination
            self.idrefs = idrefs
        }

        /// The minimum and maximum counts `type` holds (`0` meaning no bound), or nil when it is
        /// not two integers separated by a slash.
        package var counts: (minimum: Int, maximum: Int)? {
            let parts = type.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let minimum = Int(parts[0]), let maximum = Int(parts[1]) else { return nil }
            return (minimum, maximum)
        }
    }

    /// The `type` spellings of `<attribute>` elements, one per Core Data attribute type.
    package enum AttributeType {
        /// Integer 16.
        package static let integer16 = "int16"
        /// Integer 32.
        package static let integer32 = "int32"
        /// Integer 64.
        package static let integer64 = "int64"
        /// Decimal.
        package static let decimal = "decimal"
        /// Double.
        package static let double = "double"
        /// Float.
        package static let float = "float"
        /// String.
        package static let string = "string"
        /// Boolean, written `1` or `0`.
        package static let boolean = "bool"
        /// Date, written as seconds since 2001-01-01 00:00 UTC.
        package static let date = "date"
        /// Binary data, written in base64.
        package static let binary = "binary"
        /// Transformable: the transformer's data, written in base64.
        package static let transformable = "transformable"
        /// UUID.
        package static let uuid = "uuid"
        /// URI.
        package static let uri = "uri"
    }
}
