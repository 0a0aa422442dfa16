package import Foundation
import TernCore

/// An `NSKeyedArchiver` archive read from a binary property list: a table of objects that refer
/// to one another by UID, and a root.
///
/// Objects are resolved on demand, one reference at a time, so the cycles that object graphs
/// legitimately contain (an entity and its model, a relationship and its inverse) cost nothing;
/// code that walks the graph recursively passes a depth and stops at ``maxDepth``.
///
/// ```swift
/// let archive = try KeyedArchive(data: bytes)
/// let model = try archive.rootObject()            // an ArchivedObject
/// model.className                                  // "NSManagedObjectModel"
/// let entities = try model.dictionary(forKey: "NSEntities")
/// ```
package struct KeyedArchive: Sendable {
    /// The archive's `$objects` table; index 0 is `$null`.
    package let objects: [BinaryPropertyList.Value]
    /// The UID of the root object (`$top.root`).
    package let rootUID: Int

    /// The deepest recursive walk that callers should allow (nested expressions, collections).
    package static let maxDepth = 64

    /// Reads an archive from binary property list bytes.
    ///
    /// - Parameter data: A `bplist00` written by `NSKeyedArchiver`.
    /// - Throws: ``TernError`` with code `corruptArchive` when the bytes are not a binary
    ///   property list or not a keyed archive (missing `$archiver`, `$objects` or `$top.root`,
    ///   root out of range).
    package init(data: Data) throws {
        try self.init(propertyList: BinaryPropertyList.decode(data))
    }

    /// Reads an archive from a decoded binary property list.
    ///
    /// - Parameter propertyList: The top dictionary of the archive.
    /// - Throws: ``TernError`` with code `corruptArchive` when it is not a keyed archive.
    package init(propertyList: BinaryPropertyList.Value) throws {
        guard case .dictionary(let top) = propertyList else {
            throw TernError.corrupt("The keyed archive's top object is not a dictionary.")
        }
        guard case .string(let archiver)? = top["$archiver"], archiver == "NSKeyedArchiver" else {
            throw TernError.corrupt("The property list is not an NSKeyedArchiver archive ($archiver is missing).")
        }
        guard case .array(let objects)? = top["$objects"], !objects.isEmpty else {
            throw TernError.corrupt("The keyed archive has no $objects table.")
        }
        guard case .dictionary(let roots)? = top["$top"], case .uid(let root)? = roots["root"] else {
            throw TernError.corrupt("The keyed archive has no $top.root reference.")
        }
        guard root > 0, root < UInt64(objects.count) else {
            throw TernError.corrupt("The keyed archive's root UID \(root) is outside its \(objects.count) objects.")
        }
        self.objects = objects
        self.rootUID = Int(root)
    }

    // MARK: - Resolving references

    /// The root object.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` when the root is not an object.
    package func rootObject() throws -> ArchivedObject {
        guard case .object(let object) = try resolve(.uid(UInt64(rootUID))) else {
            throw TernError.corrupt("The keyed archive's root is not an archived object.")
        }
        return object
    }

    /// Resolves a value as stored in an object's field: a UID is looked up in `$objects`,
    /// anything else stands for itself.
    ///
    /// - Parameter value: A field value.
    /// - Returns: The value, with references turned into strings, numbers or objects.
    /// - Throws: ``TernError`` with code `corruptArchive` for a UID out of range, a reference to
    ///   a reference, or an object whose `$class` is malformed.
    package func resolve(_ value: BinaryPropertyList.Value) throws -> ArchivedValue {
        switch value {
        case .uid(let uid):
            guard uid < UInt64(objects.count) else {
                throw TernError.corrupt("The keyed archive refers to object \(uid), but has only \(objects.count).")
            }
            if uid == 0 { return .null }
            return try inline(objects[Int(uid)], uid: Int(uid))
        default:
            return try inline(value, uid: nil)
        }
    }

    // MARK: - Non public

    private func inline(_ value: BinaryPropertyList.Value, uid: Int?) throws -> ArchivedValue {
        switch value {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .date(let seconds): return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .data(let bytes): return .data(bytes)
        case .string(let text): return text == "$null" && uid != nil ? .null : .string(text)
        case .array(let elements): return .array(elements)
        case .uid:
            throw TernError.corrupt("The keyed archive's $objects table holds a bare reference.")
        case .dictionary(let fields):
            guard case .uid(let classUID)? = fields["$class"] else {
                throw TernError.corrupt("An archived object has no $class reference.")
            }
            guard classUID > 0, classUID < UInt64(objects.count),
                case .dictionary(let classInfo) = objects[Int(classUID)],
                case .string(let className)? = classInfo["$classname"]
            else {
                throw TernError.corrupt("An archived object's $class does not describe a class.")
            }
            var hierarchy = [String]()
            if case .array(let classes)? = classInfo["$classes"] {
                for case .string(let name) in classes { hierarchy.append(name) }
            }
            return .object(
                ArchivedObject(
                    archive: self, uid: uid ?? 0, className: className, classHierarchy: hierarchy, fields: fields))
        }
    }
}

/// A value read from a keyed archive after references are resolved.
package enum ArchivedValue: Sendable {
    /// `$null` or a missing value.
    case null
    /// A Boolean.
    case bool(Bool)
    /// An integer (NSNumber).
    case integer(Int64)
    /// A floating-point number (NSNumber).
    case real(Double)
    /// A date stored inline (rare; NSDate is usually an object).
    case date(Date)
    /// Bytes stored inline (NSData).
    case data(Data)
    /// A string stored inline (NSString).
    case string(String)
    /// An inline array of field values, as in `NS.objects`.
    case array([BinaryPropertyList.Value])
    /// An archived object of some class.
    case object(ArchivedObject)
}

/// One archived object: its class and its keyed fields, with accessors that resolve references
/// and unwrap Foundation's archived value classes.
package struct ArchivedObject: Sendable {
    /// The archive the object belongs to.
    package let archive: KeyedArchive
    /// The object's UID in the archive (0 for an object stored inline).
    package let uid: Int
    /// The object's class (`$classname`), such as `NSEntityDescription`.
    package let className: String
    /// The class and its superclasses (`$classes`).
    package let classHierarchy: [String]
    /// The raw fields, keyed by name, with `$class` among them.
    package let fields: [String: BinaryPropertyList.Value]

    /// Whether the object is of that class or a subclass of it.
    package func isKind(of name: String) -> Bool {
        className == name || classHierarchy.contains(name)
    }

    /// The resolved value of a field; `.null` when the field is missing.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference.
    package func value(forKey key: String) throws -> ArchivedValue {
        guard let raw = fields[key] else { return .null }
        return try archive.resolve(raw)
    }
}
