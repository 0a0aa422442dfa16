package import TernCore

extension EntityLayout {
    /// Throws for a key of a row to write that names no stored attribute or to-one relationship
    /// of this entity.
    ///
    /// - Parameters:
    ///   - row: The row to write.
    ///   - matchedAttributes: How many of the row's attribute keys the caller matched with an
    ///     attribute already; nil to check them all.
    /// - Throws: `TernError` with code `invalidValue` naming the first unknown key.
    /// - Complexity: O(*k*) for *k* keys; O(*k* log *k*) when an attribute key is unknown.
    package func checkKeys(of row: StoreRow, matchedAttributes: Int? = nil) throws(TernError) {
        // Every key of the row matched an attribute, unless some did not: name the first.
        if matchedAttributes != row.attributes.count,
            let name = row.attributes.keys.sorted().first(where: { attribute(named: $0) == nil })
        {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(self.name)) has no stored attribute \(SQL.quoted(name)).")
        }
        for name in row.toOne.keys where toOne(named: name) == nil {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(self.name)) has no to-one relationship \(SQL.quoted(name)).")
        }
    }
}
