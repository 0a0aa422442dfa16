public import Foundation

/// How fetched objects are ordered by one key path, like Core Data's `NSSortDescriptor`.
///
/// `nil` sorts before every value in ascending order, as SQLite sorts `NULL`s. Values compare as in
/// predicates (numbers across kinds, strings with Foundation's comparison); values of kinds that do
/// not compare sort by kind: numbers and dates, then strings, then data and UUIDs.
///
/// ```swift
/// let order = [FetchSort(key: "lastName", caseInsensitive: true), FetchSort(key: "age", ascending: false)]
/// let sorted = try FetchSort.sorted(people, by: order)
/// ```
///
/// ## Topics
///
/// ### Comparing
/// - ``compare(_:_:)``
/// - ``compare(_:_:by:)``
/// - ``sorted(_:by:)``
public struct FetchSort: Sendable, Hashable {
    /// The key path to sort by, such as `name` or `owner.name`.
    public var key: String
    /// Whether smaller values come first.
    public var ascending: Bool
    /// Whether strings compare without regard to case (Core Data's `caseInsensitiveCompare:`).
    public var caseInsensitive: Bool

    /// Creates a sort descriptor.
    ///
    /// - Parameters:
    ///   - key: The key path to sort by.
    ///   - ascending: Whether smaller values come first.
    ///   - caseInsensitive: Whether strings compare without regard to case.
    public init(key: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.key = key
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    // MARK: - Comparing

    /// Compares two values of the key in this descriptor's order.
    ///
    /// ```swift
    /// FetchSort(key: "age", ascending: false).compare(.integer(3), nil)  // .orderedAscending: 3 comes first
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: The first value.
    ///   - rhs: The second value.
    /// - Returns: `.orderedAscending` when `lhs` comes first.
    /// - Complexity: O(*n*) in the length of strings and data.
    public func compare(_ lhs: AttributeValue?, _ rhs: AttributeValue?) -> ComparisonResult {
        let result: ComparisonResult
        switch (Self.sortable(lhs), Self.sortable(rhs)) {
        case (nil, nil): result = .orderedSame
        case (nil, _): result = .orderedAscending
        case (_, nil): result = .orderedDescending
        case (let lhs?, let rhs?):
            if let order = lhs.compare(to: rhs, options: caseInsensitive ? .caseInsensitive : []) {
                result = order
            } else {
                result = lhs.kindRank < rhs.kindRank ? .orderedAscending : .orderedDescending
            }
        }
        guard !ascending else { return result }
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }

    /// Compares two objects by several sort descriptors: the first that tells them apart decides.
    ///
    /// - Parameters:
    ///   - lhs: The first object.
    ///   - rhs: The second object.
    ///   - descriptors: The sort descriptors, most significant first.
    /// - Returns: `.orderedAscending` when `lhs` comes first, `.orderedSame` when no descriptor tells
    ///   them apart.
    /// - Throws: Errors of the objects for unknown key paths.
    /// - Complexity: O(*k*) key path look-ups for *k* descriptors.
    public static func compare<Object: PredicateEvaluable>(
        _ lhs: Object, _ rhs: Object, by descriptors: [FetchSort]
    ) throws(TernError) -> ComparisonResult {
        for descriptor in descriptors {
            let result = descriptor.compare(try descriptor.value(of: lhs), try descriptor.value(of: rhs))
            if result != .orderedSame { return result }
        }
        return .orderedSame
    }

    /// Sorts objects by several sort descriptors, keeping the original order of objects that no
    /// descriptor tells apart.
    ///
    /// Each object's key values are read once.
    ///
    /// - Parameters:
    ///   - objects: The objects to sort.
    ///   - descriptors: The sort descriptors, most significant first.
    /// - Returns: The objects in order.
    /// - Throws: Errors of the objects for unknown key paths.
    /// - Complexity: O(*n* log *n*) comparisons and O(*n* × *k*) key path look-ups.
    public static func sorted<Objects: Sequence>(
        _ objects: Objects, by descriptors: [FetchSort]
    ) throws(TernError) -> [Objects.Element] where Objects.Element: PredicateEvaluable {
        var keyed: [(offset: Int, keys: [AttributeValue?], object: Objects.Element)] = []
        for (offset, object) in objects.enumerated() {
            var keys: [AttributeValue?] = []
            keys.reserveCapacity(descriptors.count)
            for descriptor in descriptors { keys.append(try descriptor.value(of: object)) }
            keyed.append((offset, keys, object))
        }
        keyed.sort { lhs, rhs in
            for (index, descriptor) in descriptors.enumerated() {
                switch descriptor.compare(lhs.keys[index], rhs.keys[index]) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.offset < rhs.offset
        }
        return keyed.map(\.object)
    }

    // MARK: - Non public

    /// The value as sorted: NaN sorts as `nil`, as SQLite stores it as `NULL`.
    private static func sortable(_ value: AttributeValue?) -> AttributeValue? {
        switch value {
        case .double(let number)? where number.isNaN: nil
        case .decimal(let number)? where number.isNaN: nil
        default: value
        }
    }

    /// The value to sort an object by; a to-many key path gives `nil`, as it cannot order objects.
    package func value(of object: some PredicateEvaluable) throws(TernError) -> AttributeValue? {
        guard case .single(let value) = try object.predicateValue(forKeyPath: key) else { return nil }
        return value
    }
}

extension FetchSort: CustomStringConvertible {
    /// The descriptor as text: `name ASC`, `name DESC`, with `[c]` when case-insensitive.
    public var description: String {
        key + (caseInsensitive ? "[c]" : "") + (ascending ? " ASC" : " DESC")
    }
}
