import Foundation
public import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Reading history

    /// The recorded transactions a request asks for, oldest first: those Tern wrote and those
    /// Core Data wrote.
    ///
    /// Transactions are read a batch at a time in `Z_PK` order, each batch's changes with one
    /// query over `ACHANGE`'s `ZTRANSACTIONID` index, until the request's limit is reached.
    ///
    /// - Parameter request: Which transactions and changes.
    /// - Returns: The transactions, with the changes the request keeps.
    /// - Throws: ``/TernCore/TernError`` with code `historyUnavailable` when the store has no history tables,
    ///   `invalidHistoryToken` for another store's token; ``SQLiteError`` when reading fails.
    /// - Complexity: O(*t* + *c*) in the transactions and changes after the token.
    public nonisolated func fetchHistory(_ request: HistoryFetchRequest) async throws -> [HistoryTransaction] {
        // Nonisolated and async, like the protocol's default, so that calls on the concrete type
        // pick this implementation.
        try await readHistory(request)
    }

    /// The recorded transactions a request asks for (see ``fetchHistory(_:)``).
    func readHistory(_ request: HistoryFetchRequest) throws -> [HistoryTransaction] {
        try requireHistory()
        try request.token?.check(belongsTo: identifier)
        var result: [HistoryTransaction] = []
        var last = request.token?.transactionNumber ?? 0
        let batchSize = 200
        while request.fetchLimit.map({ result.count < $0 }) ?? true {
            let batch = try readTransactions(after: last, limit: batchSize)
            guard let first = batch.first, let end = batch.last else { break }
            let changes = try readChanges(from: first.token.transactionNumber, to: end.token.transactionNumber)
            for var transaction in batch {
                transaction.changes = changes[transaction.token.transactionNumber] ?? []
                guard let kept = request.filtered(transaction) else { continue }
                result.append(kept)
                if let limit = request.fetchLimit, result.count >= limit { break }
            }
            last = end.token.transactionNumber
            if batch.count < batchSize { break }
        }
        return result
    }

    /// The token of the last recorded transaction, or nil when none was recorded yet.
    ///
    /// - Throws: ``/TernCore/TernError`` with code `historyUnavailable` when the store has no history tables.
    public nonisolated func currentHistoryToken() async throws -> HistoryToken? {
        try await lastHistoryToken()
    }

    /// The token of the last recorded transaction (see ``currentHistoryToken()``).
    func lastHistoryToken() throws -> HistoryToken? {
        try requireHistory()
        // Z_MAX keeps the last number after a purge emptied the table.
        let counter =
            try connection.fetchValue(
                "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(HistoryTables.transactionEntity)")?.int64 ?? 0
        let largest = try connection.fetchValue("SELECT MAX(Z_PK) FROM ATRANSACTION")?.int64 ?? 0
        let number = max(counter, largest)
        return number == 0 ? nil : HistoryToken(storeIdentifier: identifier, transactionNumber: number)
    }

    // MARK: - Purging history

    /// Removes the recorded transactions up to and including the token's, with their changes, in
    /// one transaction. Transaction numbers are never reused, so older tokens stay valid.
    ///
    /// - Parameter token: The last transaction to remove.
    /// - Returns: How many transactions were removed.
    /// - Throws: ``/TernCore/TernError`` with code `historyUnavailable` when the store has no history tables,
    ///   `invalidHistoryToken` for another store's token; ``SQLiteError`` when the store is
    ///   read-only or the write fails.
    /// - Complexity: O(*t* + *c*) in the transactions and changes removed.
    public nonisolated func deleteHistory(before token: HistoryToken) async throws -> Int {
        try await purgeHistory(before: token)
    }

    /// Removes recorded transactions (see ``deleteHistory(before:)``).
    func purgeHistory(before token: HistoryToken) throws -> Int {
        try requireHistory()
        try token.check(belongsTo: identifier)
        try requireWritable()
        return try connection.inTransaction(.immediate) { () throws(SQLiteError) in
            try connection.execute("DELETE FROM ACHANGE WHERE ZTRANSACTIONID <= \(token.transactionNumber)")
            try connection.execute("DELETE FROM ATRANSACTION WHERE Z_PK <= \(token.transactionNumber)")
            return connection.changedRowCount
        }
    }

    // MARK: - Recording (inside a save's transaction)

    /// The rows a save is about to change, as they are: the updated rows, and the deleted rows of
    /// entities that keep tombstones.
    func rowsBeforeSave(_ changes: StoreChangeSet) throws -> [RowReference: StoreRow] {
        let tombstoned = changes.deleted.keys.filter {
            !HistoryLog.preservedAttributes(of: $0.entityName, model: model).isEmpty
        }
        let rows = try rows(for: changes.updated.map(\.reference) + tombstoned)
        return Dictionary(rows.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Writes one `ATRANSACTION` row and one `ACHANGE` row per changed row; nothing when the save
    /// changed no value.
    func recordHistory(of changes: StoreChangeSet, previous: [RowReference: StoreRow]) throws {
        var log = HistoryLog()
        log.record(changes, previous: previous, model: model, storeIdentifier: identifier)
        guard let transaction = log.transactions.first, !transaction.changes.isEmpty else { return }
        let number = try reserveHistoryKeys(HistoryTables.transactionEntity, table: "ATRANSACTION", count: 1).lowerBound
        let author = try internedString(transaction.author)
        let bundle = try internedString(transaction.bundleIdentifier)
        let contextName = try internedString(transaction.contextName)
        let process = try internedString(transaction.processName)
        try connection.execute(
            """
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZAUTHORTS, ZBUNDLEIDTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP) \
            VALUES (\(number), \(HistoryTables.transactionEntity), \(author), \(bundle), \(contextName), \(process), \
            \(transaction.timestamp.timeIntervalSinceReferenceDate))
            """)
        let keys = try reserveHistoryKeys(
            HistoryTables.changeEntity, table: "ACHANGE", count: transaction.changes.count)
        let tombstoneColumns = try connection.tombstoneColumns()
        for (key, change) in zip(keys, transaction.changes) {
            let entity = try schema.entity(named: change.objectID.entityName)
            var columns: DatabaseValue = .null
            if let properties = change.updatedProperties {
                columns = .blob(HistoryPropertyLayout(entity: entity.name, model: model).bitmap(of: properties))
            }
            var names = ["Z_PK", "Z_ENT", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZTRANSACTIONID", "ZCOLUMNS"]
            var values: [DatabaseValue] = [
                .integer(key), .integer(Int64(HistoryTables.changeEntity)), .integer(Int64(change.changeType.rawValue)),
                .integer(Int64(entity.number)), .integer(change.objectID.primaryKey ?? 0), .integer(number), columns,
            ]
            let preserved = HistoryLog.preservedAttributes(of: entity.name, model: model)
            for (index, attribute) in preserved.enumerated() where index < tombstoneColumns.count {
                guard let value = change.tombstone[attribute.name]?.databaseValue(for: attribute.type) else { continue }
                names.append(tombstoneColumns[index])
                values.append(value)
            }
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            try connection.execute(
                SQL(
                    unsafeSQL:
                        "INSERT INTO ACHANGE (\(names.map(SQL.quoted).joined(separator: ", "))) VALUES (\(placeholders))",
                    arguments: values))
        }
    }

    // MARK: - Non public

    /// Throws unless the store has history tables.
    func requireHistory() throws {
        guard recordsHistory else {
            throw TernError(
                .historyUnavailable,
                "the store does not record persistent history; open it with SQLiteConfiguration.recordsHistory "
                    + "(tern create --history) to start recording", path: url.path)
        }
    }

    /// Reserves keys for history rows from their `Z_PRIMARYKEY` row.
    private func reserveHistoryKeys(_ entity: Int, table: String, count: Int) throws(SQLiteError) -> ClosedRange<Int64>
    {
        let current = try connection.fetchValue("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(entity)")?.int64 ?? 0
        let largest = try connection.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(table))")?.int64 ?? 0
        let first = max(current, largest) + 1
        let last = first + Int64(count) - 1
        try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(last) WHERE Z_ENT = \(entity)")
        return first...last
    }

    /// The `ATRANSACTIONSTRING` key of a string, adding it when new; NULL for nil.
    private func internedString(_ string: String?) throws(SQLiteError) -> DatabaseValue {
        guard let string else { return .null }
        if let key = try connection.fetchValue("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = \(string)")?.int64 {
            return .integer(key)
        }
        let key = try reserveHistoryKeys(HistoryTables.stringEntity, table: "ATRANSACTIONSTRING", count: 1).lowerBound
        try connection.execute(
            """
            INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, ZNAME) VALUES (\(key), \(HistoryTables.stringEntity), \(string))
            """)
        return .integer(key)
    }

    /// A batch of transactions after a number, without their changes. Interned strings win over
    /// the `VARCHAR` columns, which Core Data leaves NULL.
    private func readTransactions(after number: Int64, limit: Int) throws(SQLiteError) -> [HistoryTransaction] {
        let sql: SQL = """
            SELECT t.Z_PK, t.ZTIMESTAMP, COALESCE(a.ZNAME, t.ZAUTHOR), COALESCE(b.ZNAME, t.ZBUNDLEID), \
            COALESCE(c.ZNAME, t.ZCONTEXTNAME), COALESCE(p.ZNAME, t.ZPROCESSID) FROM ATRANSACTION t \
            LEFT JOIN ATRANSACTIONSTRING a ON a.Z_PK = t.ZAUTHORTS LEFT JOIN ATRANSACTIONSTRING b ON b.Z_PK = t.ZBUNDLEIDTS \
            LEFT JOIN ATRANSACTIONSTRING c ON c.Z_PK = t.ZCONTEXTNAMETS LEFT JOIN ATRANSACTIONSTRING p ON p.Z_PK = t.ZPROCESSIDTS \
            WHERE t.Z_PK > \(number) ORDER BY t.Z_PK LIMIT \(limit)
            """
        return try connection.fetchAll(sql).map { row in
            HistoryTransaction(
                token: HistoryToken(storeIdentifier: identifier, transactionNumber: row[0].int64 ?? 0),
                timestamp: Date(timeIntervalSinceReferenceDate: row[1].double ?? 0),
                author: row[2].string, contextName: row[4].string, bundleIdentifier: row[3].string,
                processName: row[5].string)
        }
    }

    /// The changes of a range of transactions, by transaction number, in recording order.
    private func readChanges(from first: Int64, to last: Int64) throws -> [Int64: [HistoryChange]] {
        let tombstoneColumns = try connection.tombstoneColumns()
        let selected = ["ZTRANSACTIONID", "ZCHANGETYPE", "ZENTITY", "ZENTITYPK", "ZCOLUMNS"] + tombstoneColumns
        let sql = SQL(
            unsafeSQL: "SELECT \(selected.map(SQL.quoted).joined(separator: ", ")) FROM ACHANGE "
                + "WHERE ZTRANSACTIONID BETWEEN ? AND ? ORDER BY ZTRANSACTIONID, Z_PK",
            arguments: [.integer(first), .integer(last)])
        var result: [Int64: [HistoryChange]] = [:]
        var layouts: [String: HistoryPropertyLayout] = [:]
        try connection.forEachRow(sql) { (row) throws(SQLiteError) in
            guard let transaction = row[0].int64,
                let type = row[1].int64.flatMap({ HistoryChange.ChangeType(rawValue: Int($0)) }),
                let number = row[2].int64, let name = schema.entityNames[Int(number)]
            else { return }
            var change = HistoryChange(
                objectID: ObjectID(entityName: name, storeIdentifier: identifier, primaryKey: row[3].int64 ?? 0),
                changeType: type)
            if type == .update, let bitmap = row[4].data, model.entity(named: name) != nil {
                let layout = layouts[name] ?? HistoryPropertyLayout(entity: name, model: model)
                layouts[name] = layout
                change.updatedProperties = layout.properties(in: bitmap)
            }
            if type == .delete {
                for (index, attribute) in HistoryLog.preservedAttributes(of: name, model: model).enumerated()
                where index < tombstoneColumns.count {
                    // A value its type cannot read is left out rather than failing the whole read.
                    if let value = try? AttributeValue(databaseValue: row[5 + index], type: attribute.type) {
                        change.tombstone[attribute.name] = value
                    }
                }
            }
            result[transaction, default: []].append(change)
        }
        return result
    }
}
