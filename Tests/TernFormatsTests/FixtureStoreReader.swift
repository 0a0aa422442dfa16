internal import CSQLite
import Foundation
import TernTestSupport

/// Reads single blobs out of a copy of a fixture store with the SQLite C API (tests only).
struct FixtureStoreReader {
    /// The store's `Z_MODELCACHE.Z_CONTENT` (empty when it has none) and `Z_METADATA.Z_PLIST`.
    struct Blobs {
        var modelCache: Data
        var metadata: Data
    }

    /// Copies the fixture store into a temporary folder and reads its blobs.
    static func blobs(ofFixture relativePath: String) throws -> Blobs {
        let folder = try TemporaryDirectory()
        let store = try folder.copy(Fixtures.url(relativePath))
        for suffix in ["-wal", "-shm"] {
            let side = Fixtures.url(relativePath + suffix)
            if FileManager.default.fileExists(atPath: side.path) {
                try folder.copy(side)
            }
        }
        return Blobs(
            // Stores of frameworks before 637 have no model cache: empty then.
            modelCache: (try? blob("SELECT Z_CONTENT FROM Z_MODELCACHE", in: store)) ?? Data(),
            metadata: try blob("SELECT Z_PLIST FROM Z_METADATA", in: store))
    }

    /// The metadata dictionary of a fixture store (old stores have no model cache), read from a copy.
    static func metadata(ofStoreAt store: URL) throws -> [String: Any] {
        let folder = try TemporaryDirectory()
        return try metadata(blob("SELECT Z_PLIST FROM Z_METADATA", in: folder.copy(store)))
    }

    /// The store's metadata dictionary.
    static func metadata(_ plist: Data) throws -> [String: Any] {
        let value = try PropertyListSerialization.propertyList(from: plist, options: [], format: nil)
        guard let dictionary = value as? [String: Any] else { throw Failure(message: "metadata is not a dictionary") }
        return dictionary
    }

    struct Failure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private static func blob(_ sql: String, in store: URL) throws -> Data {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(store.path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db = handle else {
            sqlite3_close(handle)
            throw Failure(message: "cannot open \(store.path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw Failure(message: "cannot prepare \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw Failure(message: "no row for \(sql)") }
        let count = Int(sqlite3_column_bytes(statement, 0))
        guard let bytes = sqlite3_column_blob(statement, 0) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
