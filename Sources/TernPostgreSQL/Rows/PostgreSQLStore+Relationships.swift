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
            values.append(
                (attribute.column, try storedValue(row.attributes[attribute.name], of: attribute, in: layout)))
        }
        try schema.forEachToOneValue(of: row, layout: layout) { column, value in values.append((column, value)) }
        return values
    }

    /// An attribute value as its column stores it; NULL for nil.
    ///
    /// - Throws: ``/TernCore/TernError`` with code `invalidValue` when the value does not fit the attribute.
    func storedValue(_ value: AttributeValue?, of attribute: AttributeColumn, in layout: EntityLayout) throws(TernError)
        -> DatabaseValue
    {
        guard let value else { return .null }
        guard let converted = value.postgreSQLValue(for: attribute.type) else {
            throw TernError(
                .invalidValue,
                "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another "
                    + "type, or is text holding a NUL character, which PostgreSQL cannot store.")
        }
        return converted
    }
}
