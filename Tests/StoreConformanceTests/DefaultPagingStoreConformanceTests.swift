import Foundation
import TernCore
import TernTestSupport
import Testing

/// A store that leaves `fetchPage` to the protocol's default implementation, as a new store
/// type does until it pages by itself: everything else is an in-memory store's.
private final class DefaultPagingStore: PersistentStore {
    let base: InMemoryStore

    init(model: ManagedObjectModel) {
        base = InMemoryStore(model: model)
    }

    var identifier: String { base.identifier }
    var location: URL? { base.location }
    var kind: StoreKind { base.kind }
    var isReadOnly: Bool { base.isReadOnly }
    var model: ManagedObjectModel { base.model }

    func metadata() async throws -> StoreMetadata { try await base.metadata() }
    func setMetadata(_ metadata: StoreMetadata) async throws { try await base.setMetadata(metadata) }
    func fetch(_ request: StoreFetchRequest) async throws -> [StoreRow] { try await base.fetch(request) }
    func fetchReferences(_ request: StoreFetchRequest) async throws -> [RowReference] {
        try await base.fetchReferences(request)
    }
    func count(_ request: StoreFetchRequest) async throws -> Int { try await base.count(request) }
    func rows(for references: [RowReference]) async throws -> [StoreRow] { try await base.rows(for: references) }
    func save(_ changes: StoreChangeSet) async throws -> StoreSaveResult { try await base.save(changes) }
    func newPrimaryKeys(forEntity entity: String, count: Int) async throws -> [Int64] {
        try await base.newPrimaryKeys(forEntity: entity, count: count)
    }
}

@Suite struct DefaultPagingStoreConformanceTests {
    @Test(arguments: [
        StoreConformance.Behaviour.pagingMatchesFetch, .pagingSeesChangesBetweenPages, .batchedIteration,
        .batchedIterationKeepsIdentity,
    ])
    func pagesWithTheDefaultImplementation(_ behaviour: StoreConformance.Behaviour) async throws {
        try await StoreConformance(StoreFactory("default paging") { DefaultPagingStore(model: $0) }).run(behaviour)
    }
}
