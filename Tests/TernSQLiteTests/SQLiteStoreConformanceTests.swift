import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import Testing

@Suite struct SQLiteStoreConformanceTests {
    @Test(arguments: StoreConformance.Behaviour.allCases)
    func conforms(_ behaviour: StoreConformance.Behaviour) async throws {
        let folder = try TemporaryDirectory()
        let factory = StoreFactory("SQLite") { model in
            try SQLiteStore(at: folder.path("\(UUID().uuidString).sqlite"), model: model)
        }
        guard behaviour == .noActionDeleteRule else {
            try await StoreConformance(factory).run(behaviour)
            return
        }
        // In Core Data's layout a one-to-many relationship is the inverse's foreign key: once the
        // book row is deleted, no column can still list it under its publisher.
        await withKnownIssue("a deleted row cannot stay in a to-many derived from foreign keys") {
            try await StoreConformance(factory).run(behaviour)
        }
    }
}
