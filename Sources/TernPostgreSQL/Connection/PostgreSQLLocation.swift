import Foundation
import TernRelational

/// Where a PostgreSQL store lives: a connection string as `psql` accepts it, plus the schema
/// that holds the store's tables.
///
/// Both of libpq's forms are accepted: a URI (`postgres://user@host:5432/db?sslmode=require`)
/// and `key=value` pairs (`host=/tmp port=5433 dbname=db`). Tern adds one parameter, `schema`,
/// which selects the schema of the store's tables (created when missing; the server's default,
/// usually `public`, without it).
///
/// ```swift
/// let location = try PostgreSQLLocation("postgres://app@db.example.com/recipes?schema=kitchen")
/// print(location.schema ?? "public")   // kitchen
/// print(location)                      // the string, with any password hidden
/// ```
public struct PostgreSQLLocation: Sendable, Hashable, CustomStringConvertible {
    /// The connection string handed to libpq, without `schema`.
    public let connectionInfo: String
    /// The schema of the store's tables, or nil for the server's `search_path`.
    public let schema: String?
    /// The connection string with any password replaced by `***`: safe for messages and logs.
    public let description: String

    /// Reads a connection string.
    ///
    /// - Parameter string: A `postgres://` or `postgresql://` URI, or `key=value` pairs.
    /// - Throws: ``PostgreSQLError`` with code `invalidConnectionString` for a malformed string
    ///   (the message never shows a password).
    public init(_ string: String) throws(PostgreSQLError) {
        if Self.isURL(string) {
            guard var components = URLComponents(string: string) else {
                throw PostgreSQLError(
                    .invalidConnectionString,
                    "The PostgreSQL URL cannot be read; write it as postgres://user@host:port/database?schema=name.")
            }
            var items = components.queryItems ?? []
            let schema = items.last { $0.name == "schema" }?.value
            items.removeAll { $0.name == "schema" }
            components.queryItems = items.isEmpty ? nil : items
            connectionInfo = components.string ?? string
            self.schema = schema.flatMap { $0.isEmpty ? nil : $0 }
            if components.password != nil { components.password = "***" }
            description = components.string ?? "postgres://"
        } else {
            let pairs = try Self.pairs(of: string)
            schema = pairs.last { $0.key == "schema" }?.value
            let kept = pairs.filter { $0.key != "schema" }
            connectionInfo = kept.map { "\($0.key)=\(Self.quotedValue($0.value))" }.joined(separator: " ")
            description = kept.map { "\($0.key)=\($0.key == "password" ? "***" : Self.quotedValue($0.value))" }
                .joined(separator: " ")
        }
    }

    /// Whether a string is a PostgreSQL URL (`postgres://` or `postgresql://`), as store
    /// arguments of the `tern` command are told apart from paths.
    ///
    /// - Parameter string: A store argument.
    /// - Returns: Whether it names a PostgreSQL database.
    public static func isURL(_ string: String) -> Bool {
        string.hasPrefix("postgres://") || string.hasPrefix("postgresql://")
    }

    /// The connection string of the same database with another schema.
    ///
    /// - Parameter schema: The schema.
    /// - Returns: A connection string (with the password, if any: not for messages).
    package func connectionString(schema: String) -> String {
        if Self.isURL(connectionInfo), var components = URLComponents(string: connectionInfo) {
            components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "schema", value: schema)]
            return components.string ?? connectionInfo
        }
        return connectionInfo + " schema=" + Self.quotedValue(schema)
    }

    // MARK: - Non public

    /// The `key=value` pairs of a conninfo string, values unquoted (libpq's rules: single quotes,
    /// backslash escapes).
    private static func pairs(of string: String) throws(PostgreSQLError) -> [(key: String, value: String)] {
        var pairs: [(key: String, value: String)] = []
        var characters = Array(string)[...]
        func skipSpaces() { while characters.first?.isWhitespace == true { characters.removeFirst() } }
        skipSpaces()
        while !characters.isEmpty {
            var key = ""
            while let next = characters.first, next != "=", !next.isWhitespace {
                key.append(next)
                characters.removeFirst()
            }
            skipSpaces()
            guard !key.isEmpty, characters.first == "=" else {
                throw PostgreSQLError(
                    .invalidConnectionString,
                    "The PostgreSQL connection string needs key=value pairs (host=… dbname=… schema=…) or a postgres:// URL."
                )
            }
            characters.removeFirst()
            skipSpaces()
            var value = ""
            if characters.first == "'" {
                characters.removeFirst()
                var closed = false
                while let next = characters.popFirst() {
                    if next == "\\", let escaped = characters.popFirst() {
                        value.append(escaped)
                    } else if next == "'" {
                        closed = true
                        break
                    } else {
                        value.append(next)
                    }
                }
                guard closed else {
                    throw PostgreSQLError(
                        .invalidConnectionString, "A quoted value of the connection string has no closing quote.")
                }
            } else {
                while let next = characters.first, !next.isWhitespace {
                    characters.removeFirst()
                    if next == "\\", let escaped = characters.popFirst() {
                        value.append(escaped)
                    } else {
                        value.append(next)
                    }
                }
            }
            pairs.append((key, value))
            skipSpaces()
        }
        return pairs
    }

    /// A conninfo value in single quotes, with quotes and backslashes escaped.
    private static func quotedValue(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
