public import Foundation
public import TernCore
package import TernMigration

/// The migration steps a store records in its metadata (application key
/// ``journalKey``), each with a checksum of its mapping, so that an edited mapping that already
/// ran is noticed.
///
/// ```swift
/// let journal = MigrationJournal(metadata: try SQLiteStore.metadata(at: url))
/// for entry in journal.entries { print(entry.from, "→", entry.to, entry.kind) }
/// ```
public struct MigrationJournal: Sendable, Hashable {
    /// The metadata key the journal is stored under.
    public static let journalKey = "TernMigrationJournal"

    /// One applied step.
    public struct Entry: Sendable, Hashable {
        /// The version the step started from.
        public var from: String
        /// The version the step ended at.
        public var to: String
        /// How the step ran: `inferred`, `mapping` or `none`.
        public var kind: String
        /// The checksum of the step's mapping models (``/TernMigration/MigrationPlan/Step/mappingChecksum``).
        public var checksum: String
        /// When the step was applied.
        public var date: Date

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - from: The version the step started from.
        ///   - to: The version the step ended at.
        ///   - kind: How the step ran.
        ///   - checksum: The checksum of the step's mappings.
        ///   - date: When the step was applied.
        public init(from: String, to: String, kind: String, checksum: String, date: Date) {
            (self.from, self.to, self.kind, self.checksum, self.date) = (from, to, kind, checksum, date)
        }
    }

    /// The applied steps, oldest first.
    public var entries: [Entry]

    /// Creates a journal.
    ///
    /// - Parameter entries: The applied steps, oldest first.
    public init(entries: [Entry] = []) {
        self.entries = entries
    }

    /// Reads the journal a store's metadata records; empty when it has none or it is malformed.
    ///
    /// - Parameter metadata: The store's metadata.
    /// - Complexity: O(*n*) in the number of entries.
    public init(metadata: StoreMetadata) {
        guard case .array(let items)? = metadata.applicationKeys[Self.journalKey] else {
            self.entries = []
            return
        }
        self.entries = items.compactMap { item in
            guard case .dictionary(let fields) = item, case .string(let from)? = fields["from"],
                case .string(let to)? = fields["to"], case .string(let kind)? = fields["kind"],
                case .string(let checksum)? = fields["checksum"]
            else { return nil }
            var date = Date(timeIntervalSinceReferenceDate: 0)
            if case .date(let recorded)? = fields["date"] { date = recorded }
            return Entry(from: from, to: to, kind: kind, checksum: checksum, date: date)
        }
    }

    /// The metadata value that records the journal.
    public var propertyListValue: PropertyListValue {
        .array(
            entries.map { entry in
                .dictionary([
                    "from": .string(entry.from), "to": .string(entry.to), "kind": .string(entry.kind),
                    "checksum": .string(entry.checksum), "date": .date(entry.date),
                ])
            })
    }

    /// The entry recorded for a step, if that step was applied.
    ///
    /// - Parameters:
    ///   - from: The version the step starts from.
    ///   - to: The version it ends at.
    /// - Complexity: O(*n*) in the number of entries.
    public func entry(from: String, to: String) -> Entry? {
        entries.last { $0.from == from && $0.to == to }
    }

    /// The steps of a plan that already ran on the store with another mapping, as `from → to`.
    ///
    /// - Parameter plan: The plan about to run.
    /// - Complexity: O(*s* · *n*) in the plan's steps and the journal's entries.
    package func editedSteps(of plan: MigrationPlan) -> [MigrationPlan.Step] {
        plan.steps.filter { step in
            entry(from: step.from, to: step.to).map { $0.checksum != step.mappingChecksum } ?? false
        }
    }
}
