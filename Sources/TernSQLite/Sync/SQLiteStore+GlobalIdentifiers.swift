public import Foundation
public import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Global identities

    /// The global identity of a row, when the store tracks them.
    ///
    /// - Parameter reference: A row of this store, present or deleted.
    /// - Returns: Its identity, or nil when the row has none.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    public func globalIdentity(of reference: RowReference) throws -> GlobalIdentity? {
        try requireGlobalIdentifiers()
        let entity = try schema.entity(named: reference.entityName)
        let row = try connection.fetchOne(
            """
            SELECT ZUUID, ZDELETED FROM TERNSYNC_OBJECT WHERE ZENTITY = \(entity.number) AND ZENTITYPK = \(reference.primaryKey)
            """)
        guard let row, let identifier = Self.uuid(from: row[0]) else { return nil }
        return GlobalIdentity(identifier: identifier, reference: reference, isDeleted: row[1].int64 == 1)
    }

    /// The row that has a global identifier in this store, if any.
    ///
    /// - Parameter identifier: An object's UUID.
    /// - Returns: Its identity here, or nil when no object of this store has it.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    public func globalIdentity(withIdentifier identifier: UUID) throws -> GlobalIdentity? {
        try requireGlobalIdentifiers()
        let row = try connection.fetchOne(
            """
            SELECT ZENTITY, ZENTITYPK, ZDELETED FROM TERNSYNC_OBJECT WHERE ZUUID = \(Self.bytes(of: identifier))
            """)
        guard let row, let number = row[0].int64, let key = row[1].int64 else { return nil }
        let entity = try schema.entity(number: Int(number))
        return GlobalIdentity(
            identifier: identifier, reference: RowReference(entityName: entity.name, primaryKey: key),
            isDeleted: row[2].int64 == 1)
    }

    /// The live objects of exactly one entity (not its subentities), in the order of their global
    /// identifiers, a page at a time: the stable order every device shares (docs/Export.md,
    /// `tern export --global-ids`).
    ///
    /// - Parameters:
    ///   - entity: The entity's name.
    ///   - identifier: The last identifier of the previous page, or nil for the first page.
    ///   - limit: The page size.
    ///   - deleted: Lists the identities of deleted objects instead of live ones.
    /// - Returns: Up to `limit` identities, ordered by identifier (as upper-case text).
    /// - Throws: ``SQLiteError`` when the store does not track global identities, the entity is
    ///   unknown, or the store cannot be read.
    /// - Complexity: O(*limit* log *n*) through the identifiers' index.
    public func globalIdentities(
        ofEntity entity: String, after identifier: UUID?, limit: Int, deleted: Bool
    ) throws -> [GlobalIdentity] {
        try requireGlobalIdentifiers()
        let layout = try schema.entity(named: entity)
        let start = identifier.map { Self.bytes(of: $0) } ?? .blob(Data())
        return try connection.fetchAll(
            """
            SELECT ZUUID, ZENTITYPK FROM TERNSYNC_OBJECT WHERE ZENTITY = \(layout.number) AND ZDELETED = \(deleted ? 1 : 0) \
            AND ZUUID > \(start) ORDER BY ZUUID LIMIT \(Int64(limit))
            """
        ).compactMap { row in
            guard let uuid = Self.uuid(from: row[0]), let key = row[1].int64 else { return nil }
            return GlobalIdentity(
                identifier: uuid, reference: RowReference(entityName: entity, primaryKey: key), isDeleted: deleted)
        }
    }

    /// Forgets the identities of deleted objects, once their deletes reached the server (sync
    /// purges them after a push that left nothing unpushed).
    ///
    /// - Returns: How many identities went.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be written.
    /// - Complexity: O(*d*) for *d* deleted objects.
    public func removeDeletedGlobalIdentities() throws -> Int {
        try requireWritable()
        try requireGlobalIdentifiers()
        return try connection.inTransaction(.immediate) { () throws in
            try connection.execute("DELETE FROM TERNSYNC_OBJECT WHERE ZDELETED = 1")
            return connection.changedRowCount
        }
    }

    // MARK: - Recording (inside a save's transaction)

    /// Gives each inserted row a new identity and marks deleted rows' identities deleted.
    func recordGlobalIdentifiers(of changes: StoreChangeSet, given identifiers: [RowReference: UUID]) throws {
        for row in changes.inserted {
            let entity = try schema.entity(named: row.reference.entityName)
            try connection.execute(
                """
                INSERT INTO TERNSYNC_OBJECT (ZENTITY, ZENTITYPK, ZUUID) \
                VALUES (\(entity.number), \(row.reference.primaryKey), \(Self.bytes(of: identifiers[row.reference] ?? UUID())))
                """)
        }
        for reference in changes.deleted.keys {
            let entity = try schema.entity(named: reference.entityName)
            try connection.execute(
                """
                UPDATE TERNSYNC_OBJECT SET ZDELETED = 1 WHERE ZENTITY = \(entity.number) AND ZENTITYPK = \(reference.primaryKey)
                """)
        }
    }

    // MARK: - Non public

    /// Creates the identity table when the store tracks identities, gives every object without an
    /// identity one (a batch at a time), and tells whether the store tracks identities.
    static func prepareGlobalIdentifiers(
        _ connection: Connection, schema: StoreSchema, configuration: SQLiteConfiguration
    ) throws -> Bool {
        let exists =
            try connection.fetchValue(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'TERNSYNC_OBJECT'")?.int64 == 1
        guard !configuration.isReadOnly, configuration.tracksGlobalIdentifiers || exists else { return exists }
        let tables = schema.tables.values.sorted { $0.name < $1.name }
        // Opening a store whose objects all have identities writes nothing (and takes no write lock).
        if exists {
            var isComplete = true
            for table in tables where try needsIdentities(table, schema: schema, connection) { isComplete = false }
            if isComplete { return true }
        }
        try connection.inTransaction(.immediate) { () throws in
            try connection.execute(Connection.globalIdentityTable)
            for table in tables where try needsIdentities(table, schema: schema, connection) {
                try backfillIdentities(of: table, schema: schema, connection: connection)
            }
        }
        return true
    }

    /// Whether some rows of a table have no identity (two counts).
    private static func needsIdentities(
        _ table: TableLayout, schema: StoreSchema, _ connection: Connection
    ) throws -> Bool {
        let entity = entityNumber(ofRowsOf: table, schema: schema)
        let rows = try connection.fetchValue("SELECT COUNT(*) FROM \(.identifier(table.name))")?.int64 ?? 0
        let identities =
            try connection.fetchValue(
                """
                SELECT COUNT(*) FROM TERNSYNC_OBJECT o JOIN \(.identifier(table.name)) t \
                ON t.Z_PK = o.ZENTITYPK AND \(entity) = o.ZENTITY WHERE o.ZDELETED = 0
                """)?.int64 ?? 0
        return identities < rows
    }

    /// The entity number of a row of a table, alias `t`: `t.Z_ENT`, or the root's number for a
    /// table that is its root's alone (``EntityLayout/rowEntityNumber(alias:)``).
    private static func entityNumber(ofRowsOf table: TableLayout, schema: StoreSchema) -> SQL {
        schema.entities[table.rootEntity]?.rowEntityNumber(alias: "t") ?? "t.Z_ENT"
    }

    /// Gives the rows of a table that have no identity one, a batch at a time.
    private static func backfillIdentities(
        of table: TableLayout, schema: StoreSchema, connection: Connection
    ) throws {
        let entity = entityNumber(ofRowsOf: table, schema: schema)
        var last: Int64 = 0
        while true {
            let batch = try connection.fetchAll(
                """
                SELECT \(entity), t.Z_PK FROM \(.identifier(table.name)) t WHERE t.Z_PK > \(last) AND NOT EXISTS \
                (SELECT 1 FROM TERNSYNC_OBJECT o WHERE o.ZENTITY = \(entity) AND o.ZENTITYPK = t.Z_PK) ORDER BY t.Z_PK LIMIT 500
                """)
            for row in batch {
                try connection.execute(
                    """
                    INSERT INTO TERNSYNC_OBJECT (ZENTITY, ZENTITYPK, ZUUID) VALUES (\(row[0]), \(row[1]), \(bytes(of: UUID())))
                    """)
            }
            guard batch.count == 500, let key = batch.last?[1].int64 else { return }
            last = key
        }
    }

    /// Throws unless the store tracks global identities.
    func requireGlobalIdentifiers() throws {
        guard tracksGlobalIdentifiers else {
            throw TernError(
                .schemaMismatch,
                "The store does not track global identities; open it with SQLiteConfiguration.tracksGlobalIdentifiers.",
                path: url.path)
        }
    }

    /// A UUID as the column holds it: 16 bytes, as UUID attributes are stored.
    static func bytes(of identifier: UUID) -> DatabaseValue {
        AttributeValue.uuid(identifier).databaseValue(for: .uuid) ?? .null
    }

    /// The UUID a column holds, or nil when it holds no 16 bytes.
    static func uuid(from value: DatabaseValue) -> UUID? {
        guard case .uuid(let identifier)? = try? AttributeValue(databaseValue: value, type: .uuid) else { return nil }
        return identifier
    }
}
