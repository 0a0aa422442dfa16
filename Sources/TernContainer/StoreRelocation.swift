import Foundation
import TernCore
import TernSQLite
import TernStores

/// Moving a store from a legacy location (or copying a seed store) to its current location,
/// crash-safely.
///
/// A small journal file beside the destination (`.<name>.tern-move`) records the move before
/// anything is written, and its phase:
///
/// 1. `copying`: the journal is written durably; the source is copied to the destination with
///    the replace operation of TernStores (SQLite's online backup, so nothing in a `-wal` file
///    is lost) and migrated in place to the current model version (atomic, durable).
/// 2. `cleaning`: the journal is rewritten once the destination is complete and on disk; the
///    source's files are removed (for a move); the journal is removed.
///
/// A crash in phase 1 leaves a half-made destination that no one has opened: the next load
/// destroys it and starts again from the untouched source. A crash in phase 2 leaves a complete
/// destination: the next load finishes removing the source. A source that cannot be removed
/// (its folder is read-only) is kept and reported once; the journal is removed all the same, so
/// later loads use the destination and see the source as a stray legacy store. So there are never two live copies:
/// whenever a legacy store and a current store both exist because of a move, the journal says
/// which one is live.
struct StoreRelocation: Codable, Sendable, Hashable {
    /// The store being moved or copied.
    var source: String
    /// Its new location.
    var destination: String
    /// `copying` or `cleaning`.
    var phase: String
    /// True for a move (the source is removed), false for a seed copy.
    var removesSource: Bool

    static let copying = "copying"
    static let cleaning = "cleaning"

    /// The journal file of moves to a destination.
    static func journalURL(for destination: URL) -> URL {
        destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).tern-move")
    }

    /// The journal of an interrupted move to `destination`, if there is one.
    static func pending(for destination: URL) throws -> StoreRelocation? {
        let url = journalURL(for: destination)
        // A crash while the journal was being written leaves its temporary file (and no journal).
        DurableFile.removeTemporaryFiles(for: url)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try JSONDecoder().decode(StoreRelocation.self, from: Data(contentsOf: url))
        } catch {
            // DurableFile writes the journal whole or not at all, so this is not a torn write.
            throw TernError(
                .unreadableStore,
                "the journal of an interrupted store move cannot be read; remove it once you have checked which store to keep",
                path: url.path, underlyingError: error)
        }
    }

    /// Writes the journal durably (temporary file, fsync, rename, folder fsync).
    func record() throws {
        let data = try JSONEncoder().encode(self)
        try DurableFile.write(data, to: Self.journalURL(for: URL(fileURLWithPath: destination)))
    }

    /// Removes the journal durably: the move is over.
    func finish() throws {
        let url = Self.journalURL(for: URL(fileURLWithPath: destination))
        do {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
        } catch {
            throw TernError(
                .ioFailure, "could not remove the journal of a finished store move; check permissions", path: url.path,
                underlyingError: error)
        }
        try FileSystem.synchronizeDirectory(atPath: url.deletingLastPathComponent().path)
    }

    /// How an interrupted move ended.
    enum Recovery: Equatable {
        /// The half-made copy was removed: the move must start again.
        case undone
        /// The destination was complete; the source was removed.
        case completed
        /// The destination was complete, but the source could not be removed (a read-only
        /// folder): it stays as a stray copy, and the move is over all the same.
        case completedKeepingSource(reason: String)
    }

    /// Finishes or undoes an interrupted move, as its phase says.
    ///
    /// - Returns: What was done.
    func recover() throws -> Recovery {
        let destinationURL = URL(fileURLWithPath: destination)
        if phase == Self.cleaning {
            let kept = removeSource()
            try finish()
            return kept.map { .completedKeepingSource(reason: $0) } ?? .completed
        }
        try StoreFiles.destroy(at: destinationURL)
        try finish()
        return .undone
    }

    /// Removes the source of a finished move, if the move removes it. A source that cannot be
    /// removed (its folder is read-only) is left where it is: the destination is complete and
    /// durable, so the move is over, and retrying the removal at every load would fail every
    /// load. Returns why it was kept, or nil.
    private func removeSource() -> String? {
        guard removesSource else { return nil }
        do {
            try StoreFiles.destroy(at: URL(fileURLWithPath: source))
            return nil
        } catch let error as TernError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    /// Copies the source to the destination, migrates it there, and then, for a move, removes
    /// the source. `migrate` runs on the new copy, between the copy and the clean-up.
    ///
    /// - Parameter sourceKind: The source's type, when the caller has read it; read from the file when nil.
    /// - Returns: Why the source was kept when it could not be removed, or nil.
    @discardableResult
    func run(sourceKind: StoreKind? = nil, migrate: (URL) async throws -> Void) async throws -> String? {
        let sourceURL = URL(fileURLWithPath: source)
        let destinationURL = URL(fileURLWithPath: destination)
        try record()
        do {
            try StoreFiles.replace(at: destinationURL, withStoreAt: sourceURL, sourceKind: sourceKind)
            try FileSystem.synchronizeFile(atPath: destinationURL.path)
            try await migrate(destinationURL)
        } catch {
            // Nothing has opened the copy: undo it, so that the next load starts from the source.
            try? StoreFiles.destroy(at: destinationURL)
            try? finish()
            throw error
        }
        var cleaning = self
        cleaning.phase = Self.cleaning
        try cleaning.record()
        let kept = cleaning.removeSource()
        try cleaning.finish()
        return kept
    }
}
