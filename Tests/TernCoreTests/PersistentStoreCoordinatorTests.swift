import Foundation
import TernCore
import TernTestSupport
import Testing

@Suite struct PersistentStoreCoordinatorTests {
    let v1 = ManagedObjectModel(entities: [
        EntityDescription(name: "Recipe", attributes: [AttributeDescription(name: "title", type: .string)])
    ])
    var v2: ManagedObjectModel {
        var model = v1
        model.entities[0].attributes.append(AttributeDescription(name: "servings", type: .integer16))
        return model
    }

    @Test func addsLooksUpAndRemovesStores() async throws {
        let coordinator = PersistentStoreCoordinator(model: v1)
        let store = InMemoryStore(model: v1)
        try await coordinator.addStore(store)
        try await coordinator.addStore(store)
        #expect(coordinator.stores.count == 1)
        #expect(coordinator.store(withIdentifier: store.identifier) === store)
        #expect(coordinator.store(forEntity: "Recipe") === store)
        #expect(coordinator.store(at: URL(fileURLWithPath: "/nowhere")) == nil)
        coordinator.removeStore(store)
        #expect(coordinator.stores.isEmpty)
        #expect(coordinator.store(forEntity: "Recipe") == nil)
    }

    @Test func refusesAStoreOfAnotherVersionNamingIt() async throws {
        let versions = VersionedModel(
            name: "Recipes",
            versions: [
                ModelVersion(name: "Recipes 1", model: v1), ModelVersion(name: "Recipes 2", model: v2),
            ])
        let coordinator = PersistentStoreCoordinator(model: v2)
        let error = await #expect(throws: TernError.self) {
            try await coordinator.addStore(InMemoryStore(model: v1), versions: versions)
        }
        #expect(error?.code == .incompatibleStore)
        #expect(error?.message.contains("version Recipes 1 of the model") == true)
        #expect(error?.message.contains("migrate it first") == true)
        let unknown = await #expect(throws: TernError.self) {
            try await coordinator.addStore(InMemoryStore(model: ManagedObjectModel()), versions: versions)
        }
        #expect(unknown?.message.contains("no known version") == true)
        #expect(coordinator.stores.isEmpty)
    }

    @Test func routesEntitiesByConfiguration() async throws {
        var model = ManagedObjectModel(entities: [
            EntityDescription(name: "Cache"), EntityDescription(name: "Document"),
        ])
        model.configurations = [Configuration(name: "Local", entityNames: ["Cache"])]
        let coordinator = PersistentStoreCoordinator(model: model)
        let local = InMemoryStore(model: model)
        let main = InMemoryStore(model: model)
        await #expect(throws: TernError.self) { try await coordinator.addStore(local, configuration: "Missing") }
        try await coordinator.addStore(local, configuration: "Local")
        try await coordinator.addStore(main)
        #expect(coordinator.configuration(of: local) == "Local")
        #expect(coordinator.store(forEntity: "Document") === main)
        #expect(
            coordinator.affectedStores(forEntity: "Cache").map(\.identifier) == [local.identifier, main.identifier])
        let ids = try await ObjectContext(coordinator: coordinator).perform { context in
            let cache = context.insert("Cache")
            let document = context.insert("Document")
            try await context.save()
            return [cache.objectID, document.objectID]
        }
        #expect(ids.map(\.storeIdentifier) == [local.identifier, main.identifier])
        #expect(try await local.count(StoreFetchRequest(entityName: "Cache")) == 1)
        #expect(try await main.count(StoreFetchRequest(entityName: "Document")) == 1)
    }
}

@Suite struct CrossStoreTests {
    @Test func relationshipsAcrossStoresAreRefused() async throws {
        var model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Cache", relationships: [RelationshipDescription(name: "document", destination: "Document")]),
            EntityDescription(name: "Document"),
        ])
        model.configurations = [
            Configuration(name: "Local", entityNames: ["Cache"]),
            Configuration(name: "Cloud", entityNames: ["Document"]),
        ]
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(InMemoryStore(model: model), configuration: "Local")
        try await coordinator.addStore(InMemoryStore(model: model), configuration: "Cloud")
        let error = await #expect(throws: TernError.self) {
            try await ObjectContext(coordinator: coordinator).perform { context in
                context.insert("Cache")[toOne: "document"] = context.insert("Document")
                try await context.save()
            }
        }
        #expect(error?.code == .unsupported)
        #expect(error?.propertyName == "document")
    }
}
