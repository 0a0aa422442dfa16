import Foundation
import TernCore
import TernStores
import TernTestSupport

/// The file-backed store types under test.
let fileKinds: [StoreKind] = [.sqlite, .binary, .xml]

/// Rows of the conformance model with every kind of relationship, both sides filled in:
/// people with pets (one-to-many), cars (one-to-one, in a hierarchy), authors and books
/// (many-to-many), a publisher.
enum SampleRows {
    static func reference(_ entity: String, _ key: Int64) -> RowReference {
        RowReference(entityName: entity, primaryKey: key)
    }

    /// `people` people, each with two pets, every other one with a car; authors and books.
    static func rows(people: Int = 6) -> [StoreRow] {
        var rows: [StoreRow] = []
        for index in 1...Int64(people) {
            let pets = [reference("Pet", index * 2 - 1), reference("Pet", index * 2)]
            var person = StoreRow(
                reference: reference("Person", index),
                attributes: ["name": .string("Person \(Self.letters(index))"), "age": .integer(20 + index)],
                toMany: ["pets": pets])
            if index % 2 == 0 {
                person.toOne["car"] = reference("Car", index)
                rows.append(
                    StoreRow(
                        reference: reference("Car", index),
                        attributes: ["model": .string("Model \(index)"), "wheels": .integer(4)],
                        toOne: ["owner": person.reference]))
            }
            rows.append(person)
            for pet in pets {
                rows.append(
                    StoreRow(
                        reference: pet, attributes: ["name": .string("Pet \(pet.primaryKey)")],
                        toOne: ["owner": person.reference]))
            }
        }
        rows.append(
            StoreRow(reference: reference("Bike", 100), attributes: ["gears": .integer(21), "wheels": .integer(2)]))
        let publisher = reference("Publisher", 1)
        let books = [reference("Book", 1), reference("Book", 2)]
        rows.append(StoreRow(reference: publisher, attributes: ["name": .string("Press")], toMany: ["books": books]))
        rows.append(
            StoreRow(reference: reference("Author", 1), attributes: ["name": .string("Ann")], toMany: ["books": books]))
        rows.append(
            StoreRow(
                reference: reference("Author", 2), attributes: ["name": .string("Bob")], toMany: ["books": [books[0]]]))
        rows.append(
            StoreRow(
                reference: books[0], attributes: ["title": .string("One")], toOne: ["publisher": publisher],
                toMany: ["authors": [reference("Author", 1), reference("Author", 2)]]))
        rows.append(
            StoreRow(
                reference: books[1], attributes: ["title": .string("Two")], toOne: ["publisher": publisher],
                toMany: ["authors": [reference("Author", 1)]]))
        return rows
    }

    /// A name made of letters only (the model's regular expression allows no digits).
    static func letters(_ number: Int64) -> String {
        String(String(number).map { Character(UnicodeScalar(UInt8(96 + Int($0.wholeNumberValue ?? 0) + 1))) })
    }
}

/// Every row of a store, compared without versions and with to-many lists in key order, so that
/// stores of different types can be compared.
func contents(of store: any PersistentStore) async throws -> [RowReference: StoreRow] {
    var result: [RowReference: StoreRow] = [:]
    for entity in store.model.entities {
        var request = StoreFetchRequest(entityName: entity.name)
        request.includesSubentities = false
        for var row in try await store.fetch(request) {
            row.version = 0
            row.toMany = row.toMany.mapValues { $0.sorted() }.filter { !$0.value.isEmpty }
            result[row.reference] = row
        }
    }
    return result
}

/// The sample rows, normalised as ``contents(of:)`` does.
func expectedContents() -> [RowReference: StoreRow] {
    var result: [RowReference: StoreRow] = [:]
    for var row in SampleRows.rows() {
        row.toMany = row.toMany.mapValues { $0.sorted() }
        result[row.reference] = row
    }
    return result
}

/// A new store of a type, in a folder, holding the sample rows.
func filledStore(_ kind: StoreKind, in folder: TemporaryDirectory, name: String = "store") async throws
    -> any PersistentStore
{
    let store: any PersistentStore =
        kind == .inMemory
        ? InMemoryStore(model: ConformanceModel.model)
        : try StoreFiles.open(at: folder.path(name), kind: kind, model: ConformanceModel.model)
    _ = try await store.save(StoreChangeSet(inserted: SampleRows.rows()))
    return store
}

/// The names in a folder, sorted.
func listing(_ folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
}
