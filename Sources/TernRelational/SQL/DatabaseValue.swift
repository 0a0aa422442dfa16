public import Foundation

/// A value as SQLite stores it: one of its five storage classes.
package enum DatabaseValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A double-precision real.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether the value is SQL NULL.
    package var isNull: Bool { self == .null }

    /// The value as an integer, when it is an integer (or a real with an integral value).
    package var int64: Int64? {
        switch self {
        case .integer(let value): value
        case .real(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The value as a double, when it is numeric.
    package var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .real(let value): value
        default: nil
        }
    }

    /// The value as text, when it is text.
    package var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The value as bytes, when it is a blob (or text, as its UTF-8 bytes).
    package var data: Data? {
        switch self {
        case .blob(let value): value
        case .text(let value): Data(value.utf8)
        default: nil
        }
    }
}

/// A Swift value that can be bound to a statement parameter.
package protocol DatabaseValueConvertible {
    /// The value as SQLite stores it.
    var databaseValue: DatabaseValue { get }
}

extension DatabaseValue: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { self }
}

extension Int64: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .integer(self) }
}

extension Int: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .integer(Int64(self)) }
}

extension Double: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .real(self) }
}

extension String: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .text(self) }
}

extension Data: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .blob(self) }
}

extension Bool: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    package var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
}
