public import Foundation

/// Where a store lives: a file, or a schema of a PostgreSQL database.
///
/// Users name stores the way the `tern` command takes them: a path, or a `postgres://` URL.
/// ``init(_:)`` reads either; the cases say which it is.
///
/// ```swift
/// let report = try await StoreMigrator().migrateStore(at: .file(url), model: versions)
/// let server = StoreLocation("postgres://app@db.example.com/recipes?schema=kitchen")
/// ```
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    /// A store file: SQLite, binary or XML (Core Data's `NSPersistentStore` URL).
    case file(URL)
    /// A PostgreSQL store, named by its connection string (`postgres://…`, with an optional
    /// `schema` parameter).
    case postgreSQL(String)

    /// Reads a location as a user writes it: a `postgres://` or `postgresql://` URL names a
    /// PostgreSQL store, anything else a file path (relative paths from the current folder).
    ///
    /// - Parameter text: A path or a connection URL.
    public init(_ text: String) {
        self = Self.isPostgreSQLURL(text) ? .postgreSQL(text) : .file(URL(fileURLWithPath: text))
    }

    /// Whether `text` is a PostgreSQL connection URL rather than a path.
    ///
    /// - Parameter text: A path or a connection URL.
    /// - Returns: True for `postgres://…` and `postgresql://…`.
    public static func isPostgreSQLURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The file's URL; nil for a PostgreSQL store.
    public var fileURL: URL? {
        guard case .file(let url) = self else { return nil }
        return url
    }

    /// The file's path, or the connection string with any password replaced by `***`: safe for
    /// messages and logs.
    public var description: String {
        switch self {
        case .file(let url):
            return url.path
        case .postgreSQL(let connection):
            // postgres://user:password@host/…: the password is what lies between the user's
            // colon and the `@` that ends the credentials.
            guard let scheme = connection.range(of: "://"),
                let at = connection[scheme.upperBound...].firstIndex(of: "@"),
                let colon = connection[scheme.upperBound..<at].firstIndex(of: ":")
            else { return connection }
            return connection.replacingCharacters(in: connection.index(after: colon)..<at, with: "***")
        }
    }
}
