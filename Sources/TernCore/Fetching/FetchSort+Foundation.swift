public import Foundation

extension FetchSort {
    // MARK: - Converting typed sort descriptors

    /// Converts a Foundation sort descriptor over one property into a fetch sort descriptor.
    ///
    /// The key path must name one property: `\Recipe.title`, not `\Ingredient.recipe?.title`
    /// (write ``FetchSort/init(key:ascending:caseInsensitive:)`` with `"recipe.title"` for that).
    /// `.forward` is ascending. Strings compare as ``FetchSort`` compares them, with no string
    /// comparator (a `Comparable` key path, as `SortDescriptor(\.title)` is on Linux) or with
    /// `.lexical`; localized comparators (the default of Apple's Foundation for string key paths)
    /// have no store equivalent and are refused.
    ///
    /// ```swift
    /// let sort = try FetchSort(SortDescriptor(\Person.name, order: .reverse))   // name DESC
    /// ```
    ///
    /// - Parameters:
    ///   - descriptor: The sort descriptor.
    ///   - keyPathName: The key of a property's key path; return `nil` to use the property's
    ///     name, read from the key path's description.
    /// - Throws: ``TernError/Code/unsupported`` for a descriptor without a key path, a key path
    ///   whose name cannot be known, and string comparators other than `.lexical` (stores have no
    ///   localized comparison).
    public init<Compared>(
        _ descriptor: SortDescriptor<Compared>, keyPathName: (AnyKeyPath) -> String? = { _ in nil }
    ) throws(TernError) {
        self = try TypedPredicateContext.resolving(with: keyPathName) { resolver throws(TernError) in
            try FetchSort(descriptor, resolvingKeyPaths: resolver)
        }
    }

    /// Converts a sort descriptor, naming its key path with a resolver that may refuse it.
    init<Compared>(
        _ descriptor: SortDescriptor<Compared>, resolvingKeyPaths resolver: (AnyKeyPath) throws(TernError) -> String?
    ) throws(TernError) {
        guard let keyPath = descriptor.keyPath else {
            throw TernError(
                .unsupported, "a sort descriptor without a key path cannot run in a store; sort by a property")
        }
        let key = try withoutActuallyEscaping(resolver) { resolver throws(TernError) in
            try TypedPredicateContext(keyPathName: resolver).name(of: keyPath)
        }
        if var comparator = descriptor.stringComparator {
            comparator.order = .forward
            guard comparator == .lexical else {
                throw TernError(
                    .unsupported,
                    "the sort by \(key) uses a localized string comparison, which stores cannot run; "
                        + "use the .lexical comparator (SortDescriptor(\\.\(key), comparator: .lexical)), or FetchSort "
                        + "with caseInsensitive for a sort without regard to case",
                    property: key)
            }
        }
        self.init(key: key, ascending: descriptor.order == .forward)
    }
}
