import Foundation
import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Column values and relationships of written rows

    /// The value of each attribute and to-one column of an entity for a row (NULL when absent).
    func columnValues(of row: StoreRow, layout: EntityLayout) throws -> [(column: String, value: DatabaseValue)] {
        try layout.checkKeys(of: row)
        var values: [(column: String, value: DatabaseValue)] = []
        // The store has no triggers: derived attributes are plain columns, written as given.
        for attribute in layout.attributes {
            var value = DatabaseValue.null
            if let attributeValue = row.attributes[attribute.name] {
                guard let converted = attributeValue.postgreSQLValue(for: attribute.type) else {
                    throw TernError(
                        .invalidValue,
                        "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another "
                            + "type, or is text holding a NUL character, which PostgreSQL cannot store.")
                }
                value = converted
            }
            values.append((attribute.column, value))
        }
        try schema.forEachToOneValue(of: row, layout: layout) { column, value in values.append((column, value)) }
        return values
    }
}
