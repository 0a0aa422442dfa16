import Synchronization

/// The attribute names of an entity in a fixed order, with the position of each: the keys that
/// every ``PackedAttributes`` of the entity shares.
///
/// The order is the model's: ``ManagedObjectModel/allAttributes(of:)``, own and inherited,
/// transient ones included, sorted by name. A store that reads rows straight into packed values
/// (SQLite) uses the same order, so a context adopts them without copying.
package final class AttributeKeys: Sendable {
    /// The attribute names, in order.
    package let names: [String]
    /// The position of each name in ``names``.
    private let positions: [String: Int]
    /// The two words of each name in ``names``, which ``position(of:)`` compares first: a name
    /// given as a literal is usually stored exactly as the model's (short names are stored
    /// inline), and equal words mean equal strings.
    private let words: [NameWords]

    /// Creates the keys of a list of names: only ``shared(names:)`` does, so that every instance
    /// lives as long as the process.
    ///
    /// - Parameter names: Distinct attribute names, in order.
    private init(names: [String]) {
        self.names = names
        self.positions = Dictionary(names.enumerated().map { ($0.element, $0.offset) }) { first, _ in first }
        self.words = names.map(NameWords.init)
    }

    /// The one instance of the keys of a list of names, shared by every store and context of the
    /// process: rows a store packs then carry the very keys of the context's objects, so that
    /// matching them is one identity check per row, not a comparison of every name.
    ///
    /// The instances are never freed, so values that name their keys hold them without counting
    /// references (``PackedAttributes/keys``): a store's thread packing rows and a context's
    /// thread reading objects would otherwise both write the one reference count of the keys,
    /// for every row.
    ///
    /// - Parameter names: Distinct attribute names, in order.
    /// - Complexity: O(*a*) in the number of names; the instances made are kept for the process.
    package static func shared(names: [String]) -> AttributeKeys {
        sharedKeys.withLock { keys in
            if let found = keys[names] { return found }
            let made = AttributeKeys(names: names)
            keys[names] = made
            return made
        }
    }

    /// The instances ``shared(names:)`` made, by names: one per entity attribute list used.
    private static let sharedKeys = Mutex<[[String]: AttributeKeys]>([:])

    /// The position of an attribute, or nil when the entity has no attribute of that name.
    ///
    /// - Complexity: O(1) on average.
    package func position(of name: String) -> Int? {
        // Comparing a few short names costs less than hashing one.
        guard names.count <= Self.scannedCount else { return positions[name] }
        let wanted = NameWords(name)
        if wanted.isComparable {
            for index in words.indices where words[index] == wanted { return index }
        }
        // Names of another length are skipped without a string comparison.
        let length = name.utf8.count
        for index in names.indices where names[index].utf8.count == length && names[index] == name { return index }
        return nil
    }

    /// Up to how many names ``position(of:)`` compares names one by one instead of hashing.
    private static let scannedCount = 8

    /// Whether two sets of keys list the same names in the same order: the same instance, since
    /// ``shared(names:)`` makes one per list of names.
    func matches(_ other: AttributeKeys) -> Bool {
        self === other
    }
}

/// The two machine words a `String` is made of: equal words are equal strings (the same
/// inline characters, or the same storage); different words may still be equal strings.
private struct NameWords: Equatable {
    let first: UInt64
    let second: UInt64
    /// Whether the words stand for the string (64-bit platforms); else no words are compared.
    let isComparable: Bool

    init(_ name: String) {
        #if _pointerBitWidth(_64)
        // Safe: a 64-bit String is two words; their bits are copied, never used as a reference,
        // and the names compared with are kept alive by the keys.
        (first, second) = unsafeBitCast(name, to: (UInt64, UInt64).self)
        isComparable = true
        #else
        (first, second, isComparable) = (0, 0, false)
        #endif
    }
}

/// The attribute values of one object, one slot per attribute of its entity in the order of its
/// ``AttributeKeys``: what objects, their snapshots and the rows a context reads keep, instead of
/// a dictionary per object.
///
/// An empty ``values`` slice stands for "every value nil", so a fault costs no allocation; a
/// shorter slice leaves the missing slots nil.
///
/// The values are a slice, so that the rows of a page share one buffer (``init(keys:slice:)``):
/// one allocation per page, not per row. Changing a value copies the object's own slots only.
package struct PackedAttributes: Sendable {
    /// The entity's attribute names and their positions.
    // Unowned(unsafe): keys are made by `AttributeKeys.shared(names:)` alone, which keeps every
    // instance for the process, so the reference never dangles; not counting it spares two
    // threads writing one reference count for every row (see `AttributeKeys.shared(names:)`).
    package unowned(unsafe) let keys: AttributeKeys
    /// The values by position from ``ArraySlice/startIndex``; missing slots are nil.
    package private(set) var values: ArraySlice<AttributeValue?>

    /// Attributes with every value nil.
    ///
    /// - Parameter keys: The entity's keys.
    package init(keys: AttributeKeys) {
        self.keys = keys
        self.values = []
    }

    /// Attributes with their values in the order of `keys`.
    ///
    /// - Parameters:
    ///   - keys: The entity's keys.
    ///   - values: The values by position, at most one per key.
    package init(keys: AttributeKeys, values: [AttributeValue?]) {
        precondition(values.count <= keys.names.count, "more values than attributes")
        self.keys = keys
        self.values = values[...]
    }

    /// Attributes whose values are part of a larger buffer, such as the values of a whole page
    /// of rows: the attributes share the buffer until one of their values changes.
    ///
    /// - Parameters:
    ///   - keys: The entity's keys.
    ///   - slice: The values by position, at most one per key.
    package init(keys: AttributeKeys, slice: ArraySlice<AttributeValue?>) {
        precondition(slice.count <= keys.names.count, "more values than attributes")
        self.keys = keys
        self.values = slice
    }

    /// Attributes taken from a dictionary; names the keys do not list are left out.
    ///
    /// - Parameters:
    ///   - keys: The entity's keys.
    ///   - dictionary: Non-nil values by attribute name.
    /// - Complexity: O(*a*) in the number of attributes.
    package init(keys: AttributeKeys, dictionary: [String: AttributeValue]) {
        self.keys = keys
        self.values = []
        guard !dictionary.isEmpty else { return }
        values = keys.names.map { dictionary[$0] }[...]
    }

    /// The value of an attribute by name: nil when it is nil or the entity has no such attribute.
    ///
    /// Setting the value of an unknown name is a programmer error.
    package subscript(name: String) -> AttributeValue? {
        get { keys.position(of: name).flatMap { self[position: $0] } }
        set {
            guard let position = keys.position(of: name) else {
                preconditionFailure("no attribute \(name) among \(keys.names)")
            }
            self[position: position] = newValue
        }
    }

    /// The value at a position of the keys.
    package subscript(position position: Int) -> AttributeValue? {
        @inline(__always) get { position < values.count ? values[values.startIndex + position] : nil }
        set {
            if position >= values.count {
                guard newValue != nil else { return }
                values += repeatElement(nil, count: keys.names.count - values.count)
            }
            values[values.startIndex + position] = newValue
        }
    }

    /// Whether every value is nil.
    package var isEmpty: Bool { !values.contains { $0 != nil } }

    /// The non-nil values by attribute name.
    ///
    /// - Complexity: O(*a*) in the number of attributes.
    package var dictionary: [String: AttributeValue] {
        var dictionary = [String: AttributeValue](minimumCapacity: values.count)
        for (position, value) in values.enumerated() {
            if let value { dictionary[keys.names[position]] = value }
        }
        return dictionary
    }

    /// The same values with the slots at `positions` set to nil.
    func clearing(_ positions: [Int]) -> PackedAttributes {
        var copy = self
        for position in positions where copy[position: position] != nil {
            copy[position: position] = nil
        }
        return copy
    }
}

extension PackedAttributes: Hashable {
    /// Whether both hold the same names with the same values (missing slots count as nil).
    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.keys.matches(rhs.keys) else { return lhs.dictionary == rhs.dictionary }
        if lhs.values.count == rhs.values.count { return lhs.values.elementsEqual(rhs.values) }
        for position in 0..<max(lhs.values.count, rhs.values.count)
        where lhs[position: position] != rhs[position: position] {
            return false
        }
        return true
    }

    /// Hashes the non-nil values with their names, in no particular order (as a dictionary).
    package func hash(into hasher: inout Hasher) {
        var sum = 0
        for (position, value) in values.enumerated() {
            if let value {
                var entry = Hasher()
                entry.combine(keys.names[position])
                entry.combine(value)
                sum &+= entry.finalize()
            }
        }
        hasher.combine(sum)
    }
}
