import Foundation
import TernCore
import TernFormats
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Objects saved by Tern through a context into a copy of a store Core Data wrote.
@Suite struct FixtureStoreWritingTests {
    @Test func objectsSavedIntoARealStoreReadBackAndKeepItsLayout() async throws {
        let tmp = try TemporaryDirectory()
        let url = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let versions = try XcodeModel.readVersionedModel(
            at: Fixtures.sampleModel, order: ["SampleModel", "SampleModel2", "SampleModel3"])
        let model = try #require(versions.version(named: "SampleModel")).model
        let before = try Self.maxKeys(of: url)

        // Write: a person owning a new sport car and one of the cars Core Data saved.
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(try SQLiteStore(at: url, model: model))
        let context = ObjectContext(coordinator: coordinator)
        let updatedAt = Date(timeIntervalSinceReferenceDate: 737_057_647.25)
        let personID = UUID()
        let (ownerID, oldCarID) = try await context.perform { context in
            let person = context.insert("Person")
            person[attribute: "firstName"] = .string("Ada 'O'; DROP TABLE ZCAR; --")
            person[attribute: "lastName"] = .string("Lovelace 🚗")
            person[attribute: "id"] = .uuid(personID)
            person[attribute: "updatedAt"] = .date(updatedAt)
            let car = context.insert("SportCar")
            car[attribute: "numberPlate"] = .string("TERN-1")
            car[attribute: "maker"] = .string("Tern")
            car[toOne: "owner"] = person
            let request = FetchRequest(entityName: "Car", predicate: try FetchPredicate("owner == nil"))
            let oldCar = try #require(try await context.fetch(request).first)
            oldCar[toOne: "owner"] = person
            try await context.save()
            return (person.objectID, oldCar.objectID)
        }

        // Read back through a fresh coordinator.
        let reader = PersistentStoreCoordinator(model: model)
        try await reader.addStore(try SQLiteStore(at: url, model: model, configuration: .readOnly))
        let check = ObjectContext(coordinator: reader)
        let (plates, first, last, id, date) = try await check.perform { context in
            let person = try await context.object(with: ownerID)
            let cars = try await context.fetch(
                FetchRequest(
                    entityName: "Car", predicate: try FetchPredicate("owner.lastName == %@", arguments: ["Lovelace 🚗"]))
            )
            return (
                Set(
                    cars.compactMap { car -> String? in
                        if case .string(let plate)? = car[attribute: "numberPlate"] { return plate }
                        return nil
                    }),
                person[attribute: "firstName"], person[attribute: "lastName"], person[attribute: "id"],
                person[attribute: "updatedAt"]
            )
        }
        #expect(first == .string("Ada 'O'; DROP TABLE ZCAR; --"))
        #expect(last == .string("Lovelace 🚗"))
        #expect(id == .uuid(personID))
        #expect(date == .date(updatedAt))
        #expect(plates.contains("TERN-1") && plates.count == 2)
        #expect(oldCarID.primaryKey != nil)

        // Core Data's layout is kept: keys counted on the roots, Z_OPT bumped, no problems.
        let after = try Self.maxKeys(of: url)
        #expect(after["Car"] == (before["Car"] ?? 0) + 1)
        #expect(after["Person"] == (before["Person"] ?? 0) + 1)
        #expect(after["SportCar"] == 0)
        let connection = try Connection(path: url.path, configuration: .readOnly)
        var opts: [Int64] = []
        try connection.forEachRow("SELECT Z_OPT FROM ZCAR WHERE ZOWNER = (SELECT MAX(Z_PK) FROM ZPERSON) ORDER BY Z_PK")
        { row in
            if case .integer(let value)? = row.first { opts.append(value) }
        }
        #expect(opts.count == 2 && opts.allSatisfy { $0 >= 1 } && opts.contains { $0 >= 2 })
        let report = try await StoreVerifier.verify(storeAt: url, model: model)
        #expect(report.problems.isEmpty, "\(report.problems.map(\.message))")
    }

    /// `Z_MAX` per entity name, read from `Z_PRIMARYKEY`.
    static func maxKeys(of url: URL) throws -> [String: Int64] {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        var result: [String: Int64] = [:]
        try connection.forEachRow("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY") { row in
            if let name = row.first?.string, case .integer(let max)? = row.last { result[name] = max }
        }
        return result
    }
}
