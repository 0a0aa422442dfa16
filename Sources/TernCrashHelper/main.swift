// tern-crash-helper: saves an atomic store over and over until it is killed, for the crash
// tests of AtomicStoreTests.
//
//     tern-crash-helper binary|xml <path> <saves>     (saves = 0: until killed)
//
// It prints "ready" once the store is open. Each save sets every `Counter` row's `generation` to
// one more than before and rewrites its payload, so a file that loads with rows of two
// generations was half-written.
import Foundation
import TernBinaryStore
import TernCore
import TernXMLStore

let arguments = CommandLine.arguments
guard arguments.count == 4, let saves = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: tern-crash-helper binary|xml <path> <saves>\n".utf8))
    exit(2)
}
let model = ManagedObjectModel(entities: [
    EntityDescription(name: "Counter", attributes: [
        AttributeDescription(name: "generation", type: .integer64),
        AttributeDescription(name: "payload", type: .string),
    ])
])
let url = URL(fileURLWithPath: arguments[2])
let store: any PersistentStore = arguments[1] == "xml"
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
