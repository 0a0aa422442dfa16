import Foundation
public import TernCore
import Testing

/// The same predicates and sorts on the same data give the same rows in the same order in the store
/// under test as in an ``InMemoryStore``, whose evaluation in Swift is the reference: SQL stores
/// must translate exactly or fall back to Swift evaluation.
extension StoreConformance {
    /// One predicate of the equivalence table.
    public struct PredicateCase: Sendable, CustomStringConvertible {
        /// The entity fetched.
        public var entity: String
        /// The predicate's format.
        public var format: String
        /// The predicate's arguments.
        public var arguments: [FetchPredicate.Argument]

        /// The entity and the format, for test results.
        public var description: String { "\(entity): \(format)" }
    }

    /// Values and strings that put translations to the test: case, diacritics, `ß`, wildcards of
    /// SQL and of `LIKE`, quotes, and SQL in values.
    static let awkwardStrings: [String?] = [
        "Élan", "élan", "ELAN", "Straße", "STRASSE", "naïve", "Zoë", "apple*?", "", nil, "50% off_now",
        "x' OR 1=1 --", "Ǆemal", "zoe",
    ]

    /// A hostile value, bound like any other.
    static let hostile = "'); DROP TABLE ZSAMPLE; --"

    /// The predicate table: every operator, modifier and nil case, key paths through to-one
    /// relationships, `ANY`/`ALL`/`NONE` and `@count` on to-many ones.
    public static let predicateCases: [PredicateCase] = {
        let uuid = AttributeValue.uuid(UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)))
        let sample: [(String, [FetchPredicate.Argument])] = [
            ("string == 'Élan'", []), ("string ==[c] 'élan'", []), ("string ==[cd] 'elan'", []),
            ("string ==[d] 'Elan'", []), ("string != 'ELAN'", []), ("string == nil", []), ("string != nil", []),
            ("string < 'b'", []), ("string >=[c] 'e'", []), ("string BEGINSWITH 'É'", []),
            ("string BEGINSWITH[c] 'é'", []), ("string BEGINSWITH[cd] 'e'", []), ("string ENDSWITH 'ße'", []),
            ("string ENDSWITH[c] 'SSE'", []), ("string CONTAINS 'la'", []), ("string CONTAINS[cd] 'LA'", []),
            ("string CONTAINS ''", []), ("string LIKE '*an'", []), ("string LIKE[c] '?lan'", []),
            ("string LIKE '50% off_*'", []), ("string LIKE 'apple\\\\*\\\\?'", []), ("string MATCHES '[A-Z].*'", []),
            ("string MATCHES[c] 'é.*'", []), ("string MATCHES[cd] 'e.*'", []), ("string IN {'Élan', 'Zoë', nil}", []),
            ("string IN[c] {'elan'}", []), ("string IN 'xÉlanx'", []), ("string BETWEEN {'a', 'm'}", []),
            ("NOT string BEGINSWITH 'É'", []), ("string ==[c] 'STRASSE'", []),
            ("string == %@", [.value(.string(hostile))]),
            ("string == %@", [.value(.string("x' OR 1=1 --"))]), ("string LIKE %@", [.value(.string("*%*"))]),
            ("string == 3", []), ("string ==[c] 'ǆemal'", []),
            ("integer16 == 3", []), ("integer16 != 3", []), ("integer16 > 0", []), ("integer16 <= 3.5", []),
            ("integer16 == nil", []), ("integer16 != nil", []), ("integer16 < nil", []),
            ("integer16 IN {0, 3, nil}", []), ("integer16 IN {}", []), ("integer16 BETWEEN {0, 42}", []),
            ("NOT (integer16 > 3)", []), ("integer16 == 'three'", []), ("integer16 != 'three'", []),
            ("integer16 BEGINSWITH '3'", []), ("integer64 > 1099511627776", []),
            ("integer32 >= -1 AND integer32 < 5", []),
            ("double >= 1.5 AND double < 1e11", []), ("double < 0", []), ("float == 1.5", []), ("boolean == TRUE", []),
            ("boolean == NO", []), ("boolean != YES", []), ("date > CAST(1000, 'NSDate')", []),
            ("date BETWEEN {CAST(0, 'NSDate'), CAST(5000, 'NSDate')}", []), ("date == nil", []),
            ("uuid == %@", [.value(uuid)]), ("uuid != %@", [.value(uuid)]),
            ("uri == %@", [.value(.uri(URL(string: "https://example.com/3") ?? URL(fileURLWithPath: "/")))]),
            ("binary == %@", [.value(.data(Data([3, 3])))]), ("decimal > 1", []), ("decimal == nil", []),
            ("TRUEPREDICATE", []), ("FALSEPREDICATE", []),
            ("(integer16 > 0 OR string == nil) AND NOT boolean == TRUE", []),
            ("NOT (string ==[cd] 'elan' OR integer16 == nil)", []),
        ]
        let related: [(String, String)] = [
            ("Person", "car.model == 'Zoe'"), ("Person", "car.model ==[cd] 'clio'"), ("Person", "car.wheels > 3"),
            ("Person", "car.model == nil"), ("Person", "car.model != 'Zoe'"), ("Person", "team.name ==[c] 'RED'"),
            ("Person", "ANY pets.name == 'Tom'"), ("Person", "ANY pets.name ==[c] 'tom'"),
            ("Person", "ALL pets.name BEGINSWITH 'T'"), ("Person", "NONE pets.name == 'Rex'"),
            ("Person", "pets.@count == 0"), ("Person", "pets.@count >= 2"), ("Person", "ANY pets.name == nil"),
            ("Person", "NOT ANY pets.name ==[cd] 'emile'"), ("Person", "name BEGINSWITH[cd] 'a' AND age > 18"),
            ("Person", "age != 30"), ("Person", "nickname ==[cd] 'ace'"), ("Person", "pets.name CONTAINS 'Tom'"),
            ("Pet", "owner.name == 'Ada'"), ("Pet", "owner.age >= 30"), ("Pet", "owner.team.name == 'Red'"),
            ("Pet", "owner == nil"), ("Pet", "owner != nil"), ("Pet", "owner.team == nil"),
            ("Pet", "NOT (owner == nil) AND owner.team != nil"), ("Person", "car == nil OR team != nil"),
            ("Pet", "owner.car.model LIKE[c] 'z*'"),
            ("Vehicle", "wheels == 4"), ("Vehicle", "wheels < 4 OR wheels == nil"), ("Car", "owner.name ==[c] 'ádam'"),
            ("Author", "ANY books.title CONTAINS[c] 'swift'"), ("Author", "books.@count > 1"),
            ("Book", "ALL authors.name != 'Bo'"), ("Book", "publisher.name == 'P1'"),
            ("Book", "ANY authors.name IN {'Ann', 'Bo'}"), ("Team", "members.@count == 2"),
            ("Team", "ANY members.age > 60"), ("Team", "ALL members.age BETWEEN {18, 70}"),
        ]
        return sample.map { PredicateCase(entity: "Sample", format: $0.0, arguments: $0.1) }
            + related.map { PredicateCase(entity: $0.0, format: $0.1, arguments: []) }
    }()

    /// Sort combinations of the table, by entity.
    static let sortCases: [String: [[FetchSort]]] = [
        "Sample": [
            [FetchSort(key: "string")],
            [FetchSort(key: "string", ascending: false, caseInsensitive: true), FetchSort(key: "integer16")],
            [FetchSort(key: "integer16", ascending: false), FetchSort(key: "double")], [FetchSort(key: "date")],
            [FetchSort(key: "uuid", ascending: false)], [FetchSort(key: "decimal")],
            [FetchSort(key: "boolean"), FetchSort(key: "uri")],
        ],
        "Person": [
            [FetchSort(key: "car.model"), FetchSort(key: "name", ascending: false)],
            [FetchSort(key: "name", caseInsensitive: true)],
        ],
        "Pet": [[FetchSort(key: "owner.name", caseInsensitive: true), FetchSort(key: "name")]],
        "Vehicle": [[FetchSort(key: "wheels", ascending: false)]],
    ]

    func predicatesMatchInMemoryEvaluation() async throws {
        let store = try await factory.make(ConformanceModel.model)
        let reference = InMemoryStore(model: ConformanceModel.model)
        let changes = try await Self.equivalenceData(keys: store)
        _ = try await store.save(changes)
        _ = try await reference.save(changes)
        for testCase in Self.predicateCases {
            let predicate = try FetchPredicate(testCase.format, arguments: testCase.arguments)
            var orders: [[FetchSort]] = [[]] + (Self.sortCases[testCase.entity] ?? [])
            if testCase.entity == "Sample" { orders = Array(orders.prefix(3)) }
            for sorts in orders {
                var request = StoreFetchRequest(
                    entityName: testCase.entity, predicate: predicate, sortDescriptors: sorts)
                try await Self.expectSameResults(store, reference, request, testCase)
                request.offset = 1
                request.limit = 3
                try await Self.expectSameResults(store, reference, request, testCase)
            }
        }
        for (entity, orders) in Self.sortCases {
            for sorts in orders {
                var request = StoreFetchRequest(entityName: entity, sortDescriptors: sorts)
                try await Self.expectSameResults(
                    store, reference, request, PredicateCase(entity: entity, format: "", arguments: []))
                request.limit = 2
                request.offset = 2
                try await Self.expectSameResults(
                    store, reference, request, PredicateCase(entity: entity, format: "", arguments: []))
            }
        }
    }

    /// Expects the same references, in the same order, from `fetch`, `fetchReferences` and `count`
    /// (or an error from both).
    private static func expectSameResults(
        _ store: any PersistentStore, _ reference: InMemoryStore, _ request: StoreFetchRequest,
        _ testCase: PredicateCase
    ) async throws {
        func outcome(_ body: () async throws -> [RowReference]) async -> [RowReference]? { try? await body() }
        let expected = await outcome { try await reference.fetch(request).map(\.reference) }
        let fetched = await outcome { try await store.fetch(request).map(\.reference) }
        let references = await outcome { try await store.fetchReferences(request) }
        let count = try? await store.count(request)
        let sorts = request.sortDescriptors.map(\.description).joined(separator: ", ")
        let comment = Comment(
            rawValue: "\(testCase) sorted by [\(sorts)] offset \(request.offset) limit \(request.limit ?? -1)")
        #expect(fetched == expected, comment)
        #expect(references == expected, comment)
        #expect(count == expected?.count, comment)
    }

    /// Rows covering every attribute type with nils and awkward strings, inheritance, to-one,
    /// one-to-many and many-to-many relationships, with keys allocated by `keys`.
    ///
    /// - Parameter store: The store that allocates the primary keys.
    /// - Returns: The rows to insert, for ``ConformanceModel``.
    /// - Throws: The store's errors.
    public static func equivalenceData(keys store: any PersistentStore) async throws -> StoreChangeSet {
        func references(_ entity: String, _ count: Int) async throws -> [RowReference] {
            try await store.newPrimaryKeys(forEntity: entity, count: count).map {
                RowReference(entityName: entity, primaryKey: $0)
            }
        }
        var rows: [RowReference: StoreRow] = [:]
        func set(_ row: RowReference, _ name: String, _ value: AttributeValue?) {
            rows[row, default: StoreRow(reference: row)].attributes[name] = value
        }
        func relate(_ row: RowReference, _ name: String, toOne destination: RowReference?) {
            rows[row, default: StoreRow(reference: row)].toOne[name] = destination
        }
        func relate(_ row: RowReference, _ name: String, toMany destination: RowReference) {
            rows[row, default: StoreRow(reference: row)].toMany[name, default: []].append(destination)
        }
        for (index, sample) in try await references("Sample", awkwardStrings.count).enumerated() {
            let i = Int64(index)
            set(sample, "string", awkwardStrings[index].map(AttributeValue.string))
            set(sample, "integer16", index % 5 == 4 ? nil : .integer([3, 0, -7, 3, 0, 42, 100, 8][index % 8]))
            set(sample, "integer32", .integer(i - 3))
            set(sample, "integer64", index % 3 == 0 ? .integer((1 << 40) + i) : .integer(-i))
            set(sample, "double", index % 4 == 1 ? nil : .double([3.25, -0.5, 1e10, 1.5, 2.0][index % 5]))
            set(sample, "float", .double(index % 2 == 0 ? 1.5 : -2.25))
            set(sample, "boolean", index % 3 == 2 ? nil : .bool(index % 2 == 0))
            set(
                sample, "date",
                index % 6 == 5 ? nil : .date(Date(timeIntervalSinceReferenceDate: Double(index) * 700.5 - 1000)))
            set(sample, "uuid", .uuid(UUID(uuid: (UInt8(index % 3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))))
            set(
                sample, "uri",
                index == 9 ? nil : .uri(URL(string: "https://example.com/\(index % 4)") ?? URL(fileURLWithPath: "/")))
            set(sample, "binary", .data(Data([UInt8(index % 4), 3])))
            set(sample, "decimal", .decimal(Decimal(index) / 4))
        }
        let people = try await references("Person", 6)
        let personValues: [(String, Int64?, String?)] = [
            ("Ada", 30, nil), ("ádam", nil, "ace"), ("ÁDAM", 17, "ACE"), ("Zoë", 65, "Ünïcode"), ("zoe", 30, nil),
            ("Bob", 120, "x"),
        ]
        for (person, values) in zip(people, personValues) {
            set(person, "name", .string(values.0))
            set(person, "age", values.1.map(AttributeValue.integer))
            set(person, "nickname", values.2.map(AttributeValue.string))
        }
        let cars = try await references("Car", 3)
        let bikes = try await references("Bike", 2)
        for (car, values) in zip(cars, [("Zoe", 4), ("Clio", 4), ("clío", 3)]) {
            set(car, "model", .string(values.0))
            set(car, "wheels", .integer(Int64(values.1)))
        }
        set(bikes[0], "gears", .integer(21))
        set(bikes[0], "wheels", .integer(2))
        set(bikes[1], "gears", nil)
        for (car, person) in [(cars[0], people[0]), (cars[1], people[2]), (cars[2], people[3])] {
            relate(car, "owner", toOne: person)
            relate(person, "car", toOne: car)
        }
        let teams = try await references("Team", 2)
        set(teams[0], "name", .string("Red"))
        set(teams[1], "name", .string("réd"))
        for (person, team) in [(people[0], teams[0]), (people[1], teams[0]), (people[3], teams[1])] {
            relate(person, "team", toOne: team)
            relate(team, "members", toMany: person)
        }
        // Nemo has no owner: `owner == nil` matches it.
        let pets = try await references("Pet", 7)
        let petValues: [(String?, Int?)] = [
            ("Rex", 0), ("Tom", 0), ("tom", 1), ("Émile", 3), (nil, 3), ("Tim", 4), ("Nemo", nil),
        ]
        for (pet, values) in zip(pets, petValues) {
            set(pet, "name", values.0.map(AttributeValue.string))
            guard let owner = values.1 else { continue }
            relate(pet, "owner", toOne: people[owner])
            relate(people[owner], "pets", toMany: pet)
        }
        let authors = try await references("Author", 3)
        let books = try await references("Book", 4)
        let publishers = try await references("Publisher", 2)
        for (author, name) in zip(authors, ["Ann", "Bo", "Cé"]) { set(author, "name", .string(name)) }
        for (book, title) in zip(books, ["Swift", "SWIFTER", "Café", "Notes"]) { set(book, "title", .string(title)) }
        for (publisher, name) in zip(publishers, ["P1", "P2"]) { set(publisher, "name", .string(name)) }
        for (author, book) in [(0, 0), (0, 1), (1, 1), (1, 2), (2, 3)] {
            relate(authors[author], "books", toMany: books[book])
            relate(books[book], "authors", toMany: authors[author])
        }
        for (book, publisher) in [(0, 0), (1, 0), (2, 1)] {
            relate(books[book], "publisher", toOne: publishers[publisher])
            relate(publishers[publisher], "books", toMany: books[book])
        }
        return StoreChangeSet(inserted: rows.values.sorted { $0.reference < $1.reference })
    }
}
