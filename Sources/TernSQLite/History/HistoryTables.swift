import Foundation
import TernCore
import TernRelational

/// Core Data's persistent-history tables, as `NSPersistentHistoryTrackingKey` creates them.
///
/// Three tables registered in `Z_PRIMARYKEY` under fixed entity numbers: `ACHANGE` (16001
/// `CHANGE`), `ATRANSACTION` (16002 `TRANSACTION`), `ATRANSACTIONSTRING` (16003
/// `TRANSACTIONSTRING`). The statements are byte for byte those of a store Core Data wrote
/// (CoreDataPlus `SampleModel2_V1.sqlite`). Rows carry their entity number in `Z_ENT` and a NULL
/// `Z_OPT`, as Core Data's do.
///
/// What the columns hold (see docs/History.md for the evidence):
/// - `ATRANSACTION.Z…TS` point into `ATRANSACTIONSTRING` (interned author, bundle identifier,
///   context name, process name); the `VARCHAR` twins stay NULL. `ZTIMESTAMP` is seconds since
///   2001-01-01 UTC.
/// - `ACHANGE.ZCHANGETYPE` 0 insert, 1 update, 2 delete; `ZENTITY`/`ZENTITYPK` the row's
///   `Z_ENT`/`Z_PK`; `ZTRANSACTIONID` the transaction's `Z_PK`; `ZCOLUMNS` for an update a bitmap
///   of the changed properties (see ``HistoryPropertyLayout``); `ZTOMBSTONE<n>` for a delete the
///   value of the *n*-th preserved attribute.
enum HistoryTables {
    /// `Z_ENT` of `ACHANGE` rows.
    static let changeEntity = 16001
    /// `Z_ENT` of `ATRANSACTION` rows.
    static let transactionEntity = 16002
    /// `Z_ENT` of `ATRANSACTIONSTRING` rows.
    static let stringEntity = 16003

    /// The statements that create the tables and indexes, in Core Data's order.
    static let creationStatements: [SQL] = [
        "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
        "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
    ]

    /// The `Z_PRIMARYKEY` rows of the history entities.
    static let primaryKeyRows: [(number: Int, name: String)] = [
        (changeEntity, "CHANGE"), (transactionEntity, "TRANSACTION"), (stringEntity, "TRANSACTIONSTRING"),
    ]

    /// The name of the tombstone column for the preserved attribute at an index.
    static func tombstoneColumn(_ index: Int) -> String { "ZTOMBSTONE\(index)" }

    /// How many tombstone columns a model needs: its largest number of preserved attributes.
    static func tombstoneCount(for model: ManagedObjectModel) -> Int {
        model.entities.map { HistoryLog.preservedAttributes(of: $0.name, model: model).count }.max() ?? 0
    }
}

/// How `ACHANGE` numbers an entity's properties: the entity's stored attributes and its
/// relationships (own and inherited) in one list sorted by name. Bit *i* of `ZCOLUMNS`, read most
/// significant bit first (bit 0 is `0x80` of the first byte), stands for the *i*-th name.
struct HistoryPropertyLayout {
    /// The property names, in bit order.
    let names: [String]

    /// The layout of an entity of a model.
    init(entity: String, model: ManagedObjectModel) {
        let attributes = model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name)
        names = (attributes + model.allRelationships(of: entity).map(\.name)).sorted()
    }

    /// The bitmap of a set of property names; unknown names are left out.
    func bitmap(of properties: Set<String>) -> Data {
        var bytes = [UInt8](repeating: 0, count: (names.count + 7) / 8)
        for (index, name) in names.enumerated() where properties.contains(name) {
            bytes[index / 8] |= 0x80 >> UInt8(index % 8)
        }
        return Data(bytes)
    }

    /// The property names a bitmap stands for, or nil when it names a property the model lacks.
    func properties(in bitmap: Data) -> Set<String>? {
        var result: Set<String> = []
        for (byteIndex, byte) in bitmap.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (0x80 >> UInt8(bit)) != 0 {
                let index = byteIndex * 8 + bit
                guard index < names.count else { return nil }
                result.insert(names[index])
            }
        }
        return result
    }
}

extension Connection {
    // MARK: - History tables

    /// Whether the store has Core Data's history tables.
    func hasHistoryTables() throws(SQLiteError) -> Bool {
        let count =
            try fetchValue(
                """
                SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING')
                """)?.int64 ?? 0
        return count == 3
    }

    /// Creates the history tables and their `Z_PRIMARYKEY` rows when missing, and adds the
    /// tombstone columns the model needs, in one transaction.
    ///
    /// - Parameter model: The store's model.
    /// - Throws: ``SQLiteError`` when a statement fails; nothing is changed then.
    func prepareHistoryTables(for model: ManagedObjectModel) throws(SQLiteError) {
        // Opening a complete store writes nothing (and takes no write lock).
        if try hasHistoryTables(), try tombstoneColumns().count >= HistoryTables.tombstoneCount(for: model) {
            let registered = try fetchValue("SELECT COUNT(*) FROM Z_PRIMARYKEY WHERE Z_ENT IN (16001, 16002, 16003)")
            if registered?.int64 == 3 { return }
        }
        try inTransaction(.immediate) { () throws(SQLiteError) in
            if try !hasHistoryTables() {
                for statement in HistoryTables.creationStatements { try executeOnce(statement) }
            }
            for (number, name) in HistoryTables.primaryKeyRows {
                try execute(
                    """
                    INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) SELECT \(number), \(name), 0, 0 \
                    WHERE NOT EXISTS (SELECT 1 FROM Z_PRIMARYKEY WHERE Z_ENT = \(number))
                    """)
            }
            let existing = try tombstoneColumns()
            for index in existing.count..<max(existing.count, HistoryTables.tombstoneCount(for: model)) {
                try executeOnce(
                    "ALTER TABLE ACHANGE ADD COLUMN \(.identifier(HistoryTables.tombstoneColumn(index))) BLOB")
            }
        }
        clearStatementCache()
    }

    /// Starts the history of a store rebuilt by a migration: empty history tables whose
    /// transaction numbers continue after the source's last one, so that tokens handed out before
    /// the migration stay ordered before every later transaction.
    ///
    /// - Parameters:
    ///   - token: The source store's last transaction, if any.
    ///   - model: The rebuilt store's model.
    func continueHistory(after token: HistoryToken?, for model: ManagedObjectModel) throws(SQLiteError) {
        try prepareHistoryTables(for: model)
        if let token {
            try execute(
                """
                UPDATE Z_PRIMARYKEY SET Z_MAX = \(token.transactionNumber) WHERE Z_ENT = \(HistoryTables.transactionEntity)
                """)
        }
    }

    /// The `ZTOMBSTONE<n>` columns of `ACHANGE`, in index order.
    func tombstoneColumns() throws(SQLiteError) -> [String] {
        let columns = Set(try fetchAll("SELECT name FROM pragma_table_info('ACHANGE')").compactMap { $0.first?.string })
        var result: [String] = []
        while columns.contains(HistoryTables.tombstoneColumn(result.count)) {
            result.append(HistoryTables.tombstoneColumn(result.count))
        }
        return result
    }
}
