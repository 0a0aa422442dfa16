import Foundation
import TernCore

extension ArchivedValue {
    /// Whether the value is `$null` (or missing).
    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The archived object, or nil for anything else.
    package var object: ArchivedObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string of an inline string or of an `NSString`/`NSMutableString` object (`NS.string`).
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference.
    package func string() throws -> String? {
        switch self {
        case .string(let text): return text
        case .object(let object) where object.isKind(of: "NSString"):
            if case .string(let text) = try object.value(forKey: "NS.string") { return text }
            if case .data(let bytes) = try object.value(forKey: "NS.bytes") {
                return String(decoding: bytes, as: UTF8.self)
            }
            return nil
        default: return nil
        }
    }

    /// The elements of an `NSArray`, `NSSet` or `NSOrderedSet` object (`NS.objects`), resolved.
    ///
    /// - Returns: The elements, or nil when the value is not such a collection.
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference or layout.
    package func elements() throws -> [ArchivedValue]? {
        guard let object,
            object.isKind(of: "NSArray") || object.isKind(of: "NSSet") || object.isKind(of: "NSOrderedSet")
        else { return nil }
        guard case .array(let raw) = try object.value(forKey: "NS.objects") else {
            throw TernError.corrupt("An archived \(object.className) has no NS.objects array.")
        }
        return try raw.map { try object.archive.resolve($0) }
    }

    /// The entries of an `NSDictionary` (`NS.keys`/`NS.objects`) or of an
    /// `NSKnownKeysDictionary1` (`searchMapping.keys`/`values`), in archive order, resolved.
    ///
    /// - Returns: The key-value pairs, or nil when the value is not a dictionary.
    /// - Throws: ``TernError`` with code `corruptArchive` when keys and values do not pair up.
    package func entries() throws -> [(key: ArchivedValue, value: ArchivedValue)]? {
        guard let object, object.isKind(of: "NSDictionary") else { return nil }
        let keys: [ArchivedValue]
        let values: [ArchivedValue]
        if case .array(let rawKeys) = try object.value(forKey: "NS.keys"),
            case .array(let rawValues) = try object.value(forKey: "NS.objects")
        {
            keys = try rawKeys.map { try object.archive.resolve($0) }
            values = try rawValues.map { try object.archive.resolve($0) }
        } else if let mapping = try object.value(forKey: "searchMapping").object,
            let mappedKeys = try mapping.value(forKey: "keys").elements(),
            let mappedValues = try object.value(forKey: "values").elements()
        {
            keys = mappedKeys
            values = mappedValues
        } else {
            throw TernError.corrupt("An archived \(object.className) has neither NS.keys/NS.objects nor a key mapping.")
        }
        guard keys.count == values.count else {
            throw TernError.corrupt(
                "An archived \(object.className) has \(keys.count) keys for \(values.count) values.")
        }
        return Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
    }

    /// The entries of a dictionary whose keys are strings.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when a key is not a string.
    package func stringKeyedEntries() throws -> [(key: String, value: ArchivedValue)]? {
        guard let entries = try entries() else { return nil }
        return try entries.map { entry in
            guard let key = try entry.key.string() else {
                throw TernError.corrupt("An archived dictionary has a key that is not a string.")
            }
            return (key: key, value: entry.value)
        }
    }
}

extension ArchivedObject {
    /// The string in a field, or nil when the field is missing or `$null`.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when the field holds something else.
    package func string(forKey key: String) throws -> String? {
        let value = try value(forKey: key)
        if value.isNull { return nil }
        guard let text = try value.string() else {
            throw TernError.corrupt("The \(key) of an archived \(className) is not a string.")
        }
        return text
    }

    /// The integer in a field, or nil when the field is missing.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when the field holds something else.
    package func integer(forKey key: String) throws -> Int64? {
        switch try value(forKey: key) {
        case .null: return nil
        case .integer(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        default: throw TernError.corrupt("The \(key) of an archived \(className) is not an integer.")
        }
    }

    /// The Boolean in a field (integers count as true when not zero); false when missing.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when the field holds something else.
    package func bool(forKey key: String) throws -> Bool {
        switch try value(forKey: key) {
        case .null: return false
        case .bool(let flag): return flag
        case .integer(let number): return number != 0
        default: throw TernError.corrupt("The \(key) of an archived \(className) is not a Boolean.")
        }
    }

    /// The object a field refers to, or nil when the field is missing or `$null`.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when the field holds something else.
    package func object(forKey key: String) throws -> ArchivedObject? {
        let value = try value(forKey: key)
        if value.isNull { return nil }
        guard let object = value.object else {
            throw TernError.corrupt("The \(key) of an archived \(className) is not an object.")
        }
        return object
    }
}
