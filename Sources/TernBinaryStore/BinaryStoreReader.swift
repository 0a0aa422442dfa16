package import Foundation
package import TernCore

/// Reads a binary store file entity by entity and row by row, in memory bounded by its buffer
/// and one row, instead of decoding the whole file as ``BinaryStoreFormat/decode(_:path:)``
/// does: what conversions to a store on disk use.
///
/// The header, the string table and the key counters are read when the reader is made. The
/// body's checksum covers every row, so it is checked only when ``nextEntity()`` has gone past
/// the last entity: until then, rows may come from a damaged file, and a caller must not make
/// what it wrote from them final before that call returns nil.
///
/// ```swift
/// let reader = try BinaryStoreReader(at: url)
/// while let (entity, count) = try reader.nextEntity() {
///     let slots = reader.slots(for: columns)
///     for _ in 0..<count { let head = try reader.readRow(slots: slots, into: &values) }  // values: one per column
/// }
/// ```
package final class BinaryStoreReader {
    /// The store's metadata.
    package let metadata: StoreMetadata
    /// The last primary key handed out under each inheritance root.
    package let lastPrimaryKeys: [String: Int64]

    private var input: FileByteReader
    private let names: [String]
    private let checksum: UInt32
    private var entitiesLeft: Int
    /// How many rows of the current entity are left to read.
    package private(set) var rowsLeft = 0
    private var isFinished = false

    /// Opens a binary store file and reads its header, string table and key counters.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - bufferSize: The bytes read from the file at a time.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is not a binary store, is of
    ///   a newer format version, or is truncated or damaged.
    /// - Complexity: O(*m*) in the size of the header and string table.
    package init(at url: URL, bufferSize: Int = 1 << 20) throws(TernError) {
        var input = try FileByteReader(url: url, bufferSize: bufferSize)
        metadata = try BinaryStoreFormat.readHeader(&input)
        let length = try input.readUInt64()
        checksum = try input.readUInt32()
        guard length == UInt64(input.remaining) else {
            throw input.corrupt(
                "the rows should take \(length) bytes but \(input.remaining) remain; the file is truncated or damaged")
        }
        input.startChecksum()
        let nameCount = try input.readCount(minimumSize: 4)
        var names: [String] = []
        names.reserveCapacity(nameCount)
        for _ in 0..<nameCount { names.append(try input.readString()) }
        self.names = names
        var keys: [String: Int64] = [:]
        for _ in 0..<(try input.readCount(minimumSize: 12)) {
            let root = try Self.name(input, in: names)
            keys[root] = try input.readInt64()
        }
        lastPrimaryKeys = keys
        entitiesLeft = try input.readCount(minimumSize: 8)
        self.input = input
    }

    /// Moves to the rows of the next entity.
    ///
    /// - Returns: The entity's name and how many of its rows follow, or nil after the last
    ///   entity, once the whole body has been read and its checksum matched.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is damaged, or when rows
    ///   of the current entity were left unread.
    package func nextEntity() throws(TernError) -> (name: String, rowCount: Int)? {
        guard rowsLeft == 0 else {
            throw TernError(.unsupported, "\(rowsLeft) rows of the entity were not read", path: input.path)
        }
        guard entitiesLeft > 0 else {
            guard !isFinished else { return nil }
            guard input.remaining == 0 else { throw input.corrupt("\(input.remaining) bytes follow the last row") }
            guard UInt32(truncatingIfNeeded: input.checksum) == checksum else {
                throw input.corrupt("the rows' checksum does not match")
            }
            isFinished = true
            return nil
        }
        entitiesLeft -= 1
        let entity = try Self.name(input, in: names)
        rowsLeft = try input.readCount(minimumSize: 28)
        return (entity, rowsLeft)
    }

    /// Where ``readRow(slots:into:)`` puts each attribute: for every name of the file's string
    /// table, its position among `columns`, or -1.
    ///
    /// - Parameter columns: The attribute names of the values a row is read into.
    /// - Complexity: O(*n*) in the names of the file.
    package func slots(for columns: [String]) -> [Int] {
        let positions = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return names.map { positions[$0] ?? -1 }
    }

    /// Reads the next row of the current entity.
    ///
    /// - Parameters:
    ///   - slots: From ``slots(for:)``: where each attribute's value goes in `values`.
    ///   - values: One slot per column: the row's values are set at their slots, the others to nil.
    /// - Returns: The row's key, version and relationships.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is damaged;
    ///   ``/TernCore/TernError/Code/invalidValue`` when an attribute has no slot.
    /// - Complexity: O(*v*) in the row's values and references.
    package func readRow(slots: [Int], into values: inout [AttributeValue?]) throws(TernError) -> BinaryStoreRowHead {
        guard rowsLeft > 0 else { throw TernError(.unsupported, "no row of the entity is left", path: input.path) }
        rowsLeft -= 1
        let primaryKey = try input.readInt64()
        let version = try input.readInt64()
        for index in values.indices { values[index] = nil }
        for _ in 0..<(try input.readCount(minimumSize: 5)) {
            let index = Int(try input.readUInt32())
            guard index < slots.count else { throw input.corrupt("a name refers past the string table") }
            let slot = slots[index]
            guard slot >= 0 else {
                throw TernError(
                    .invalidValue,
                    "the binary store has a value for attribute '\(names[index])', which the model's entity lacks; "
                        + "convert it with the model it was written with",
                    path: input.path)
            }
            values[slot] = try BinaryStoreFormat.readValue(&input)
        }
        var head = BinaryStoreRowHead(primaryKey: primaryKey, version: version)
        for _ in 0..<(try input.readCount(minimumSize: 16)) {
            let relationship = try Self.name(input, in: names)
            head.toOne[relationship] = try reference()
        }
        for _ in 0..<(try input.readCount(minimumSize: 8)) {
            let relationship = try Self.name(input, in: names)
            let count = try input.readCount(minimumSize: 12)
            var references: [RowReference] = []
            references.reserveCapacity(count)
            for _ in 0..<count { references.append(try reference()) }
            head.toMany[relationship] = references
        }
        return head
    }

    // MARK: - Non public

    private func reference() throws(TernError) -> RowReference {
        RowReference(entityName: try Self.name(input, in: names), primaryKey: try input.readInt64())
    }

    private static func name(_ input: FileByteReader, in names: [String]) throws(TernError) -> String {
        let index = Int(try input.readUInt32())
        guard index < names.count else { throw input.corrupt("a name refers past the string table") }
        return names[index]
    }
}

/// What ``BinaryStoreReader/readRow(slots:into:)`` returns besides the values: a row's
/// identity within its entity and its relationships.
package struct BinaryStoreRowHead: Sendable {
    /// The row's primary key.
    package var primaryKey: Int64
    /// The row's version.
    package var version: Int64
    /// The destination of each non-empty to-one relationship.
    package var toOne: [String: RowReference] = [:]
    /// The destinations of each non-empty to-many relationship.
    package var toMany: [String: [RowReference]] = [:]

    /// Whether the row has any relationship.
    package var hasRelationships: Bool { !toOne.isEmpty || !toMany.isEmpty }
}
