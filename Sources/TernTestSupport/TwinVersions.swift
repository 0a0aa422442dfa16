import Synchronization
public import TernCore
public import TernMigration

/// Items split into copies and twins by a custom policy whose associations are anything but one
/// to one: two twins per item, every tenth item also tied to the first twin (a destination of
/// several sources), over keys with gaps. Stage 2 records what each lookup direction gives, so
/// an engine's association runs can be compared with the in-memory reference engine's.
///
/// ```swift
/// var options = MigrationOptions(batchSize: 7)
/// options.policies.register(TwinVersions.TwinPolicy(calls: TwinVersions.Calls()), named: "Twins")
/// try await StoreMigrator().migrateStore(at: .file(url), model: try TwinVersions.model(),
///                                        mappings: [TwinVersions.mapping()], options: options)
/// ```
public enum TwinVersions {
    /// `v1` (items) and `v2` (copies with to-many twins).
    ///
    /// - Throws: `TernError` if the model is invalid (it is not).
    public static func model() throws -> VersionedModel {
        try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") { Attribute("n", .integer64) }
            }
            ModelVersion("v2") {
                Entity("Copy") {
                    Attribute("n", .integer64)
                    Relationship("twins", to: "Twin", inverse: "copy").toMany()
                }
                Entity("Twin") {
                    Attribute("n", .integer64)
                    Attribute("origin", .integer64)
                    Attribute("others", .integer64)
                    Relationship("copy", to: "Copy", inverse: "twins")
                }
            }
        }
    }

    /// Keys 1…150 (more than two runs), then gaps, then keys far apart.
    public static let keys: [Int64] = Array(1...150) + [152, 200, 201, 202, 300, 1_000, 5_000]

    /// One item per key, `n` equal to its key.
    public static var rows: [StoreRow] {
        keys.map { key in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: key), version: 1,
                attributes: ["n": .integer(key)])
        }
    }

    /// The step: items copied, twinned by the policy registered as `Twins`, then removed.
    public static func mapping() -> StepMapping {
        let pass = MappingModel(
            name: "Split",
            entityMappings: [
                EntityMapping(
                    name: "ItemToCopy", kind: .transform, source: "Item", destination: "Copy",
                    attributes: [PropertyMapping("n", .source(keyPath: ["n"]))]),
                EntityMapping(name: "ItemToTwins", kind: .custom, source: "Item", destination: "Twin", policy: "Twins"),
                EntityMapping(kind: .remove, source: "Item", destination: nil),
            ])
        return StepMapping(from: "v1", to: "v2", passes: [pass])
    }

    /// Stage 1 makes two twins per item (and ties every tenth item to the first twin too);
    /// stage 2 records what the lookups give.
    public struct TwinPolicy: EntityMigrationPolicy {
        /// Where stage 2 records the destinations it saw.
        public let calls: Calls

        /// A policy recording into `calls`.
        public init(calls: Calls) {
            self.calls = calls
        }

        /// Two twins per item, and every tenth item tied to the first twin as well.
        public func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        ) throws(MigrationError) {
            guard case .value(let n?) = try manager.sourceValue(forKeyPath: ["n"], of: source) else { return }
            for _ in 0..<2 {
                let twin = try manager.insertDestinationInstance(ofEntity: "Twin")
                try manager.setDestinationValue(n, forAttribute: "n", of: twin)
                manager.associate(source: source, withDestination: twin, mapping: mapping)
            }
            if case .integer(let number) = n, number % 10 == 0 {
                manager.associate(
                    source: source, withDestination: RowReference(entityName: "Twin", primaryKey: 1), mapping: mapping)
            }
        }

        /// Records the twin, and writes what its sources and their destinations are as numbers.
        public func createRelationships(
            forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
        ) throws(MigrationError) {
            calls.record(destination)
            let sources = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination)
            try manager.setDestinationValue(
                .integer(sources.reduce(0) { $0 &* 7 &+ $1.primaryKey }), forAttribute: "origin", of: destination)
            let copies = manager.destinationInstances(
                forMapping: "ItemToCopy", sourceInstances: Array(sources.prefix(1)))
            try manager.setDestinationRelationship("copy", of: destination, to: copies)
            let all = manager.destinationInstances(forMapping: nil, sourceInstances: sources)
            try manager.setDestinationValue(
                .integer(all.reduce(0) { $0 &* 5 &+ $1.primaryKey }), forAttribute: "others", of: destination)
        }
    }

    /// The destinations stage 2 saw, in order.
    public final class Calls: Sendable {
        private let seen = Mutex<[RowReference]>([])

        /// No destinations yet.
        public init() {}

        /// Records a destination.
        public func record(_ reference: RowReference) { seen.withLock { $0.append(reference) } }

        /// Every destination recorded, in order.
        public var all: [RowReference] { seen.withLock { $0 } }
    }
}
