import Foundation
import TernCore
import TernFormats
import TernRelational

extension Connection {
    // MARK: - Reading and writing Z_METADATA

    /// Checks that the file is a SQLite database with Core Data's `Z_METADATA` table.
    ///
    /// - Throws: ``SQLiteError`` with code `notADatabase`, or ``/TernCore/TernError`` with code
    ///   `notACoreDataStore`, and the path.
    func checkCoreDataLayout() throws {
        let tables: [DatabaseValue]
        do throws(SQLiteError) {
            tables = try fetchAll(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Z_METADATA', 'Z_PRIMARYKEY')"
            ).compactMap(\.first)
        } catch {
            if error.code == .notADatabase {
                throw SQLiteError(
                    .notADatabase, "The file is not a SQLite database; pick a Core Data SQLite store.",
                    resultCode: error.resultCode, extendedResultCode: error.extendedResultCode, path: path,
                    underlyingError: error)
            }
            var located = error
            located.path = path
            throw located
        }
        for required in ["Z_METADATA", "Z_PRIMARYKEY"] where !tables.contains(.text(required)) {
            throw TernError(
                .notACoreDataStore,
                "The database has no \(required) table, so it is not a Core Data store; "
                    + "open it with a plain SQLite tool instead.",
                path: path)
        }
    }

    /// Reads the store's metadata from `Z_METADATA`.
    ///
    /// - Returns: The metadata, with every key Tern does not interpret in `applicationKeys`.
    /// - Throws: ``/TernCore/TernError`` `notACoreDataStore` or `invalidMetadata` when the table is
    ///   missing, empty or holds a malformed plist; ``SQLiteError`` when SQLite fails.
    func readMetadata() throws -> StoreMetadata {
        try checkCoreDataLayout()
        let sql: SQL = "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1"
        guard let row = try fetchOne(sql) else {
            throw TernError(
                .notACoreDataStore, "Z_METADATA has no row; the store was never finished being created.",
                path: path, sql: sql.text)
        }
        let uuid = row[0].string ?? ""
        var dictionary: [String: PropertyListValue] = [:]
        if let plist = row[1].data, !plist.isEmpty {
            let decoded = try? BinaryPropertyList.decode(plist)
            guard let decoded, case .dictionary(let top)? = PropertyListValue(decoded) else {
                throw TernError(
                    .invalidMetadata, "Z_METADATA.Z_PLIST is not a valid binary property list dictionary.",
                    path: path, sql: sql.text)
            }
            dictionary = top
        }
        guard let metadata = StoreMetadata(propertyList: dictionary, uuid: uuid) else {
            throw TernError(
                .invalidMetadata, "A metadata key of Z_METADATA.Z_PLIST holds a value of the wrong type.",
                path: path, sql: sql.text)
        }
        return metadata
    }

    /// Replaces the store's metadata (row `Z_VERSION = 1` of `Z_METADATA`).
    ///
    /// - Parameter metadata: The metadata; unknown keys in `applicationKeys` are written as they are.
    /// - Throws: ``SQLiteError`` when the write fails.
    func writeMetadata(_ metadata: StoreMetadata) throws(SQLiteError) {
        let plist = BinaryPropertyList.encode(
            PropertyListValue.dictionary(metadata.propertyList).binaryPropertyListValue)
        try inTransaction(.immediate) { () throws(SQLiteError) in
            try execute("DELETE FROM Z_METADATA")
            try execute(
                "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, \(metadata.uuid), \(plist))")
        }
    }
}
