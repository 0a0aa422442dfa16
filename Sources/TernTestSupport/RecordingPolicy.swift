import Synchronization
public import TernCore
public import TernMigration

/// The stage-1 calls of a migration, as "mapping key", in the order they came.
///
/// ```swift
/// let log = StageOneLog()
/// options.policies.register(RecordingPolicy(log: log, independent: true), named: "Recording")
/// // after the migration: log.entries == ["EventToPrintedEvent 2", "EventToTimeStampEvent 2", …]
/// ```
public final class StageOneLog: Sendable {
    private let calls = Mutex<[String]>([])

    /// An empty log.
    public init() {}

    /// Records a call.
    public func record(_ call: String) { calls.withLock { $0.append(call) } }

    /// The calls so far.
    public var entries: [String] { calls.withLock { $0 } }
}

/// A custom policy that does what the default one does and records its stage-1 calls; it says
/// it is independent or not, as asked, and reads `timeStamp` (the seeds' Event split).
public struct RecordingPolicy: EntityMigrationPolicy {
    /// Where the calls go.
    public let log: StageOneLog
    /// What ``createsInstancesIndependently(for:)`` answers.
    public let independent: Bool

    /// A policy recording into `log`.
    public init(log: StageOneLog, independent: Bool) {
        self.log = log
        self.independent = independent
    }

    /// The Event split's one source attribute.
    public func sourceAttributes(for mapping: EntityMapping) -> Set<String>? { ["timeStamp"] }

    /// As asked at creation.
    public func createsInstancesIndependently(for mapping: EntityMapping) -> Bool { independent }

    /// Records the call, then creates the destination as the default policy does.
    public func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        log.record("\(mapping.name) \(source.primaryKey)")
        try DefaultMigrationPolicy.createInstance(forSource: source, mapping: mapping, manager: manager)
    }
}
