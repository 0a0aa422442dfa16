import Foundation
import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Verifying the store's contents

    /// Runs every check of ``StoreVerifier`` but SQLite's own on this store's tables: the
    /// checks every store in Core Data's layout shares (``StoreChecker``), values their
    /// attribute's type cannot read, and missing external data files.
    ///
    /// - Parameters:
    ///   - problemLimit: The most problems to keep.
    ///   - progress: Receives one unit per step (its total is set here), if given.
    /// - Returns: The problems found and the number of objects checked.
    /// - Throws: ``SQLiteError`` when a query fails.
    /// - Complexity: O(*n* log *n*) in the number of rows; memory bounded by `problemLimit`.
    func verificationReport(problemLimit: Int, progress: Progress?) throws -> StoreVerificationReport {
        let connection = connection
        let checker = StoreChecker(schema: schema, limit: problemLimit) { sql, body in
            try connection.forEachRow(sql) { row in body(row) }
        }
        return try checker.verify(progress: progress) { entity in
            try checkValues(of: entity, with: checker)
            for attribute in entity.attributes where attribute.allowsExternalStorage {
                try checkExternalData(attribute, of: entity, with: checker)
            }
        }
    }

    /// Reports the values of an entity's objects that their attribute's type cannot read, as a
    /// read of the row would find them; references to external data are checked by
    /// ``checkExternalData(_:of:with:)``.
    private func checkValues(of entity: EntityLayout, with checker: StoreChecker) throws {
        let attributes = entity.attributes
        guard !attributes.isEmpty else { return }
        let columns = SQL.joined(attributes.map { SQL.identifier($0.column) })
        let sql: SQL =
            "SELECT \"Z_PK\", \(columns) FROM \(.identifier(entity.table)) WHERE \"Z_ENT\" = \(entity.number)"
        try checker.forEach(sql) { row in
            for (index, attribute) in attributes.enumerated() {
                let value = row[index + 1]
                if attribute.allowsExternalStorage, case .blob = value { continue }
                guard (try? AttributeValue(databaseValue: value, type: attribute.type)) == nil, !value.isNull else {
                    continue
                }
                checker.add(
                    StoreProblem(
                        .unreadableValue, entityName: entity.name, primaryKey: row[0].int64,
                        propertyName: attribute.name,
                        message:
                            "\(entity.name).\(attribute.name) holds a value a \(attribute.type.xcodeName) attribute cannot read"
                    ))
            }
        }
    }

    /// Reports external binary data references whose file is missing or whose name is malformed.
    private func checkExternalData(
        _ attribute: AttributeColumn, of entity: EntityLayout, with checker: StoreChecker
    ) throws {
        let column = SQL.identifier(attribute.column)
        let sql: SQL = """
            SELECT "Z_PK", \(column) FROM \(.identifier(entity.table)) WHERE \(entity.rowFilter(includingSubentities: false)) \
            AND typeof(\(column)) = 'blob' AND substr(\(column), 1, 1) = x'02'
            """
        let folder = externalData.folder
        try checker.forEach(sql) { row in
            let bytes = row[1].data ?? Data()
            let message: String
            if let name = ExternalDataStore.fileName(in: bytes) {
                guard !FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) else { return }
                message = "the external data file \(name) of \(entity.name).\(attribute.name) is missing"
            } else {
                message = "\(entity.name).\(attribute.name) references external data by a name that is not a UUID"
            }
            checker.add(
                StoreProblem(
                    .missingExternalData, entityName: entity.name, primaryKey: row[0].int64,
                    propertyName: attribute.name,
                    message: message))
        }
    }
}
