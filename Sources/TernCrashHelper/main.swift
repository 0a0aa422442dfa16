// tern-crash-helper: operations for the crash tests to kill at random moments (see
// CrashHarness in TernTestSupport).
//
//     tern-crash-helper binary|xml <path> <saves>       saves an atomic store over and over (saves = 0:
//                                                       until killed); prints "ready" once it is open
//     tern-crash-helper save <store.sqlite>             one context save changing every Item's name
//                                                       to "<name> saved"
//     tern-crash-helper batch-insert <store.sqlite> <count>
//                                                       one batch insert of Items value n+1…n+count,
//                                                       name "item <value>", after the n there are
//     tern-crash-helper replace <destination> <source>  StoreFiles.replace(at:withStoreAt:)
//     tern-crash-helper container <root>                loads the Chef's Book container of an app whose
//                                                       home is <root>: the legacy store found there is
//                                                       moved to Library/Application Support, migrated
//                                                       to version 4 and the legacy copy removed; prints
//                                                       "ready" before it starts (TernContainerTests),
//                                                       then one line per container event; an optional
//                                                       <lock-timeout> in seconds; a failure prints
//                                                       "error: …" on stderr and exits with status 4
//     tern-crash-helper lock <store>                    holds the container's lock of <store> until killed;
//                                                       prints "locked" once it holds it
//     tern-crash-helper migrate <store>                 migrates a Chef's Book store of any type in place
//                                                       to version 4 (StoreFiles.migrateStore)
//     tern-crash-helper stress <store.sqlite> <attribute> <policy> <rounds>
//                                                       one writer of the merge-policy stress test:
//                                                       sets <attribute> of every Counter to 1…rounds,
//                                                       one save a round (StressWriter)
//     tern-crash-helper sync push|pull|both <store.sqlite> <server> <page-size>
//                                                       pushes, pulls or syncs a device store with a
//                                                       sync server (SyncEngine, pages of <page-size>)
//     tern-crash-helper conflict sqlite <path> <policy> a|b
//                                                       edits a SQLite store in lockstep with another
//                                                       process under a merge policy, driven on
//                                                       standard input (ConflictWorker.swift,
//                                                       TwoProcessConflict in TernTestSupport)
//
// The SQLite modes open the store with the model cached in it. A new operation (container
// relocation, …) adds a mode here, documented in this list, and a case in CrashHarnessTests.
import ChefsBook
import Foundation
import TernBinaryStore
import TernContainer
import TernCore
import TernMigration
import TernPostgreSQL
import TernSQLite
import TernStores
import TernSync
import TernXMLStore

let arguments = CommandLine.arguments

/// Stops with the usage text.
func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: tern-crash-helper binary|xml <path> <saves>
                   tern-crash-helper save <store>
                   tern-crash-helper batch-insert <store> <count>
                   tern-crash-helper replace <destination> <source>
                   tern-crash-helper stress <store> <attribute> <policy> <rounds>
                   tern-crash-helper container <root> [<lock-timeout>]
                   tern-crash-helper lock <store>
                   tern-crash-helper migrate <store>
                   tern-crash-helper conflict sqlite <path> <policy> a|b
                   tern-crash-helper sync push|pull|both <store> <server> <page-size>

            """.utf8))
    exit(2)
}

/// A context on the SQLite store at `path`, with the store's own model.
func context(forStoreAt path: String) async throws -> ObjectContext {
    let store = try SQLiteStore(at: URL(fileURLWithPath: path))
    let coordinator = PersistentStoreCoordinator(model: store.model)
    try await coordinator.addStore(store)
    return ObjectContext(coordinator: coordinator)
}

guard arguments.count >= 3 else { usage() }
switch arguments[1] {
case "binary", "xml":
    guard arguments.count == 4, let saves = Int(arguments[3]) else { usage() }
    try await AtomicSaves.run(format: arguments[1], path: arguments[2], saves: saves)
case "save":
    let objects = try await context(forStoreAt: arguments[2])
    try await objects.perform { context in
        for item in try await context.fetch(FetchRequest(entityName: "Item")) {
            guard case .string(let name)? = item[attribute: "name"] else { exit(3) }
            item[attribute: "name"] = .string(name + " saved")
        }
        try await context.save()
    }
case "batch-insert":
    guard arguments.count == 4, let count = Int(arguments[3]) else { usage() }
    let objects = try await context(forStoreAt: arguments[2])
    let existing = try await objects.count(for: FetchRequest(entityName: "Item"))
    let values = (existing + 1)...(existing + count)
    _ = try await objects.batchInsert(
        entityName: "Item", objects: values.map { ["name": .string("item \($0)"), "value": .integer(Int64($0))] })
case "replace":
    guard arguments.count == 4 else { usage() }
    try StoreFiles.replace(at: URL(fileURLWithPath: arguments[2]), withStoreAt: URL(fileURLWithPath: arguments[3]))
case "container":
    let model = try ChefsBook.model()
    var description = try ChefsBook.storeDescription(in: URL(fileURLWithPath: arguments[2]), model: model)
    if arguments.count > 3, let seconds = Double(arguments[3]) { description.options.lockTimeout = .seconds(seconds) }
    let container = PersistentContainer(
        name: "ChefsBook", model: model, storeDescriptions: [description], mainContextQueue: .private)
    let events = container.events()
    let printer = Task {
        for await event in events {
            if case .progress = event { continue }
            FileHandle.standardOutput.write(Data("\(event)\n".utf8))
            if event == .ready { break }
        }
    }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    do {
        try await container.loadStores()
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        exit(4)
    }
    await printer.value  // every event up to ready is printed
case "lock":
    let lock = try await StoreLock.acquire(for: URL(fileURLWithPath: arguments[2]), timeout: nil) {}
    FileHandle.standardOutput.write(Data("locked\n".utf8))
    while true { try await Task.sleep(for: .seconds(60)) }
    lock.release()
case "migrate":
    let model = try ChefsBook.model()
    try await StoreMigrator().migrateStore(
        at: .file(URL(fileURLWithPath: arguments[2])), model: model, mappings: try ChefsBook.mappings(for: model),
        options: MigrationOptions(policies: ChefsBook.policies))
case "stress":
    guard arguments.count == 6, let rounds = Int(arguments[5]), let policy = StressWriter.policies[arguments[4]] else {
        usage()
    }
    try await StressWriter.run(
        try await context(forStoreAt: arguments[2]), attribute: arguments[3], policy: policy, rounds: rounds)
case "conflict":
    try await ConflictWorker.main(Array(arguments.dropFirst(2)))
case "sync":
    guard arguments.count == 6, let pageSize = Int(arguments[5]) else { usage() }
    let store = try SQLiteStore(at: URL(fileURLWithPath: arguments[3]), configuration: SyncEngine.storeConfiguration)
    let engine = SyncEngine(store: store, server: try SyncServer(location: arguments[4]), pageSize: pageSize)
    switch arguments[2] {
    case "push": _ = try await engine.push()
    case "pull": _ = try await engine.pull()
    case "both": _ = try await engine.sync()
    default: usage()
    }
default:
    usage()
}
