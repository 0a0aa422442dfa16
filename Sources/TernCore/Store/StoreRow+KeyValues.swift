/// A row seen through key paths, for evaluating predicates and sorts in Swift.
///
/// `title` reads an attribute; `recipe.title` follows a to-one relationship through the store.
struct RowValues: KeyValueReading {
    let row: StoreRow
    let store: InMemoryStore

    func value(forKeyPath keyPath: String) -> AttributeValue? {
        var current = row
        var parts = keyPath.split(separator: ".").map(String.init)
        while parts.count > 1 {
            guard let next = current.toOne[parts.removeFirst()], let row = store.row(for: next) else { return nil }
            current = row
        }
        guard let last = parts.first else { return nil }
        return current.attributes[last]
    }
}
