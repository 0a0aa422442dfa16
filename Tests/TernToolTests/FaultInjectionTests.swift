import Foundation
import TernCore
import TernMigration
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// Every write, sync, truncation, deletion and rename of an operation made to fail in turn
/// (``FaultSweep``, through SQLite's VFS and Tern's ``TernCore/FileOperations`` seam): each time
/// the operation must throw a typed error (or finish, when SQLite absorbed the failure), and the
/// store afterwards must open, verify clean and hold the complete old or new state, with the
/// source of a copy or migration byte-for-byte unchanged.
///
/// `TERN_FAULT_LONG=1` fails every call both ways (an I/O error once, a disk that stays full).
@Suite(.serialized) struct FaultInjectionTests {
    static let rowCount = 150

    /// Whether an error is one of Tern's typed errors.
    static func isTyped(_ error: any Error) -> Bool {
        error is SQLiteError || error is TernError || error is MigrationError
    }

    /// The state of a v1 store whose rows are named "item k" (old) or "item k<suffix>" (new).
    static func renamedState(_ scenario: CrashScenario, _ url: URL, suffix: String) async throws -> String {
        let contents = try await scenario.contents(of: url)
        let isNew = contents.names[1]?.hasSuffix(suffix) == true
        try scenario.expect(contents, keys: 1...scenario.rowCount) { "item \($0)" + (isNew ? suffix : "") }
        return isNew ? "new" : "old"
    }

    @Test func aFailedSQLiteSaveLeavesTheOldOrTheNewRows() async throws {
        let scenario = try CrashScenario(rowCount: Self.rowCount)
        let template = try await scenario.makeStore("Template.sqlite")
        let url = scenario.path("Items.sqlite")
        let report = try await FaultSweep(name: "SQLite save").run(
            reset: { try scenario.restore(template, to: url) },
            operation: { try await scenario.renameAll(in: try SQLiteStore(at: url), suffix: " saved") },
            isTyped: Self.isTyped,
            check: { error in
                let state = try await Self.renamedState(scenario, url, suffix: " saved")
                if error == nil, state != "new" { throw CrashHarness.Failure("the save succeeded but wrote nothing") }
                return state
            })
        #expect(report.faults > 0)
    }

    /// A migration kind, as in the crash cases.
    static let migrations = CrashHarnessTests.migrations

    @Test(arguments: migrations)
    func aFailedMigrationLeavesTheSourceUntouchedOrTheMigratedStore(migration: CrashHarnessTests.Migration) async throws
    {
        let scenario = try CrashScenario(rowCount: Self.rowCount)
        let template = try await scenario.makeStore("Template.sqlite", version: migration.from)
        let bytes = try Data(contentsOf: template)
        let url = scenario.path("Items.sqlite")
        let mappings = migration.mapped ? [try StepMapping(jsonData: Data(CrashScenario.mappingJSON.utf8))] : []
        let report = try await FaultSweep(name: "migrate \(migration)").run(
            reset: { try scenario.restore(template, to: url) },
            operation: {
                try await StoreMigrator().migrateStore(
                    at: .file(url), model: scenario.model, to: migration.to, mappings: mappings)
            },
            isTyped: Self.isTyped,
            check: { error in
                let leftovers = try scenario.leftovers(containing: "migrating")
                guard leftovers.isEmpty else { throw CrashHarness.Failure("temporary files left: \(leftovers)") }
                // The source is never written: it is the old store byte for byte, or the migrated
                // store renamed over it (a failure after the rename, flushing the folder, still
                // leaves the new store, and says so with its error).
                let isOld = try Data(contentsOf: url) == bytes
                let contents = try await scenario.contents(of: url)
                if isOld {
                    try scenario.expect(contents, keys: 1...scenario.rowCount) { "item \($0)" }
                    return "old"
                }
                guard contents.version == migration.to else {
                    throw CrashHarness.Failure("the source changed but is at \(contents.version), not \(migration.to)")
                }
                let mapped = migration.to == "v3"
                try scenario.expect(contents, keys: 1...scenario.rowCount) { mapped ? "ITEM \($0)" : "item \($0)" }
                return error == nil ? "new" : "new, error after the rename"
            })
        #expect(report.faults > 0)
    }

    @Test(arguments: ["sqlite", "binary", "xml"])
    func aFailedConvertLeavesNoDestinationAndTheSourceUnchanged(type: String) async throws {
        let scenario = try CrashScenario(rowCount: Self.rowCount)
        let source = try await scenario.makeStore("Source.sqlite")
        let bytes = try Data(contentsOf: source)
        let destination = scenario.path("Converted.\(type)")
        let kind: StoreKind = type == "sqlite" ? .sqlite : type == "binary" ? .binary : .xml
        let report = try await FaultSweep(name: "convert to \(type)").run(
            reset: { try StoreFiles.destroy(at: destination) },
            operation: {
                let store = try StoreFiles.open(at: source, model: nil, isReadOnly: true)
                _ = try await StoreFiles.copy(store, to: destination, kind: kind)
            },
            isTyped: Self.isTyped,
            check: { error in
                guard try Data(contentsOf: source) == bytes else { throw CrashHarness.Failure("the source changed") }
                let leftovers = try scenario.leftovers(containing: "tern-tmp")
                guard leftovers.isEmpty else { throw CrashHarness.Failure("temporary files left: \(leftovers)") }
                guard FileManager.default.fileExists(atPath: destination.path) else {
                    if error == nil { throw CrashHarness.Failure("the convert succeeded but made no store") }
                    return "old"
                }
                try await scenario.expectConverted(destination, isSQLite: kind == .sqlite)
                return "new"
            })
        #expect(report.faults > 0)
    }

    @Test func aFailedReplaceLeavesTheOldOrTheNewStoreAndTheSourceUnchanged() async throws {
        let scenario = try CrashScenario(rowCount: Self.rowCount)
        let template = try await scenario.makeStore("Template.sqlite")
        let source = try await scenario.makeStore("Source.sqlite", suffix: " replaced")
        let bytes = try Data(contentsOf: source)
        let url = scenario.path("Items.sqlite")
        let report = try await FaultSweep(name: "replace").run(
            reset: { try scenario.restore(template, to: url) },
            operation: { try StoreFiles.replace(at: url, withStoreAt: source) },
            isTyped: Self.isTyped,
            check: { error in
                guard try Data(contentsOf: source) == bytes else { throw CrashHarness.Failure("the source changed") }
                let state = try await Self.renamedState(scenario, url, suffix: " replaced")
                if error == nil, state != "new" {
                    throw CrashHarness.Failure("the replace succeeded but wrote nothing")
                }
                return state
            })
        #expect(report.faults > 0)
    }

    @Test(arguments: ["binary", "xml"])
    func aFailedAtomicStoreSaveLeavesTheOldOrTheNewFile(type: String) async throws {
        let scenario = try CrashScenario(rowCount: Self.rowCount)
        let url = scenario.path("Items.\(type)")
        let template = scenario.path("Template.\(type)")
        let kind: StoreKind = type == "binary" ? .binary : .xml
        let model = try #require(scenario.model.version(named: "v1")).model
        do {
            let store = try await StoreFiles.create(at: template, kind: kind, model: model)
            let keys = try await store.newPrimaryKeys(forEntity: "Item", count: Self.rowCount)
            _ = try await store.save(
                StoreChangeSet(
                    inserted: keys.map { key in
                        StoreRow(
                            reference: RowReference(entityName: "Item", primaryKey: key),
                            attributes: ["name": .string("item \(key)"), "value": .integer(key)])
                    }))
        }
        /// "old" or "new" when every row is one or the other.
        func state() async throws -> String {
            let store = try StoreFiles.open(at: url, model: nil, isReadOnly: true)
            let rows = try await store.fetch(StoreFetchRequest(entityName: "Item"))
            let names = Set(
                rows.compactMap { row -> String? in
                    guard case .string(let name)? = row.attributes["name"],
                        case .integer(let value)? = row.attributes["value"]
                    else { return nil }
                    return name == "item \(value)" ? "old" : name == "item \(value) saved" ? "new" : "damaged"
                })
            guard rows.count == Self.rowCount, names.count == 1, let state = names.first, state != "damaged" else {
                throw CrashHarness.Failure("\(rows.count) rows in states \(names.sorted())")
            }
            return state
        }
        let report = try await FaultSweep(name: "\(type) store save").run(
            reset: {
                try StoreFiles.destroy(at: url)
                try FileManager.default.copyItem(at: template, to: url)
            },
            operation: { try await scenario.renameAll(in: try StoreFiles.open(at: url, model: nil), suffix: " saved") },
            isTyped: Self.isTyped,
            check: { error in
                let leftovers = try scenario.leftovers(containing: "tern-tmp")
                guard leftovers.isEmpty else { throw CrashHarness.Failure("temporary files left: \(leftovers)") }
                let found = try await state()
                if error == nil, found != "new" { throw CrashHarness.Failure("the save succeeded but wrote nothing") }
                return found
            })
        #expect(report.faults > 0)
    }
}
