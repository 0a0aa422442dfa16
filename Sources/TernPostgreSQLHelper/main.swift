// A process for the PostgreSQL store's multi-process tests: it creates a store with one counter
// object, or increments one field of that counter over and over under a merge policy, or prints
// the counter. Arguments:
//
//     tern-postgres-helper create <url>                      prints the counter's object ID URI
//     tern-postgres-helper increment <url> <policy> <field> <times>
//     tern-postgres-helper read <url>                        prints "countA countB total version"
//
// `increment` reads the counter in a fresh context, adds 1 to `field` and to `total`, and saves
// with the policy; with `error` it retries a conflicting save until it succeeds. It prints the
// number of saves that succeeded and the number of conflicts it saw.
import Foundation
import TernCore
import TernPostgreSQL

let model = ManagedObjectModel(entities: [
    EntityDescription(
        name: "Counter",
        attributes: [
            AttributeDescription(name: "countA", type: .integer64, isOptional: false),
            AttributeDescription(name: "countB", type: .integer64, isOptional: false),
            AttributeDescription(name: "total", type: .integer64, isOptional: false),
        ])
])

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(1)
}

func coordinator(_ url: String) async throws -> (PersistentStoreCoordinator, PostgreSQLStore) {
    let store = try PostgreSQLStore(url: url, model: model)
    let coordinator = PersistentStoreCoordinator(model: model)
    try await coordinator.addStore(store)
    return (coordinator, store)
}

func counter(in context: isolated ObjectContext) async throws -> ManagedObject {
    guard let object = try await context.fetch(FetchRequest(entityName: "Counter")).first else { fail("no counter") }
    return object
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else { fail("usage: tern-postgres-helper create|increment|read <url> …") }
do {
    let (coordinator, store) = try await coordinator(arguments[2])
    switch arguments[1] {
    case "create":
        try await ObjectContext(coordinator: coordinator).perform { context in
            let object = context.insert("Counter")
            object["countA"] = 0 as Int64
            object["countB"] = 0 as Int64
            object["total"] = 0 as Int64
            try await context.save()
        }
        print("created")
    case "increment":
        guard arguments.count == 6, let times = Int(arguments[5]) else {
            fail("increment <url> <policy> <field> <times>")
        }
        let policies: [String: MergePolicy] = [
            "error": .error, "storeTrumps": .storeTrumps, "objectTrumps": .objectTrumps, "overwrite": .overwrite,
            "rollback": .rollback,
        ]
        guard let policy = policies[arguments[3]] else { fail("unknown policy \(arguments[3])") }
        let field = arguments[4]
        var saves = 0
        var conflicts = 0
        for _ in 0..<times {
            while true {
                let saved: Bool = try await ObjectContext(coordinator: coordinator).perform { context in
                    context.mergePolicy = policy
                    let object = try await counter(in: context)
                    object[field] = ((object[field] as Int64?) ?? 0) + 1
                    object["total"] = ((object["total"] as Int64?) ?? 0) + 1
                    do {
                        try await context.save()
                        return true
                    } catch let error as TernError where error.code == .mergeConflict {
                        return false
                    }
                }
                if saved {
                    saves += 1
                    break
                }
                conflicts += 1
            }
        }
        print("\(saves) \(conflicts)")
    case "read":
        let references = try await store.fetchReferences(StoreFetchRequest(entityName: "Counter"))
        guard let row = try await store.rows(for: references).first else { fail("no counter") }
        let values = ["countA", "countB", "total"].map { name -> String in
            if case .integer(let number)? = row.attributes[name] { return String(number) }
            return "nil"
        }
        print((values + [String(row.version)]).joined(separator: " "))
    default:
        fail("unknown command \(arguments[1])")
    }
} catch {
    fail("\(error)")
}
