import Foundation
import TernCore
import TernSQLite

/// `tern-crash-helper conflict sqlite <path> <policy> <field>`: one of two processes that edit
/// the same objects of one store, driven line by line on standard input by
/// `TwoProcessConflict` (TernTestSupport). Each process increments its own field (`a` or `b`)
/// of every `Tally` and saves with the merge policy given (`error`, `storeTrumps`,
/// `objectTrumps`, `overwrite`, `rollback`). Under `error`, a conflicting save is retried after
/// a rollback and a refresh from the store.
///
/// Commands, each answered by one line: `seed <n>` (insert n tallies), `load` (read them),
/// `edit`, `save`, `report` (JSON: increments saved, conflicts met, this context's view and the
/// store's rows), `quit`.
enum ConflictWorker {
    static let model = ManagedObjectModel(entities: [
        EntityDescription(
            name: "Tally",
            attributes: [
                AttributeDescription(name: "a", type: .integer64), AttributeDescription(name: "b", type: .integer64),
            ])
    ])

    static let policies: [String: MergePolicy] = [
        "error": .error, "storeTrumps": .storeTrumps, "objectTrumps": .objectTrumps, "overwrite": .overwrite,
        "rollback": .rollback,
    ]

    /// What a `report` answers.
    struct Report: Codable {
        var applied = 0
        var conflicts = 0
        var view: [[Int]] = []
        var store: [[Int]] = []
    }

    static func main(_ arguments: [String]) async throws {
        guard arguments.count == 4, arguments[0] == "sqlite", let policy = policies[arguments[2]],
            ["a", "b"].contains(arguments[3])
        else {
            FileHandle.standardError.write(Data("usage: tern-crash-helper conflict sqlite <path> <policy> a|b\n".utf8))
            exit(2)
        }
        let field = arguments[3]
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(try SQLiteStore(at: URL(fileURLWithPath: arguments[1]), model: model))
        let context = ObjectContext(coordinator: coordinator)
        await context.perform { $0.mergePolicy = policy }
        var loaded: [ObjectID] = []
        var report = Report()
        answer("ready")
        while let line = readLine() {
            let ids = loaded
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "seed":
                let count = words.count > 1 ? Int(words[1]) ?? 1 : 1
                _ = try await context.batchInsert(
                    entityName: "Tally", objects: Array(repeating: ["a": .integer(0), "b": .integer(0)], count: count))
            case "load":
                var request = FetchRequest(entityName: "Tally")
                request.sortDescriptors = [FetchSort(key: "a")]
                loaded = try await context.fetchObjectIDs(request).sorted {
                    ($0.primaryKey ?? 0) < ($1.primaryKey ?? 0)
                }
            case "edit":
                await context.perform { context in increment(ids, field, in: context) }
            case "save":
                let (applied, conflicts) = try await save(ids, field, in: context, retrying: policy == .error)
                report.applied += applied
                report.conflicts += conflicts
            case "report":
                report.view = try await context.perform { context in
                    var rows: [[Int]] = []
                    for id in ids { rows.append(values(of: try await context.object(with: id))) }
                    return rows
                }
                report.store = try await ObjectContext(coordinator: coordinator).perform { fresh in
                    var rows: [[Int]] = []
                    for id in ids { rows.append(values(of: try await fresh.object(with: id))) }
                    return rows
                }
                answer(String(decoding: try JSONEncoder().encode(report), as: UTF8.self))
                continue
            case "quit":
                answer("bye")
                return
            default:
                answer("unknown command")
                continue
            }
            answer("ok")
        }
    }

    /// Writes one answer line and flushes it.
    static func answer(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func values(of object: ManagedObject) -> [Int] {
        [object["a"] ?? -1, object["b"] ?? -1]
    }

    /// Adds one to the field of every tally, as this context sees it.
    static func increment(_ ids: [ObjectID], _ field: String, in context: isolated ObjectContext) {
        for id in ids {
            let tally = context.fault(for: id)
            tally[field] = (tally[field] ?? 0) + 1
        }
    }

    /// Saves; under `.error`, rolls back, refreshes and edits again until the save goes through.
    /// Returns how many increments the store holds after the save, and the conflicts met.
    static func save(
        _ ids: [ObjectID], _ field: String, in context: ObjectContext, retrying: Bool
    ) async throws -> (Int, Int) {
        try await context.perform { context in
            let tallies = ids.map { context.fault(for: $0) }
            let intended = tallies.map { $0[field] as Int? }
            var conflicts = 0
            while true {
                do {
                    try await context.save()
                    break
                } catch let error as TernError where error.code == .mergeConflict && retrying && conflicts < 10 {
                    conflicts += 1
                    context.rollback()
                    for tally in tallies { try await context.refresh(tally, mergeChanges: false) }
                    increment(ids, field, in: context)
                }
            }
            let saved = zip(tallies, intended).filter { tally, value in
                retrying || (tally[field] as Int?) == value
            }
            return (saved.count, conflicts)
        }
    }
}
