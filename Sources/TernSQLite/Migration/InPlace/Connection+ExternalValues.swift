internal import CSQLite
import Foundation
import TernCore
import TernRelational

extension Connection {
    // MARK: - External values in SQL

    /// The SQL function that gives the bytes an external-storage column stands for:
    /// `TERN_EXTERNAL_VALUE(column)` removes Core Data's inline marker (`0x01`), reads the file a
    /// reference (`0x02` + UUID) names from the store's `_EXTERNAL_DATA` folder, and keeps other
    /// bytes as they are; NULL stays NULL.
    static let externalValueFunction = TableMigrationPlan.externalValueFunction

    /// Registers ``externalValueFunction`` for a store's external data folder, so that an
    /// in-place migration can bring values an attribute kept in files back into its column
    /// (the attribute no longer allows external storage).
    ///
    /// The function only reads files; they are removed after the migration commits, with the
    /// other files no row references.
    ///
    /// - Parameter storeURL: The store file, whose `.<name>_SUPPORT/_EXTERNAL_DATA` folder is read.
    /// - Throws: ``SQLiteError`` when SQLite refuses the registration.
    func registerExternalValueFunction(storeURL: URL) throws(SQLiteError) {
        let reader = Unmanaged.passRetained(ExternalValueReader(storeURL: storeURL)).toOpaque()
        let code = sqlite3_create_function_v2(
            handle, Self.externalValueFunction, 1, SQLITE_UTF8, reader,
            { context, _, arguments in
                guard let context, let arguments, let value = arguments[0], let reader = sqlite3_user_data(context)
                else { return }
                guard sqlite3_value_type(value) != SQLITE_NULL else { return sqlite3_result_null(context) }
                let bytes = sqlite3_value_blob(value)
                let count = Int(sqlite3_value_bytes(value))
                let column = bytes.map { Data(bytes: $0, count: count) } ?? Data()
                do {
                    let resolved = try Unmanaged<ExternalValueReader>.fromOpaque(reader).takeUnretainedValue().store
                        .resolve(column)
                    guard !resolved.isEmpty else { return sqlite3_result_zeroblob(context, 0) }
                    resolved.withUnsafeBytes { buffer in
                        sqlite3_result_blob64(
                            context, buffer.baseAddress, sqlite3_uint64(buffer.count), sqliteTransient)
                    }
                } catch let error as TernError {
                    sqlite3_result_error(context, error.message + (error.path.map { " (\($0))" } ?? ""), -1)
                } catch {
                    sqlite3_result_error(context, "Cannot read an external value: \(error)", -1)
                }
            }, nil, nil,
            { reader in
                if let reader { Unmanaged<ExternalValueReader>.fromOpaque(reader).release() }
            })
        guard code == SQLITE_OK else { throw SQLiteError(sqliteCode: code, database: handle, sql: nil, path: path) }
    }
}

/// The external data folder ``Connection/externalValueFunction`` reads, owned by SQLite's
/// function registration (released when the function is replaced or the connection closes).
private final class ExternalValueReader: Sendable {
    let store: ExternalDataStore

    init(storeURL: URL) {
        store = ExternalDataStore(storeURL: storeURL, threshold: 0, isDurable: false)
    }
}
