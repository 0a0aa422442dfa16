import Foundation
import TernBinaryStore
import TernCore
import TernXMLStore

/// The `binary` and `xml` modes: save an atomic store over and over until killed.
///
/// Each save sets every `Counter` row's `generation` to one more than before and rewrites its
/// payload, so a file that loads with rows of two generations was half-written.
enum AtomicSaves {
    /// Opens the store, prints "ready", and saves `saves` times (0: until killed).
    static func run(format: String, path: String, saves: Int) async throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Counter",
                attributes: [
                    AttributeDescription(name: "generation", type: .integer64),
                    AttributeDescription(name: "payload", type: .string),
                ])
        ])
        let url = URL(fileURLWithPath: path)
        let store: any PersistentStore =
            format == "xml"
            ? try XMLStore(at: url, model: model) : try BinaryStore(at: url, model: model)
        let rowCount = 200
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var done = 0
        while saves == 0 || done < saves {
            var rows = try await store.fetch(StoreFetchRequest(entityName: "Counter"))
            var changes = StoreChangeSet()
            if rows.isEmpty {
                let keys = try await store.newPrimaryKeys(forEntity: "Counter", count: rowCount)
                rows = keys.map { StoreRow(reference: RowReference(entityName: "Counter", primaryKey: $0)) }
                for index in rows.indices { rows[index].attributes["generation"] = .integer(0) }
                changes.inserted = rows
            } else {
                for index in rows.indices {
                    guard case .integer(let generation)? = rows[index].attributes["generation"] else { exit(3) }
                    rows[index].attributes["generation"] = .integer(generation + 1)
                    rows[index].attributes["payload"] = .string(String(repeating: "g\(generation + 1) ", count: 100))
                }
                changes.updated = rows
            }
            _ = try await store.save(changes)
            done += 1
        }
    }
}
