import TernCore
import TernTestSupport
import Testing

@Suite struct InMemoryHistoryTests {
    @Test func recordsHistoryThroughTheAPI() async throws {
        try await HistoryConformance { model in InMemoryStore(model: model, recordsHistory: true) }.run()
    }

    @Test func storeWithoutHistorySaysSo() async throws {
        let store = InMemoryStore(model: HistoryConformance.model)
        #expect(!store.recordsHistory)
        await #expect(throws: TernError.self) { try await store.fetchHistory(HistoryFetchRequest()) }
        do {
            _ = try await store.currentHistoryToken()
            Issue.record("a store without history handed out a token")
        } catch let error as TernError {
            #expect(error.code == .historyUnavailable)
            #expect(error.message.contains("recordsHistory"))
        }
    }

    @Test func failedSaveRecordsNothing() async throws {
        var model = HistoryConformance.model
        let recipe = try #require(model.entities.firstIndex { $0.name == "Recipe" })
        model.entities[recipe].uniquenessConstraints = [["code"]]
        let store = InMemoryStore(model: model, recordsHistory: true)
        let keys = try await store.newPrimaryKeys(forEntity: "Recipe", count: 2)
        let rows = keys.map {
            StoreRow(
                reference: RowReference(entityName: "Recipe", primaryKey: $0), attributes: ["code": .string("same")])
        }
        await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(inserted: rows)) }
        #expect(try await store.currentHistoryToken() == nil)
        #expect(try await store.fetchHistory(HistoryFetchRequest()).isEmpty)
    }
}
