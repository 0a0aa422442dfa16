import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import Testing

/// A read-only open of a store that a crashed writer left (a hot rollback journal, or a
/// write-ahead log whose index cannot be created in a read-only folder) is refused with
/// `needsRecovery` and a message saying what is wrong and what to do, and never changes the
/// files; `tern recover` and writers roll it back (issue #10).
@Suite struct InterruptedWriteTests {
    /// A rollback-journal store with enough pets to spill pages mid-transaction, and its rows.
    static func store(in folder: TemporaryDirectory, journalMode: SQLiteConfiguration.JournalMode) async throws -> (
        URL, Int
    ) {
        let url = folder.path("source.sqlite")
        let store = try SQLiteStore(
            at: url, model: ConformanceModel.model, configuration: SQLiteConfiguration(journalMode: journalMode))
        let count = 400
        let keys = try await store.newPrimaryKeys(forEntity: "Pet", count: count)
        let rows = keys.map {
            StoreRow(
                reference: RowReference(entityName: "Pet", primaryKey: $0),
                attributes: ["name": .string("pet \($0) " + String(repeating: "n", count: 200))])
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return (url, count)
    }

    static func names(in url: URL) async throws -> Set<String> {
        let store = try SQLiteStore(at: url, model: ConformanceModel.model, configuration: .readOnly)
        return Set(
            try await store.fetch(StoreFetchRequest(entityName: "Pet")).compactMap { row -> String? in
                if case .string(let name)? = row.attributes["name"] { return name }
                return nil
            })
    }

    @Test func aHotJournalIsRefusedReadOnlyAndRolledBackByRecover() async throws {
        let folder = try TemporaryDirectory()
        let (source, count) = try await Self.store(in: folder, journalMode: .delete)
        let expected = try await Self.names(in: source)
        let crashed = folder.path("crashed.sqlite")
        try InterruptedWrite.copyMidTransaction(
            of: source, to: crashed, running: "UPDATE ZPET SET ZNAME = 'half-written'")
        let before = InterruptedWrite.files(of: crashed)
        #expect(before.keys.sorted() == ["crashed.sqlite", "crashed.sqlite-journal"])

        // Every read-only way in refuses, says what is wrong and what to do, and writes nothing.
        let opening = #expect(throws: SQLiteError.self) { try SQLiteStore(at: crashed, configuration: .readOnly) }
        #expect(opening?.code == .needsRecovery)
        #expect(opening?.message.contains("crashed.sqlite-journal") == true)
        #expect(opening?.message.contains("tern recover \(crashed.path)") == true)
        #expect(opening?.message.contains("copy crashed.sqlite together with crashed.sqlite-journal") == true)
        let metadata = #expect(throws: SQLiteError.self) { try SQLiteStore.metadata(at: crashed) }
        #expect(metadata?.code == .needsRecovery)
        let verifying = await #expect(throws: SQLiteError.self) { try await StoreVerifier.verify(storeAt: crashed) }
        #expect(verifying?.code == .needsRecovery)
        for command in [["info", crashed.path], ["export", crashed.path], ["verify", crashed.path]] {
            let result = await ToolRunner.run(command)
            #expect(result.status == 1, "tern \(command[0])")
            let lines = result.standardError.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("error: ") && lines[0].contains("tern recover"), "\(lines)")
            #expect(result.standardOutput.isEmpty)
        }
        #expect(
            InterruptedWrite.files(of: crashed) == before, "a read-only open must not change the store or its journal")

        // `tern recover` rolls the transaction back: the committed rows, and nothing half-written.
        let recovered = await ToolRunner.run(["recover", crashed.path])
        #expect(recovered.status == 0, "\(recovered.standardError)")
        #expect(recovered.standardOutput.hasPrefix("recovered: "))
        #expect(!FileManager.default.fileExists(atPath: crashed.path + "-journal"))
        let names = try await Self.names(in: crashed)
        #expect(names.count == count && names == expected)
        let again = await ToolRunner.run(["recover", crashed.path])
        #expect(again.status == 0 && again.standardOutput.hasPrefix("ok: nothing to recover"))
        #expect(await ToolRunner.run(["info", crashed.path]).status == 0)
    }

    @Test func writersRollBackAHotJournalFirst() async throws {
        let folder = try TemporaryDirectory()
        let (source, _) = try await Self.store(in: folder, journalMode: .delete)
        let expected = try await Self.names(in: source)
        let crashed = folder.path("crashed.sqlite")
        try InterruptedWrite.copyMidTransaction(
            of: source, to: crashed, running: "UPDATE ZPET SET ZNAME = 'half-written'")
        var metadata = try await SQLiteStore(at: source, configuration: .readOnly).metadata()
        metadata.applicationKeys["note"] = .string("recovered")
        try SQLiteStore.setMetadata(metadata, at: crashed)
        #expect(try SQLiteStore.metadata(at: crashed).applicationKeys["note"] == .string("recovered"))
        #expect(try await Self.names(in: crashed) == expected)
    }

    @Test(.enabled(if: ReadOnlyFolder.isSupported, "folders cannot be made read-only here"))
    func aWriteAheadLogInAReadOnlyFolderIsRefusedWithAdvice() async throws {
        let folder = try TemporaryDirectory()
        let (source, count) = try await Self.store(in: folder, journalMode: .wal)
        let locked = folder.path("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        let copy = locked.appendingPathComponent("copy.sqlite")
        try InterruptedWrite.copyWithUncheckpointedLog(
            of: source, to: copy, running: "UPDATE ZPET SET ZNAME = 'logged'")
        let before = InterruptedWrite.files(of: copy)
        #expect(before.keys.sorted() == ["copy.sqlite", "copy.sqlite-wal"])
        try #require(ReadOnlyFolder.lock(locked))
        defer { ReadOnlyFolder.unlock(locked) }

        let opening = #expect(throws: SQLiteError.self) { try SQLiteStore(at: copy, configuration: .readOnly) }
        #expect(opening?.code == .needsRecovery)
        #expect(opening?.message.contains("write-ahead log (copy.sqlite-wal)") == true)
        #expect(opening?.message.contains("tern recover") == true)
        let info = await ToolRunner.run(["info", copy.path])
        #expect(info.status == 1 && info.standardError.hasPrefix("error: ") && info.standardError.contains("-wal"))
        let recover = await ToolRunner.run(["recover", copy.path])
        #expect(recover.status == 1 && recover.standardError.contains("writable folder"))
        #expect(InterruptedWrite.files(of: copy) == before, "nothing may be written beside or into the store")

        // What the message advises: copy the store with its log to a writable folder.
        let rescued = folder.path("rescued.sqlite")
        try FileManager.default.copyItem(at: copy, to: rescued)
        try FileManager.default.copyItem(atPath: copy.path + "-wal", toPath: rescued.path + "-wal")
        let names = try await Self.names(in: rescued)
        #expect(names == ["logged"] && count > 1)
    }
}
