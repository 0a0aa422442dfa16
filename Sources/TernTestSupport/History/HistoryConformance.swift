import Foundation
public import TernCore
import Testing

/// What every store that records persistent history must do, checked through the public API
/// only: a store made by ``factory`` for ``model`` (history on) is written through contexts and
/// read back with ``PersistentStore/fetchHistory(_:)``.
///
/// ```swift
/// let conformance = HistoryConformance { model in InMemoryStore(model: model, recordsHistory: true) }
/// try await conformance.run()
/// ```
public struct HistoryConformance: Sendable {
    /// Makes a new empty store that records history.
    public var factory: @Sendable (ManagedObjectModel) async throws -> any PersistentStore

    /// Creates the checks for a store type.
    ///
    /// - Parameter factory: Makes a new empty store that records history.
    public init(_ factory: @escaping @Sendable (ManagedObjectModel) async throws -> any PersistentStore) {
        self.factory = factory
    }

    /// The model: `Recipe` (`title`, `minutes`, `code` and `uid` kept after deletion,
    /// `ingredients`) with a subentity `Dessert` (`sweetness`, kept), and `Ingredient` (`name`,
    /// `recipe`).
    public static let model: ManagedObjectModel = {
        func attribute(_ name: String, _ type: AttributeType, preserved: Bool = false) -> AttributeDescription {
            var attribute = AttributeDescription(name: name, type: type)
            attribute.preservesValueInHistoryOnDeletion = preserved
            return attribute
        }
        return ManagedObjectModel(entities: [
            EntityDescription(
                name: "Recipe",
                attributes: [
                    attribute("title", .string), attribute("minutes", .integer32),
                    attribute("code", .string, preserved: true), attribute("uid", .uuid, preserved: true),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "ingredients", destination: "Ingredient", inverse: "recipe", toMany: true)
                ]),
            EntityDescription(
                name: "Dessert", parent: "Recipe", attributes: [attribute("sweetness", .double, preserved: true)]),
            EntityDescription(
                name: "Ingredient", attributes: [attribute("name", .string)],
                relationships: [RelationshipDescription(name: "recipe", destination: "Recipe", inverse: "ingredients")]),
        ])
    }()

    // MARK: - Running

    /// Runs every check on fresh stores.
    ///
    /// - Throws: When the store fails; failed expectations are recorded as test issues.
    public func run() async throws {
        let store = try await factory(Self.model)
        #expect(store.recordsHistory)
        #expect(try await store.currentHistoryToken() == nil)
        let tokens = try await writeStory(into: store)
        try await checkStory(of: store, tokens: tokens)
        try await checkFilters(of: store, tokens: tokens)
        try await checkPurge(of: store, tokens: tokens)
    }

    /// Four saves into a store of ``model``, through contexts: (1) `importer`, context `import`,
    /// inserts a `Dessert` ("Tart", code "T-1", sweetness 0.5) with an `Ingredient`; (2) `editor`
    /// changes its `title` and `minutes`; (3) `editor` adds a second ingredient; (4) `importer`
    /// deletes the dessert, which nullifies both ingredients.
    ///
    /// - Parameter store: An empty store that records history.
    /// - Returns: The token of each save.
    /// - Throws: When a save fails.
    public func writeStory(into store: any PersistentStore) async throws -> [HistoryToken] {
        let coordinator = PersistentStoreCoordinator(model: Self.model)
        try await coordinator.addStore(store)
        // A fresh context per save, so that none works from rows another one changed since.
        func context(author: String, name: String? = nil) async -> ObjectContext {
            let context = ObjectContext(coordinator: coordinator)
            await context.perform {
                $0.transactionAuthor = author
                $0.name = name
            }
            return context
        }
        let uid = UUID(uuidString: "00000000-0000-0000-0000-0000000000AB") ?? UUID()
        var tokens: [HistoryToken] = []
        func saved() async throws {
            tokens.append(try #require(try await store.currentHistoryToken()))
        }
        // 1: a dessert with an ingredient.
        let dessertID = try await context(author: "importer", name: "import").perform { context in
            let dessert = context.insert("Dessert")
            dessert[attribute: "title"] = .string("Tart")
            dessert[attribute: "code"] = .string("T-1")
            dessert[attribute: "uid"] = .uuid(uid)
            dessert[attribute: "sweetness"] = .double(0.5)
            let flour = context.insert("Ingredient")
            flour[attribute: "name"] = .string("flour")
            flour[toOne: "recipe"] = dessert
            try await context.save()
            return dessert.objectID
        }
        try await saved()
        // 2: two attributes change.
        try await context(author: "editor").perform { context in
            let dessert = try await context.object(with: dessertID)
            dessert[attribute: "title"] = .string("Lemon tart")
            dessert[attribute: "minutes"] = .integer(40)
            try await context.save()
        }
        try await saved()
        // 3: a new ingredient joins the dessert.
        try await context(author: "editor").perform { context in
            let dessert = try await context.object(with: dessertID)
            let sugar = context.insert("Ingredient")
            sugar[attribute: "name"] = .string("sugar")
            sugar[toOne: "recipe"] = dessert
            try await context.save()
        }
        try await saved()
        // 4: the dessert is deleted (its ingredients are nullified).
        try await context(author: "importer", name: "import").perform { context in
            context.delete(try await context.object(with: dessertID))
            try await context.save()
        }
        try await saved()
        return tokens
    }

    // MARK: - Non public

    private func checkStory(of store: any PersistentStore, tokens: [HistoryToken]) async throws {
        #expect(Set(tokens).count == 4 && tokens == tokens.sorted())
        let history = try await store.fetchHistory(HistoryFetchRequest())
        try #require(history.count == 4)
        #expect(history.map(\.token) == tokens)
        #expect(history.map(\.author) == ["importer", "editor", "editor", "importer"])
        #expect(history.map(\.contextName) == ["import", nil, nil, "import"])
        #expect(history.allSatisfy { abs($0.timestamp.timeIntervalSinceNow) < 600 && $0.processName != nil })

        let first = history[0].changes
        #expect(first.map(\.changeType) == [.insert, .insert])
        #expect(Set(first.map(\.objectID.entityName)) == ["Dessert", "Ingredient"])
        #expect(first.allSatisfy { $0.updatedProperties == nil && $0.tombstone.isEmpty })
        let dessert = try #require(first.first { $0.objectID.entityName == "Dessert" }?.objectID)

        let second = history[1].changes
        #expect(second.map(\.objectID) == [dessert])
        #expect(second.first?.changeType == .update)
        #expect(second.first?.updatedProperties == ["title", "minutes"])

        let third = history[2].changes
        #expect(third.filter { $0.changeType == .insert }.map(\.objectID.entityName) == ["Ingredient"])
        #expect(third.first { $0.objectID == dessert }?.updatedProperties == ["ingredients"])

        let fourth = history[3].changes
        let deletion = try #require(fourth.first { $0.objectID == dessert })
        #expect(deletion.changeType == .delete)
        #expect(deletion.updatedProperties == nil)
        #expect(
            deletion.tombstone == [
                "code": .string("T-1"),
                "uid": .uuid(UUID(uuidString: "00000000-0000-0000-0000-0000000000AB") ?? UUID()),
                "sweetness": .double(0.5),
            ])
        let nullified = fourth.filter { $0.changeType == .update }
        #expect(nullified.count == 2 && nullified.allSatisfy { $0.updatedProperties == ["recipe"] })
    }

    private func checkFilters(of store: any PersistentStore, tokens: [HistoryToken]) async throws {
        let after = try await store.fetchHistory(HistoryFetchRequest(after: tokens[1]))
        #expect(after.map(\.token) == Array(tokens[2...]))
        #expect(try await store.fetchHistory(HistoryFetchRequest(after: tokens[3])).isEmpty)

        var byAuthor = HistoryFetchRequest()
        byAuthor.authors = ["editor"]
        #expect(try await store.fetchHistory(byAuthor).map(\.token) == [tokens[1], tokens[2]])

        var byChange = HistoryFetchRequest()
        byChange.entityNames = ["Dessert"]
        byChange.changeTypes = [.delete, .insert]
        let changes = try await store.fetchHistory(byChange)
        #expect(changes.map(\.token) == [tokens[0], tokens[3]])
        #expect(changes.allSatisfy { $0.changes.count == 1 })

        var limited = HistoryFetchRequest(after: tokens[0])
        limited.fetchLimit = 2
        #expect(try await store.fetchHistory(limited).map(\.token) == [tokens[1], tokens[2]])

        let other = try #require(HistoryToken("1@\(UUID().uuidString)"))
        await #expect(throws: TernError.self) { try await store.fetchHistory(HistoryFetchRequest(after: other)) }
        #expect(HistoryToken(tokens[2].description) == tokens[2])
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: JSONEncoder().encode(tokens[2]))
        #expect(decoded == tokens[2])
    }

    private func checkPurge(of store: any PersistentStore, tokens: [HistoryToken]) async throws {
        #expect(try await store.deleteHistory(before: tokens[1]) == 2)
        #expect(try await store.fetchHistory(HistoryFetchRequest()).map(\.token) == [tokens[2], tokens[3]])
        // A token from before the purge still reads what came after it.
        #expect(
            try await store.fetchHistory(HistoryFetchRequest(after: tokens[0])).map(\.token) == [tokens[2], tokens[3]])
        #expect(try await store.deleteHistory(before: tokens[3]) == 2)
        #expect(try await store.fetchHistory(HistoryFetchRequest()).isEmpty)
        // Numbers are not reused after a purge.
        #expect(try await store.currentHistoryToken() == tokens[3])
    }
}
