public import Foundation
public import TernCore

/// What to import and how records match existing objects.
///
/// ```swift
/// var options = RecordImportOptions(format: .tsv, entityName: "Recipe")
/// options.uniqueBy = ["uid"]
/// let summary = try await context.importRecords(from: url, options: options)
/// ```
public struct RecordImportOptions: Sendable, Hashable {
    /// A record file format.
    public enum Format: String, Sendable, CaseIterable {
        /// Tab-separated values with a header row.
        case tsv
        /// Comma-separated values (RFC 4180) with a header row.
        case csv
        /// JSON: an array of records or an object keyed by entity name.
        case json

        /// The format a file's extension names (`.tsv`, `.tab`, `.csv`, `.json`), if any.
        ///
        /// - Parameter url: The file.
        public init?(pathExtensionOf url: URL) {
            switch url.pathExtension.lowercased() {
            case "tsv", "tab": self = .tsv
            case "csv": self = .csv
            case "json": self = .json
            default: return nil
            }
        }
    }

    /// The file's format.
    public var format: Format
    /// The entity of every record in a TSV, CSV or JSON-array file; in an entity-keyed JSON file,
    /// only records of this entity are imported when set.
    public var entityName: String?
    /// The attributes that identify an object of ``entityName``, instead of the entity's first
    /// uniqueness constraint.
    public var uniqueBy: [String]?
    /// How many records are read and matched at a time.
    public var batchSize = 500
    /// Whether each batch is saved as soon as it is read, instead of everything in one save at
    /// the end. Memory then stays bounded by the batch (objects matched by key are let go after
    /// each save and found again in the store), and an interrupted import keeps the batches it
    /// saved: running it again is safe, since records update the objects they match. `_id`
    /// references are still wired at the end, so a required relationship may only refer to a
    /// record of the same batch or an earlier one.
    public var savesEachBatch = false
    /// Which values win when a record matches an object already in the store: with
    /// ``/TernCore/MergePolicy/objectTrumps`` (the default) and ``/TernCore/MergePolicy/overwrite``
    /// the record's values replace the object's; with ``/TernCore/MergePolicy/storeTrumps`` the
    /// record only fills the object's empty attributes and relationships; with
    /// ``/TernCore/MergePolicy/rollback`` the object is left as it is; with
    /// ``/TernCore/MergePolicy/error`` the import fails with ``RecordError/Code/conflict``.
    /// Records that match each other within the file always merge, the later one winning.
    public var mergePolicy: MergePolicy = .objectTrumps

    /// Creates options.
    ///
    /// - Parameters:
    ///   - format: The file's format.
    ///   - entityName: The entity, needed for TSV, CSV and JSON arrays.
    ///   - uniqueBy: The matching attributes, overriding the model's uniqueness constraint.
    public init(format: Format, entityName: String? = nil, uniqueBy: [String]? = nil) {
        self.format = format
        self.entityName = entityName
        self.uniqueBy = uniqueBy
    }
}

/// What an import did, by entity.
public struct RecordImportSummary: Sendable, Hashable {
    /// New objects per entity.
    public var inserted: [String: Int] = [:]
    /// Existing objects updated per entity (each object counted once).
    public var updated: [String: Int] = [:]
    /// Related objects deleted because a record replaced a relationship that owns them (cascade).
    public var deleted: [String: Int] = [:]

    /// The number of new objects.
    public var insertedCount: Int { inserted.values.reduce(0, +) }
    /// The number of updated objects.
    public var updatedCount: Int { updated.values.reduce(0, +) }
    /// The number of deleted objects.
    public var deletedCount: Int { deleted.values.reduce(0, +) }

    /// Creates an empty summary.
    public init() {}
}
