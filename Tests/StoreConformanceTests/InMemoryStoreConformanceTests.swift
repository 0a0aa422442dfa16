import TernCore
import TernTestSupport
import Testing

@Suite struct InMemoryStoreConformanceTests {
    @Test(arguments: [StoreFactory.inMemory], StoreConformance.Behaviour.allCases)
    func conforms(factory: StoreFactory, behaviour: StoreConformance.Behaviour) async throws {
        try await StoreConformance(factory).run(behaviour)
    }
}
