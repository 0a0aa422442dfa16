public import TernCore

/// A library store whose relationships exercise stage 2 in SQL (#24): a to-one with its ordered
/// to-many inverse, a many-to-many, a self-referential tree, and objects a filter leaves out.
///
/// ```swift
/// let model = try BulkRelationshipFixture.model()
/// let rows = BulkRelationshipFixture.rows(shelves: 40)
/// ```
public enum BulkRelationshipFixture {
    /// Two versions of a library: shelves of ordered books, tags, a folder tree; v2 renames
    /// `Shelf.name` to `label`.
    public static func model() throws -> VersionedModel {
        func version(_ name: String) -> ModelVersion {
            ModelVersion(name) {
                Entity("Shelf") {
                    Attribute(name == "v1" ? "name" : "label", .string)
                    Relationship("books", to: "Book", inverse: "shelf").toMany(ordered: true)
                }
                Entity("Book") {
                    Attribute("title", .string)
                    Attribute("pages", .integer64)
                    Relationship("shelf", to: "Shelf", inverse: "books")
                    Relationship("tags", to: "Tag", inverse: "books").toMany(ordered: true)
                }
                Entity("Tag") {
                    Attribute("label", .string)
                    Relationship("books", to: "Book", inverse: "tags").toMany()
                }
                Entity("Folder") {
                    Attribute("name", .string)
                    Relationship("parent", to: "Folder", inverse: "children")
                    Relationship("children", to: "Folder", inverse: "parent").toMany(ordered: true)
                }
            }
        }
        return try VersionedModel("Library") {
            version("v1")
            version("v2")
        }
    }

    /// The one-pass mapping of v1 to v2: named and unnamed `destinationInstances`, copies.
    /// Books with fewer than 20 pages are left out, so that links to them dangle.
    public static let mapping = """
        {"source": "v1", "destination": "v2", "passes": [{"name": "Library", "entityMappings": [
          {"name": "ShelfToShelf", "kind": "transform", "source": "Shelf", "destination": "Shelf",
           "attributes": {"label": "$source.name"},
           "relationships": {"books": "destinationInstances(\\"BookToBook\\", $source.books)"}},
          {"name": "BookToBook", "kind": "transform", "source": "Book", "destination": "Book",
           "filter": "pages >= 20",
           "attributes": {"title": "$source.title", "pages": "$source.pages"},
           "relationships": {"shelf": "destinationInstances(\\"ShelfToShelf\\", $source.shelf)",
                             "tags": "destinationInstances($source.tags)"}},
          {"name": "TagToTag", "kind": "copy", "source": "Tag", "destination": "Tag"},
          {"name": "FolderToFolder", "kind": "copy", "source": "Folder", "destination": "Folder"}
        ]}]}
        """

    /// A library of `shelves` shelves whose books, tags and folders link in irregular patterns.
    public static func rows(shelves: Int) -> [StoreRow] {
        var rows: [StoreRow] = []
        let tags = (1...7).map { RowReference(entityName: "Tag", primaryKey: Int64($0)) }
        for tag in tags {
            rows.append(StoreRow(reference: tag, attributes: ["label": .string("tag \(tag.primaryKey)")]))
        }
        var bookKey: Int64 = 0
        for shelf in 1...shelves {
            let reference = RowReference(entityName: "Shelf", primaryKey: Int64(shelf))
            var books: [RowReference] = []
            // Keys of later shelves' books come first sometimes: the order column, not the key, orders them.
            for index in 0..<(shelf % 5) {
                bookKey += 1
                let book = RowReference(entityName: "Book", primaryKey: bookKey)
                books.insert(book, at: index % 2 == 0 ? 0 : books.count)
                let picked = tags.enumerated().filter { ($0.offset + Int(bookKey)) % 3 == 0 }.map(\.element)
                rows.append(
                    StoreRow(
                        reference: book,
                        attributes: ["title": .string("book \(bookKey)"), "pages": .integer(bookKey * 7 % 50)],
                        toOne: ["shelf": reference], toMany: ["tags": picked.reversed()]))
            }
            rows.append(
                StoreRow(
                    reference: reference, attributes: ["name": .string("shelf \(shelf)")], toMany: ["books": books]))
        }
        // A book on no shelf, and folders three deep.
        bookKey += 1
        rows.append(
            StoreRow(
                reference: RowReference(entityName: "Book", primaryKey: bookKey),
                attributes: ["title": .string("loose"), "pages": .integer(30)]))
        func folder(_ key: Int) -> RowReference { RowReference(entityName: "Folder", primaryKey: Int64(key)) }
        for key in 1...12 {
            var row = StoreRow(reference: folder(key), attributes: ["name": .string("folder \(key)")])
            if key > 3 { row.toOne["parent"] = folder((key - 1) / 3) }
            if key <= 3 { row.toMany["children"] = (0..<3).map { folder(key * 3 + 3 - $0) } }
            rows.append(row)
        }
        return rows
    }

    /// The entities of both versions, in the order tests compare them.
    public static let entities = ["Shelf", "Book", "Tag", "Folder"]

}
