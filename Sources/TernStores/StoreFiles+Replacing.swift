public import Foundation
package import TernCore
import TernSQLite

extension StoreFiles {
    // MARK: - Replacing

    /// Replaces the store at one location with a copy of the store at another: Core Data's
    /// `replacePersistentStore`, done without losing committed data.
    ///
    /// A SQLite source is copied with SQLite's online backup API: the copy is consistent even
    /// while the source is open and being written, and includes what sits in its `-wal` file.
    /// An atomic (binary or XML) source is copied durably (temporary file, `fsync`, rename,
    /// folder `fsync`). The source's `.<name>_SUPPORT` folder (external data) replaces the
    /// destination's. A destination of another type is destroyed first.
    ///
    /// External data files are copied after the database: a file that a concurrent save
    /// replaces in between is missing from the copy, so copy a store with external data while
    /// no one writes to it.
    ///
    /// - Parameters:
    ///   - destination: The store file to replace; it need not exist. Close it first.
    ///   - source: The store to copy; it may be open.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` when both are the same file, any error of
    ///   reading the source or writing the destination.
    /// - Complexity: O(*n*) in the size of the source; SQLite copies stream page by page.
    public static func replace(at destination: URL, withStoreAt source: URL) throws {
        try replace(at: destination, withStoreAt: source, sourceKind: nil)
    }

    /// ``replace(at:withStoreAt:)``, for a caller that has already read the source's type.
    ///
    /// - Parameters:
    ///   - destination: The store file to replace; it need not exist. Close it first.
    ///   - source: The store to copy; it may be open.
    ///   - sourceKind: The source's type; read from the file when nil.
    /// - Throws: As ``replace(at:withStoreAt:)``.
    package static func replace(at destination: URL, withStoreAt source: URL, sourceKind: StoreKind?) throws {
        guard source.standardizedFileURL.path != destination.standardizedFileURL.path else {
            throw TernError(.unsupported, "a store cannot replace itself; pick another destination", path: source.path)
        }
        let kind = try sourceKind ?? self.kind(ofStoreAt: source)
        if FileManager.default.fileExists(atPath: destination.path),
            (try? self.kind(ofStoreAt: destination)) != kind
        {
            try destroy(at: destination)
        }
        if kind == .sqlite {
            try SQLiteStore.backupStore(at: source, to: destination)
        } else {
            let data: Data
            do {
                data = try Data(contentsOf: source)
            } catch {
                throw TernError(
                    .unreadableStore, "could not read the store to copy; check its permissions", path: source.path,
                    underlyingError: error)
            }
            try DurableFile.write(data, to: destination)
        }
        try copySupportFolder(from: source, to: destination)
    }

    /// Makes the destination's `_SUPPORT` folder a copy of the source's (or removes it when the
    /// source has none), building the copy beside it and renaming it into place.
    private static func copySupportFolder(from source: URL, to destination: URL) throws {
        let from = supportFolder(of: source)
        let to = supportFolder(of: destination)
        let manager = FileManager.default
        let staging = to.deletingLastPathComponent()
            .appendingPathComponent(".\(to.lastPathComponent).tern-tmp-\(UUID().uuidString)", isDirectory: true)
        do {
            if manager.fileExists(atPath: from.path) { try manager.copyItem(at: from, to: staging) }
            if manager.fileExists(atPath: to.path) { try manager.removeItem(at: to) }
            if manager.fileExists(atPath: staging.path) { try manager.moveItem(at: staging, to: to) }
        } catch {
            try? manager.removeItem(at: staging)
            throw TernError(
                .ioFailure,
                "could not copy the store's _SUPPORT folder (external data); check free space and permissions",
                path: to.path, underlyingError: error)
        }
    }
}
