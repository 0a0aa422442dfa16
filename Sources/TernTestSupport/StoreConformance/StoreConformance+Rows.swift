import Foundation
public import TernCore
import Testing

/// Behaviours about values, inheritance, metadata and reading rows.
extension StoreConformance {
    /// One value of each attribute type of ``ConformanceModel``'s `Sample`, by attribute name.
    public static let sampleValues: [String: AttributeValue] = [
        "integer16": .integer(-7), "integer32": .integer(100_000), "integer64": .integer(1 << 40),
        "decimal": .decimal(Decimal(string: "12.5") ?? 0), "double": .double(3.25), "float": .double(1.5),
        "string": .string("héllo wörld"), "boolean": .bool(true),
        "date": .date(Date(timeIntervalSinceReferenceDate: 1000.5)), "binary": .data(Data([0, 1, 2, 255])),
        "uuid": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
        "uri": .uri(URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")),
        "transformable": .data(Data("archived".utf8)),
    ]

    func everyAttributeTypeRoundTrips() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let values = Self.sampleValues
        let id = try await ObjectContext(coordinator: coordinator).perform { context in
            let sample = context.insert("Sample")
            for (name, value) in values { sample[attribute: name] = value }
            let empty = context.insert("Sample")
            _ = empty
            try await context.save()
            return sample.objectID
        }
        #expect(!id.isTemporary)
        let read = try await ObjectContext(coordinator: coordinator).perform { context in
            let sample = try await context.object(with: id)
            return values.keys.reduce(into: [String: AttributeValue]()) { $0[$1] = sample[attribute: $1] }
        }
        #expect(read == values)
        let nils = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.fetch(FetchRequest(entityName: "Sample")).filter { $0.objectID != id }
                .map { object in values.keys.filter { object[attribute: $0] != nil } }
        }
        #expect(nils == [[]])
    }

    func inheritance() async throws {
        let (coordinator, store) = try await makeCoordinator()
        let cars = try await store.newPrimaryKeys(forEntity: "Car", count: 3)
        let bikes = try await store.newPrimaryKeys(forEntity: "Bike", count: 3)
        #expect(Set(cars).isDisjoint(with: bikes))
        #expect(Set(cars + bikes).count == 6)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            let car = context.insert("Car")
            car[attribute: "wheels"] = .integer(4)
            car[attribute: "model"] = .string("Zoe")
            context.insert("Bike")[attribute: "wheels"] = .integer(2)
            try await context.save()
        }
        let reader = ObjectContext(coordinator: coordinator)
        let all = try await reader.fetchObjectIDs(FetchRequest(entityName: "Vehicle"))
        #expect(Set(all.map(\.entityName)) == ["Car", "Bike"])
        var onlyVehicle = FetchRequest(entityName: "Vehicle")
        onlyVehicle.includesSubentities = false
        #expect(try await reader.count(for: onlyVehicle) == 0)
        #expect(try await reader.count(for: FetchRequest(entityName: "Car")) == 1)
        let wheels = try await reader.perform { context in
            try await context.fetch(FetchRequest(entityName: "Car")).map { $0[attribute: "wheels"] }
        }
        #expect(wheels == [.integer(4)])
    }

    func metadataRoundTrips() async throws {
        let (_, store) = try await makeCoordinator()
        var metadata = try await store.metadata()
        #expect(metadata.uuid == store.identifier)
        #expect(metadata.versionHashes == ConformanceModel.model.entityVersionHashes)
        metadata.applicationKeys["app"] = .string("value")
        try await store.setMetadata(metadata)
        #expect(try await store.metadata().applicationKeys["app"] == .string("value"))
    }

    func rowsByReference() async throws {
        let (_, store) = try await makeCoordinator()
        let keys = try await store.newPrimaryKeys(forEntity: "Pet", count: 3)
        let rows = keys.map { key in
            StoreRow(
                reference: RowReference(entityName: "Pet", primaryKey: key), attributes: ["name": .string("pet \(key)")]
            )
        }
        let result = try await store.save(StoreChangeSet(inserted: rows))
        #expect(result.newVersions.count == 3)
        #expect(result.newVersions.values.allSatisfy { $0 >= 1 })
        let missing = RowReference(entityName: "Pet", primaryKey: keys.max().map { $0 + 100 } ?? 100)
        let read = try await store.rows(for: [rows[2].reference, missing, rows[0].reference])
        #expect(read.map(\.reference) == [rows[2].reference, rows[0].reference])
        #expect(read.first?.attributes == rows[2].attributes)
        #expect(try await store.count(StoreFetchRequest(entityName: "Pet")) == 3)
        #expect(
            Set(try await store.fetchReferences(StoreFetchRequest(entityName: "Pet"))) == Set(rows.map(\.reference)))
    }

    func sortOffsetLimit() async throws {
        let (coordinator, _) = try await makeCoordinator()
        let names = ["delta", "alpha", "echo", "charlie", "bravo"]
        let inserted = try await ObjectContext(coordinator: coordinator).batchInsert(
            entityName: "Pet", objects: names.map { ["name": .string($0)] })
        #expect(inserted.count == 5)
        var request = FetchRequest(entityName: "Pet", sortDescriptors: [FetchSort(key: "name")])
        request.fetchOffset = 1
        request.fetchLimit = 3
        let context = ObjectContext(coordinator: coordinator)
        let sorted = try await context.fetchDictionaries(request).map { $0["name"] }
        #expect(sorted == [.string("bravo"), .string("charlie"), .string("delta")])
        #expect(try await context.count(for: request) == 3)
        request.sortDescriptors = [FetchSort(key: "name", ascending: false)]
        request.fetchOffset = 0
        request.fetchLimit = nil
        let descending = try await context.fetchDictionaries(request).compactMap { $0["name"] }
        #expect(descending == names.sorted(by: >).map { .string($0) })
    }

    func predicates() async throws {
        let (coordinator, _) = try await makeCoordinator()
        _ = try await insertPersonWithPets(coordinator)
        let context = ObjectContext(coordinator: coordinator)
        func names(_ entity: String, _ format: String) async throws -> [String] {
            let request = FetchRequest(
                entityName: entity, predicate: try FetchPredicate(format), sortDescriptors: [FetchSort(key: "name")])
            return try await context.fetchDictionaries(request).compactMap { value in
                if case .string(let name)? = value["name"] { name } else { nil }
            }
        }
        #expect(try await names("Pet", "name BEGINSWITH 'R'") == ["Rex"])
        #expect(try await names("Pet", "owner.name == 'Ada'") == ["Rex", "Tom"])
        #expect(try await names("Person", "ANY pets.name == 'Tom'") == ["Ada"])
        #expect(try await names("Person", "pets.@count == 3") == [])
        // Pending changes count: a renamed pet matches by its new name, a new one too.
        let pending = try await context.perform { context in
            let pets = try await context.fetch(
                FetchRequest(entityName: "Pet", predicate: try FetchPredicate("name == 'Rex'")))
            pets.first?["name"] = "Max"
            context.insert("Pet")["name"] = "Mia"
            let request = FetchRequest(
                entityName: "Pet", predicate: try FetchPredicate("name BEGINSWITH 'M'"),
                sortDescriptors: [FetchSort(key: "name")])
            let found = try await context.fetch(request).compactMap { $0["name"] as String? }
            var saved = request
            saved.includesPendingChanges = false
            return (found, try await context.fetchObjectIDs(saved).count)
        }
        #expect(pending.0 == ["Max", "Mia"])
        #expect(pending.1 == 0)
    }
}
