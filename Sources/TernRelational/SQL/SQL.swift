/// A SQL statement with its arguments, built so that values are always bound.
///
/// String interpolation appends a `?` placeholder and binds the value; identifiers are quoted
/// only through ``identifier(_:)``; text that is not a literal enters only through
/// ``init(unsafeSQL:)``.
///
/// ```swift
/// let name = "Car"
/// let sql: SQL = "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = \(name)"
/// // sql.text == "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", sql.arguments == [.text("Car")]
/// let table: SQL = "SELECT COUNT(*) FROM \(.identifier("ZCAR"))"
/// ```
package struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// The statement text, with `?` placeholders.
    package private(set) var text: String
    /// The values bound to the placeholders, in order.
    package private(set) var arguments: [DatabaseValue]

    /// Creates a statement from a literal without values.
    package init(stringLiteral value: String) {
        text = value
        arguments = []
    }

    /// Creates a statement from interpolated text: values become bound placeholders.
    package init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        arguments = stringInterpolation.arguments
    }

    /// Creates a statement from text that was not written as a literal.
    ///
    /// Use only for text Tern builds itself from quoted identifiers and keywords: never for values.
    package init(unsafeSQL text: String, arguments: [DatabaseValue] = []) {
        self.text = text
        self.arguments = arguments
    }

    /// A quoted identifier (table, column or index name): `"name"`, inner quotes doubled.
    package static func identifier(_ name: String) -> SQL {
        SQL(unsafeSQL: quoted(name))
    }

    /// An identifier quoted for SQL text: `"name"`, inner quotes doubled.
    package static func quoted(_ name: String) -> String {
        var result = "\""
        for character in name {
            result.append(character)
            if character == "\"" { result.append("\"") }
        }
        return result + "\""
    }

    /// Fragments joined by a separator.
    package static func joined(_ fragments: some Sequence<SQL>, separator: String = ", ") -> SQL {
        var result = SQL(unsafeSQL: "")
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { result.text += separator }
            result.append(fragment)
        }
        return result
    }

    /// Two fragments one after the other, with their arguments.
    package static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Appends a fragment with its arguments.
    package mutating func append(_ other: SQL) {
        text += other.text
        arguments += other.arguments
    }

    /// The interpolation that binds values and embeds fragments.
    package struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var arguments: [DatabaseValue] = []

        package init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount)
        }

        package mutating func appendLiteral(_ literal: String) { text += literal }

        /// Appends a `?` placeholder and binds the value.
        package mutating func appendInterpolation(_ value: some DatabaseValueConvertible) {
            text += "?"
            arguments.append(value.databaseValue)
        }

        /// Embeds a fragment with its own arguments.
        package mutating func appendInterpolation(_ fragment: SQL) {
            text += fragment.text
            arguments += fragment.arguments
        }
    }
}
