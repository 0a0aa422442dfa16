public import TernCore

/// The model every store is checked with: every attribute type, inheritance, each kind of
/// relationship and delete rule, validation rules and a uniqueness constraint.
///
/// - `Sample`: one attribute of each storable type.
/// - `Vehicle` (abstract) ← `Car`, `Bike`: inheritance; `Person.car` ↔ `Car.owner` (one-to-one, nullify).
/// - `Person`: validated `name` (required, 1–20 letters) and `age` (0–150); `pets` (cascade) ↔
///   `Pet.owner`; `team` ↔ `Team.members` (deny); `Account.email` is unique.
/// - `Author.books` ↔ `Book.authors`: many-to-many; `Book.publisher` (no action) ↔ `Publisher.books`.
/// - `Playlist.songs` (ordered, at most 3) ↔ `Song.playlist`.
public enum ConformanceModel {
    /// The model.
    public static let model: ManagedObjectModel = {
        func attribute(_ name: String, _ type: AttributeType, optional: Bool = true) -> AttributeDescription {
            AttributeDescription(name: name, type: type, isOptional: optional)
        }
        func relation(
            _ name: String, _ destination: String, _ inverse: String, many: Bool = false, ordered: Bool = false,
            rule: DeleteRule = .nullify
        ) -> RelationshipDescription {
            RelationshipDescription(
                name: name, destination: destination, inverse: inverse, toMany: many, ordered: ordered, deleteRule: rule
            )
        }
        var name = attribute("name", .string, optional: false)
        name.minimum = .integer(1)
        name.maximum = .integer(20)
        name.regularExpression = "[A-Za-z ]+"
        var age = attribute("age", .integer16)
        age.minimum = .integer(0)
        age.maximum = .integer(150)
        var account = EntityDescription(name: "Account", attributes: [attribute("email", .string)])
        account.uniquenessConstraints = [["email"]]
        var songs = relation("songs", "Song", "playlist", many: true, ordered: true)
        songs.maxCount = 3
        let sampleTypes: [AttributeType] = [
            .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binary,
            .uuid, .uri, .transformable,
        ]
        return ManagedObjectModel(entities: [
            EntityDescription(name: "Sample", attributes: sampleTypes.map { attribute("\($0)", $0) }),
            EntityDescription(name: "Vehicle", isAbstract: true, attributes: [attribute("wheels", .integer16)]),
            EntityDescription(
                name: "Car", parent: "Vehicle", attributes: [attribute("model", .string)],
                relationships: [relation("owner", "Person", "car")]),
            EntityDescription(name: "Bike", parent: "Vehicle", attributes: [attribute("gears", .integer16)]),
            EntityDescription(
                name: "Person", attributes: [name, age, attribute("nickname", .string)],
                relationships: [
                    relation("car", "Car", "owner"), relation("pets", "Pet", "owner", many: true, rule: .cascade),
                    relation("team", "Team", "members"),
                ]),
            EntityDescription(
                name: "Pet", attributes: [attribute("name", .string)],
                relationships: [relation("owner", "Person", "pets")]),
            EntityDescription(
                name: "Team", attributes: [attribute("name", .string)],
                relationships: [relation("members", "Person", "team", many: true, rule: .deny)]),
            account,
            EntityDescription(
                name: "Author", attributes: [attribute("name", .string)],
                relationships: [relation("books", "Book", "authors", many: true)]),
            EntityDescription(
                name: "Book", attributes: [attribute("title", .string)],
                relationships: [
                    relation("authors", "Author", "books", many: true),
                    relation("publisher", "Publisher", "books", rule: .noAction),
                ]),
            EntityDescription(
                name: "Publisher", attributes: [attribute("name", .string)],
                relationships: [relation("books", "Book", "publisher", many: true)]),
            EntityDescription(name: "Playlist", attributes: [attribute("name", .string)], relationships: [songs]),
            EntityDescription(
                name: "Song", attributes: [attribute("title", .string)],
                relationships: [relation("playlist", "Playlist", "songs")]),
        ])
    }()
}
