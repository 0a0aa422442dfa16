import Foundation
import TernCore
import Testing

/// A hand-written typed class, as a developer may write one without the generator.
private final class Note: ManagedObject, TypedManagedObject {
    static var entityName: String { "Note" }

    static func propertyName(for keyPath: AnyKeyPath) -> String? {
        switch keyPath {
        case \Note.text: "text"
        case \Note.stars: "stars"
        default: nil
        }
    }

    var text: String? {
        get { self["text"] }
        set { self["text"] = newValue }
    }

    var stars: Int64 {
        get { self["stars"] ?? 0 }
        set { self["stars"] = newValue }
    }

    var isLong: Bool { (text ?? "").count > 10 }
}

@Suite struct TypedManagedObjectTests {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(
            name: "Note",
            attributes: [
                AttributeDescription(name: "text", type: .string),
                AttributeDescription(name: "stars", type: .integer64),
            ]),
        EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]),
    ])

    @Test func aHandWrittenClassInsertsAndFetchesTyped() async throws {
        let coordinator = PersistentStoreCoordinator(model: Self.model)
        try await coordinator.addStore(InMemoryStore(model: Self.model))
        let context = ObjectContext(coordinator: coordinator)
        let texts = try await context.perform { context in
            // Registered by the typed insert: no register call first.
            for (text, stars) in [("short", 1), ("a longer note", 5), ("middling", 3)] as [(String, Int64)] {
                let note = context.insert(Note.self)
                note.text = text
                note.stars = stars
            }
            try await context.save()
            let request = Note.fetchRequest(
                predicate: #Predicate { $0.stars >= 3 }, sortBy: [SortDescriptor(\.stars, order: .reverse)])
            #expect(try await context.count(for: request) == 2)
            return try await context.fetch(request).map(\.text)
        }
        #expect(texts == ["a longer note", "middling"])
    }

    @Test func objectsMadeBeforeRegistrationAreReported() async throws {
        let coordinator = PersistentStoreCoordinator(model: Self.model)
        try await coordinator.addStore(InMemoryStore(model: Self.model))
        try await ObjectContext(coordinator: coordinator).perform { context in
            context.insert("Note")[attribute: "text"] = .string("plain")
            try await context.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            // Plain objects the context still holds stay plain once the class is registered.
            let plain = try await context.fetch(FetchRequest(entityName: "Note"))
            let error = await #expect(throws: TernError.self) { _ = try await context.fetch(Note.fetchRequest()) }
            #expect(error?.code == .unsupported)
            #expect(error?.message.contains("before Note was registered") == true)
            #expect(plain.count == 1 && !(plain[0] is Note))
        }
    }

    @Test func computedPropertiesAreRefusedInPredicatesAndSorts() {
        let byLength = Note.fetchRequest(predicate: #Predicate { $0.isLong })
        let error = #expect(throws: TernError.self) { try byLength.fetchRequest() }
        #expect(error?.code == .invalidPredicate && error?.entityName == "Note")
        #expect(throws: TernError.self) {
            try Note.fetchRequest(sortBy: [SortDescriptor(\.isLong.description)]).fetchRequest()
        }
    }
}
