import Foundation
import TernCore
import TernPostgreSQL
import TernTestSupport
import Testing

@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLStoreConformanceTests {
    @Test(arguments: StoreConformance.Behaviour.allCases)
    func conforms(_ behaviour: StoreConformance.Behaviour) async throws {
        let factory = StoreFactory("PostgreSQL") { model in
            try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL(), model: model)
        }
        try await StoreConformance(factory).run(behaviour)
    }
}
