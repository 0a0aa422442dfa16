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
        try await StoreConformance(factory).run(behaviour)
    }
}
