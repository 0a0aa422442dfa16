public import Foundation

/// A property-list value as a Swift value: what store metadata holds.
///
/// ```swift
/// let version: PropertyListValue = .integer(3)
/// let hashes: PropertyListValue = .dictionary(["Recipe": .data(hash)])
/// ```
public enum PropertyListValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int64)
    /// A real number.
    case real(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An array.
    case array([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
}
