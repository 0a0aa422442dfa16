extension StoreFetchRequest {
    /// Sorts matching rows by the request's sort descriptors, then applies its offset and limit:
    /// the last step of every store's fetch.
    ///
    /// - Parameter matches: The matching rows, in primary-key order (kept among equal keys).
    /// - Returns: The requested slice, in order.
    /// - Throws: ``TernError`` with code `invalidPredicate` for an unknown sort key path.
    /// - Complexity: O(*n* log *n*) for *n* matches.
    package func ordered<Row: PredicateEvaluable>(_ matches: [Row]) throws(TernError) -> [Row] {
        let sorted = sortDescriptors.isEmpty ? matches : try FetchSort.sorted(matches, by: sortDescriptors)
        let start = min(offset, sorted.count)
        let end = limit.map { min(start + $0, sorted.count) } ?? sorted.count
        return Array(sorted[start..<end])
    }
}
