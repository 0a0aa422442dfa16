import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernTestSupport
import Testing

/// `PostgreSQLStore.verify()` finds the same problems as the SQLite verifier in the same rows.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLVerificationTests {
    /// Owners (a required name, a unique tag) with one pet each, one-to-one.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Owner") {
                Attribute("name", .string).required()
                Attribute("tag", .string)
                Relationship("pet", to: "Pet", inverse: "owner")
                Unique("tag")
            }
            Entity("Pet") {
                Attribute("name", .string)
                Relationship("owner", to: "Owner", inverse: "pet")
            }
        }
    }

    /// Rows with one planted problem of each kind a store save lets through.
    static func damagedRows() -> [StoreRow] {
        func row(_ entity: String, _ key: Int64, _ name: String?, tag: String? = nil, to: (String, RowReference)? = nil)
            -> StoreRow
        {
            var row = StoreRow(reference: RowReference(entityName: entity, primaryKey: key))
            if let name { row.attributes["name"] = .string(name) }
            if let tag { row.attributes["tag"] = .string(tag) }
            if let to { row.toOne[to.0] = to.1 }
            return row
        }
        return [
            // Owner p1 has no name, and its pet's owner points back to nothing.
            row("Owner", 1, nil, to: ("pet", RowReference(entityName: "Pet", primaryKey: 1))),
            row("Pet", 1, "Rex"),
            // Owner p2's pet does not exist.
            row("Owner", 2, "Ada", tag: "a", to: ("pet", RowReference(entityName: "Pet", primaryKey: 99))),
            // A clean pair.
            row("Owner", 3, "Bo", tag: "b", to: ("pet", RowReference(entityName: "Pet", primaryKey: 3))),
            row("Pet", 3, "Tom", to: ("owner", RowReference(entityName: "Owner", primaryKey: 3))),
        ]
    }

    @Test func findsWhatTheSQLiteVerifierFinds() async throws {
        let model = try Self.model()
        let rows = Self.damagedRows()
        let postgreSQL = try PostgreSQLStore(
            url: try PostgreSQLTestServer.freshStoreURL(prefix: "verify"), model: model)
        _ = try await postgreSQL.save(StoreChangeSet(inserted: rows))
        let report = try await postgreSQL.verify()

        let folder = try TemporaryDirectory()
        let url = folder.path("Owners.sqlite")
        _ = try await SQLiteStore(at: url, model: model).save(StoreChangeSet(inserted: rows))
        let expected = try await StoreVerifier.verify(storeAt: url, model: model)

        #expect(Set(report.problems.map(\.kind)) == [.missingValue, .danglingReference, .inverseMismatch])
        #expect(report.problems == expected.problems)
        #expect(report.objectCount == 5 && expected.objectCount == 5)
        #expect(report.skippedChecks == [.integrity, .missingExternalData] && expected.skippedChecks.isEmpty)
        let names = report.problems.map(\.location)
        #expect(names.contains("Owner/p1.name") && names.contains("Owner/p2.pet") && names.contains("Owner/p1.pet"))
    }

    @Test func aCleanStoreHasNoProblemsAndAKeepsALimit() async throws {
        let model = try Self.model()
        let store = try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL(prefix: "verify"), model: model)
        let clean = try await store.verify()
        #expect(clean.isClean && clean.objectCount == 0 && !clean.isTruncated)
        _ = try await store.save(StoreChangeSet(inserted: Self.damagedRows()))
        let progress = Progress(totalUnitCount: 0)
        let limited = try await store.verify(problemLimit: 1, progress: progress)
        #expect(limited.problems.count == 1 && limited.isTruncated)
        #expect(progress.totalUnitCount > 0 && progress.completedUnitCount == progress.totalUnitCount)
    }
}
