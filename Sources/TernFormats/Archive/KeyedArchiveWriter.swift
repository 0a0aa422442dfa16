package import Foundation

/// Builds an `NSKeyedArchiver` archive: an `$objects` table of objects that refer to one
/// another by UID, written as a binary property list.
///
/// Objects that refer to each other in a cycle are written by reserving a UID first and
/// filling it in later.
///
/// ```swift
/// var writer = KeyedArchiveWriter()
/// let name = writer.string("Recipe")
/// let root = writer.object(["NSEntityDescription", "NSObject"], fields: ["NSEntityName": name])
/// let bytes = writer.archive(root: root)
/// ```
package struct KeyedArchiveWriter {
    private var objects: [BinaryPropertyList.Value] = [.string("$null")]
    private var classes: [String: BinaryPropertyList.Value] = [:]
    private var strings: [String: BinaryPropertyList.Value] = [:]

    /// The reference to `$null`.
    package static let null = BinaryPropertyList.Value.uid(0)

    /// Creates an empty archive.
    package init() {}

    // MARK: - Adding objects

    /// Reserves a UID for an object that ``fill(_:classes:fields:)`` describes later.
    package mutating func reserve() -> BinaryPropertyList.Value {
        objects.append(.string("$null"))
        return .uid(UInt64(objects.count - 1))
    }

    /// Describes a reserved object.
    ///
    /// - Parameters:
    ///   - reference: A UID from ``reserve()``.
    ///   - classes: The object's class followed by its superclasses, ending with `NSObject`.
    ///   - fields: The object's keyed fields: UIDs, or inline numbers and Booleans.
    /// - Precondition: `reference` is a UID this writer reserved.
    package mutating func fill(
        _ reference: BinaryPropertyList.Value, classes: [String], fields: [String: BinaryPropertyList.Value]
    ) {
        guard case .uid(let uid) = reference, uid > 0, uid < UInt64(objects.count) else {
            preconditionFailure("not a UID reserved by this writer")
        }
        var fields = fields
        fields["$class"] = classReference(classes)
        objects[Int(uid)] = .dictionary(fields)
    }

    /// Adds an object and returns its UID.
    ///
    /// - Parameters:
    ///   - classes: The object's class followed by its superclasses, ending with `NSObject`.
    ///   - fields: The object's keyed fields.
    package mutating func object(_ classes: [String], fields: [String: BinaryPropertyList.Value])
        -> BinaryPropertyList.Value
    {
        let reference = reserve()
        fill(reference, classes: classes, fields: fields)
        return reference
    }

    /// Adds a string (shared with equal strings) and returns its UID; nil becomes `$null`.
    package mutating func string(_ text: String?) -> BinaryPropertyList.Value {
        guard let text else { return Self.null }
        if let reference = strings[text] { return reference }
        objects.append(.string(text))
        let reference = BinaryPropertyList.Value.uid(UInt64(objects.count - 1))
        strings[text] = reference
        return reference
    }

    /// Adds a plain value (a number, Boolean, data or date) stored in `$objects`, and returns its UID.
    package mutating func value(_ value: BinaryPropertyList.Value) -> BinaryPropertyList.Value {
        objects.append(value)
        return .uid(UInt64(objects.count - 1))
    }

    /// Adds an `NSArray` (or `NSSet`, `NSMutableArray`…, by `classes`) of references.
    package mutating func array(
        _ elements: [BinaryPropertyList.Value], classes: [String] = ["NSArray", "NSObject"]
    ) -> BinaryPropertyList.Value {
        object(classes, fields: ["NS.objects": .array(elements)])
    }

    /// Adds an `NSDictionary` (or `NSMutableDictionary`, by `classes`) with string keys.
    package mutating func dictionary(
        _ entries: [(key: String, value: BinaryPropertyList.Value)], classes: [String] = ["NSDictionary", "NSObject"]
    ) -> BinaryPropertyList.Value {
        let keys = entries.map { string($0.key) }
        return object(classes, fields: ["NS.keys": .array(keys), "NS.objects": .array(entries.map(\.value))])
    }

    // MARK: - Writing

    /// The archive's binary property list.
    ///
    /// - Parameter root: The root object's UID (`$top.root`).
    /// - Complexity: O(*n*) in the number of objects.
    package func archive(root: BinaryPropertyList.Value) -> Data {
        BinaryPropertyList.encode(
            .dictionary([
                "$archiver": .string("NSKeyedArchiver"),
                "$version": .integer(100_000),
                "$top": .dictionary(["root": root]),
                "$objects": .array(objects),
            ]))
    }

    // MARK: - Non public

    private mutating func classReference(_ hierarchy: [String]) -> BinaryPropertyList.Value {
        let name = hierarchy.first ?? "NSObject"
        if let reference = classes[name] { return reference }
        objects.append(.dictionary(["$classname": .string(name), "$classes": .array(hierarchy.map { .string($0) })]))
        let reference = BinaryPropertyList.Value.uid(UInt64(objects.count - 1))
        classes[name] = reference
        return reference
    }
}
