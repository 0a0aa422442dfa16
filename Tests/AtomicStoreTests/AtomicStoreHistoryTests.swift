import TernCore
import TernTestSupport
import Testing

/// Binary and XML stores do not record persistent history, and say so.
@Suite struct AtomicStoreHistoryTests {
    @Test(arguments: AtomicFormat.all)
    func historyIsUnavailable(format: AtomicFormat) async throws {
        let folder = try TemporaryDirectory()
        let store = try format.open(folder.path("store.\(format.fileExtension)"))
        #expect(!store.recordsHistory)
        for attempt in 0..<3 {
            do {
                switch attempt {
                case 0: _ = try await store.fetchHistory(HistoryFetchRequest())
                case 1: _ = try await store.currentHistoryToken()
                default: _ = try await store.deleteHistory(before: try #require(HistoryToken("1@\(store.identifier)")))
                }
                Issue.record("\(format) store answered a history call")
            } catch let error as TernError {
                #expect(error.code == .historyUnavailable)
                #expect(error.message.contains("do not record persistent history"))
            }
        }
    }
}
