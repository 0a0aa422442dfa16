package import TernCore

/// The in-memory half of a migration step's association table, shared by the SQLite and
/// PostgreSQL engines: it folds associations into runs and says which run is finished and must
/// be written; the table that keeps the written runs is the engine's.
///
/// A run says that `count` consecutive source keys became `count` consecutive destination keys
/// under one mapping: source `sourceStart + i` became destination `destinationStart + i`. A
/// mapping that makes one object per source object, read and created in key order, gives one run
/// per ``runLimit`` objects (fewer where source keys have gaps). At most one run per mapping is
/// open (being extended) at a time; mappings that share a walk over their source associate in turns.
///
/// ```swift
/// var runs = AssociationRuns()
/// if let finished = runs.associate(source: event, withDestination: stamp, mapping: "EventToStamp") {
///     try write(finished)
/// }
/// runs.destination(of: event, mapping: "EventToStamp")   // stamp, while its run is open
/// ```
package struct AssociationRuns {
    /// The most keys one run covers, so that finding the runs that hold a key reads one short
    /// index range (`start BETWEEN key - runLimit + 1 AND key`).
    package static let runLimit: Int64 = 64

    /// A run of associations.
    package struct Run {
        /// The entity mapping's name.
        package var mapping: String
        /// The entity of the source objects.
        package var sourceEntity: String
        /// The first source key.
        package var sourceStart: Int64
        /// The entity of the destination objects.
        package var destinationEntity: String
        /// The first destination key.
        package var destinationStart: Int64
        /// How many consecutive keys the run covers.
        package var count: Int64
        /// Whether no earlier run of the mapping holds any of its destination objects, so that
        /// walking the mapping's destinations needs no check for objects already seen.
        package var isFresh: Bool
        /// When the run was opened, among every mapping's runs: the order of association across
        /// mappings (runs of different mappings are finished in another order when they share a walk).
        package var sequence: Int64

        /// The destination a source object became in this run, or nil when the run does not hold it.
        package func destination(of source: RowReference) -> RowReference? {
            guard source.entityName == sourceEntity, source.primaryKey >= sourceStart,
                source.primaryKey < sourceStart + count
            else { return nil }
            return RowReference(
                entityName: destinationEntity, primaryKey: destinationStart + source.primaryKey - sourceStart)
        }

        /// The source object a destination came from in this run, or nil when the run does not hold it.
        package func source(of destination: RowReference) -> RowReference? {
            guard destination.entityName == destinationEntity, destination.primaryKey >= destinationStart,
                destination.primaryKey < destinationStart + count
            else { return nil }
            return RowReference(
                entityName: sourceEntity, primaryKey: sourceStart + destination.primaryKey - destinationStart)
        }
    }

    /// The runs being extended, at most one per mapping: each is its mapping's newest.
    package private(set) var open: [Run] = []
    /// The largest destination key of the finished runs, by mapping and destination entity.
    private var largestDestination: [String: [String: Int64]] = [:]
    /// The number of runs opened so far.
    private var openedRuns: Int64 = 0

    /// No runs yet.
    package init() {}

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Returns: The mapping's run that this association cannot extend, now finished: the
    ///   caller writes it (before any later finished run). Nil when the association extended the
    ///   open run or opened the mapping's first.
    package mutating func associate(
        source: RowReference, withDestination destination: RowReference, mapping: String
    ) -> Run? {
        associate(
            sourceEntity: source.entityName, sourceKey: source.primaryKey, destinationEntity: destination.entityName,
            destinationKey: destination.primaryKey, mapping: mapping)
    }

    /// Records that a source object became a destination object under a mapping, by entity and
    /// key (see ``associate(source:withDestination:mapping:)``).
    ///
    /// - Returns: The mapping's run that this association cannot extend, now finished; nil otherwise.
    package mutating func associate(
        sourceEntity: String, sourceKey: Int64, destinationEntity: String, destinationKey: Int64, mapping: String
    ) -> Run? {
        let slot = open.firstIndex { $0.mapping == mapping }
        var finished: Run?
        if let slot {
            // Compared in place: copying the run would retain and release its three names per object.
            let count = open[slot].count
            if count < Self.runLimit, sourceKey == open[slot].sourceStart + count,
                destinationKey == open[slot].destinationStart + count, open[slot].sourceEntity == sourceEntity,
                open[slot].destinationEntity == destinationEntity
            {
                open[slot].count = count + 1
                return nil
            }
            let run = open[slot]
            finished = run
            noteFinished(run)
        }
        let largest = largestDestination[mapping]?[destinationEntity]
        let run = Run(
            mapping: mapping, sourceEntity: sourceEntity, sourceStart: sourceKey, destinationEntity: destinationEntity,
            destinationStart: destinationKey, count: 1, isFresh: largest.map { destinationKey > $0 } ?? true,
            sequence: openedRuns)
        openedRuns += 1
        if let slot { open[slot] = run } else { open.append(run) }
        return finished
    }

    /// Records that `count` consecutive source keys became `count` consecutive destination keys
    /// under a mapping: what `count` calls of
    /// ``associate(sourceEntity:sourceKey:destinationEntity:destinationKey:mapping:)`` with
    /// `sourceStart + i` and `destinationStart + i` record, the same runs in the same order, a run
    /// at a time instead of a key at a time.
    ///
    /// - Returns: The runs those calls would have finished, in order.
    /// - Complexity: O(`count` ÷ ``runLimit``).
    package mutating func associateRange(
        sourceEntity: String, sourceStart: Int64, destinationEntity: String, destinationStart: Int64, count: Int64,
        mapping: String
    ) -> [Run] {
        var finished: [Run] = []
        var done: Int64 = 0
        while done < count {
            if let run = associate(
                sourceEntity: sourceEntity, sourceKey: sourceStart + done, destinationEntity: destinationEntity,
                destinationKey: destinationStart + done, mapping: mapping)
            {
                finished.append(run)
            }
            done += 1
            // The rest of this run's room, taken at once: each of those calls would extend it.
            guard let slot = open.firstIndex(where: { $0.mapping == mapping }) else { continue }
            let extended = min(count - done, Self.runLimit - open[slot].count)
            open[slot].count += extended
            done += extended
        }
        return finished
    }

    /// Finishes every open run and returns them in the order they were opened, for writing.
    package mutating func finishAll() -> [Run] {
        let runs = open
        open = []
        for run in runs { noteFinished(run) }
        return runs
    }

    /// Forgets every run.
    package mutating func removeAll() {
        open = []
    }

    /// The destination of a source object in the open run of a mapping (any mapping's when nil).
    package func openDestination(of source: RowReference, mapping: String?) -> RowReference? {
        open.first { $0.mapping == mapping }?.destination(of: source)
    }

    /// The source object of a destination in the open run of a mapping.
    package func openSource(of destination: RowReference, mapping: String) -> RowReference? {
        open.first { $0.mapping == mapping }?.source(of: destination)
    }

    /// Keeps the largest destination key a finished run holds, for the freshness of later runs.
    private mutating func noteFinished(_ run: Run) {
        let last = run.destinationStart + run.count - 1
        if last > largestDestination[run.mapping]?[run.destinationEntity] ?? .min {
            largestDestination[run.mapping, default: [:]][run.destinationEntity] = last
        }
    }
}
