import Foundation
import Synchronization
import TernCore
import TernMigration

/// Swift test policies standing for the apps' `NSEntityMigrationPolicy` subclasses that the
/// corpus's mapping models name, written from what each folder's PROVENANCE notes say the app's
/// class does, and registered under the class name the mapping model gives.
enum CorpusPolicies {
    /// The registry for one run: a fresh instance of each policy (some keep state).
    static func registry() -> MigrationPolicyRegistry {
        var registry = MigrationPolicyRegistry()
        registry.register(ColorPerPost(), named: "CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
        registry.register(NameSplit(), named: "EmployeeToEmployeePolicy")
        registry.register(ContinentOfCountry(), named: "Migrations.Country5ToCountry6Policy")
        registry.register(IntegrationDates(), named: "XCServerCoreData.IntegrationStringToDateMigrationPolicy")
        registry.register(DeletedCarbs(), named: "LoopKit.DeletedCarbObjectv3EntityMigrationPolicy")
        registry.register(CareKitOutcomes(), named: "CareKitStore.OCKStoreMigration2_0To2_1Policy")
        return registry
    }

    /// The value at a source key path.
    static func value(_ key: String, of source: RowReference, _ manager: any MigrationManager) throws(MigrationError)
        -> AttributeValue?
    {
        guard case .value(let value) = try manager.sourceValue(forKeyPath: [key], of: source) else { return nil }
        return value
    }

    /// The destination object the default stage 1 made for a source object.
    static func created(for source: RowReference, _ mapping: EntityMapping, _ manager: any MigrationManager)
        throws(MigrationError) -> RowReference
    {
        try DefaultMigrationPolicy.createInstance(forSource: source, mapping: mapping, manager: manager)
        guard let made = manager.destinationInstances(forMapping: mapping.name, sourceInstances: [source]).first else {
            throw MigrationError(.evaluationFailed, "the default stage made no object", mapping: mapping.name)
        }
        return made
    }

    /// wibosco's Post2ToPost3MigrationPolicy. In CoreDataMigration-Example: one Color per Post,
    /// colorID a new UUID, hex the old hexColor, set as the post's color. In the revised
    /// example (whose version 3 has Section instead of Color): one Section per Post, title the
    /// first four characters of the content and "...", body the content, index 0.
    struct ColorPerPost: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let post = try CorpusPolicies.created(for: source, mapping, manager)
            if manager.destinationModel.entity(named: "Color") != nil {
                let color = try manager.insertDestinationInstance(ofEntity: "Color")
                try manager.setDestinationValue(.string(UUID().uuidString), forAttribute: "colorID", of: color)
                try manager.setDestinationValue(
                    try CorpusPolicies.value("hexColor", of: source, manager), forAttribute: "hex", of: color)
                try manager.setDestinationRelationship("color", of: post, to: [color])
            } else {
                let content = try CorpusPolicies.value("content", of: source, manager)
                guard case .string(let text)? = content else { return }
                let section = try manager.insertDestinationInstance(ofEntity: "Section")
                try manager.setDestinationValue(
                    .string(String(text.prefix(4)) + "..."), forAttribute: "title", of: section)
                try manager.setDestinationValue(.string(text), forAttribute: "body", of: section)
                try manager.setDestinationValue(.integer(0), forAttribute: "index", of: section)
                try manager.setDestinationRelationship("post", of: section, to: [post])
            }
        }
    }

    /// mwkirk's EmployeeToEmployeePolicy: when the entity mapping's user info says
    /// destModelVersion 3, the name splits at white space into exactly two parts, first and last
    /// name; anything else fails.
    struct NameSplit: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let employee = try CorpusPolicies.created(for: source, mapping, manager)
            guard mapping.userInfo["destModelVersion"] == "3" else { return }
            guard case .string(let name)? = try CorpusPolicies.value("name", of: source, manager) else { return }
            let parts = name.split(whereSeparator: \.isWhitespace).map(String.init)
            guard parts.count == 2 else {
                throw MigrationError(
                    .evaluationFailed, "the name does not split in two", mapping: mapping.name, property: "name")
            }
            try manager.setDestinationValue(.string(parts[0]), forAttribute: "firstName", of: employee)
            try manager.setDestinationValue(.string(parts[1]), forAttribute: "lastName", of: employee)
        }
    }

    /// objc.io's Country5ToCountry6Policy: a country with isoContinent gets the Continent of that
    /// numericISO3166Code, found among those made so far or made now.
    final class ContinentOfCountry: EntityMigrationPolicy {
        /// The continents made, by code: the policy's state during one migration.
        private let continents = Mutex<[Int64: RowReference]>([:])

        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let country = try CorpusPolicies.created(for: source, mapping, manager)
            guard case .integer(let code)? = try CorpusPolicies.value("isoContinent", of: source, manager) else {
                return
            }
            let known = continents.withLock { $0[code] }
            let continent: RowReference
            if let known {
                continent = known
            } else {
                continent = try manager.insertDestinationInstance(ofEntity: "Continent")
                try manager.setDestinationValue(.integer(code), forAttribute: "numericISO3166Code", of: continent)
                continents.withLock { $0[code] = continent }
            }
            try manager.setDestinationRelationship("continent", of: country, to: [continent])
        }
    }

    /// XCServerCoreData's IntegrationStringToDateMigrationPolicy: startedTime, endedTime and
    /// queuedDate, text in 1.2.0, are parsed as dates (yyyy-MM-dd'T'HH:mm:ss.SSS'Z').
    struct IntegrationDates: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let integration = try CorpusPolicies.created(for: source, mapping, manager)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
            for key in ["startedTime", "endedTime", "queuedDate"] {
                guard case .string(let text)? = try CorpusPolicies.value(key, of: source, manager),
                    let date = formatter.date(from: text)
                else { continue }
                try manager.setDestinationValue(.date(date), forAttribute: key, of: integration)
            }
        }
    }

    /// LoopKit's DeletedCarbObjectv3EntityMigrationPolicy: a deleted carb entry becomes a
    /// CachedCarbObject that the current app is not known to have created.
    struct DeletedCarbs: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let carb = try CorpusPolicies.created(for: source, mapping, manager)
            try manager.setDestinationValue(.bool(false), forAttribute: "createdByCurrentApp", of: carb)
        }
    }

    /// CareKit's OCKStoreMigration2_0To2_1Policy, reduced to what sample objects need (no
    /// knowledge elements or clock): relationships through `<Entity>To<Entity>` mappings, an
    /// outcome's date becomes its start, effective and end date (the app computes start and end
    /// from the task's schedule), schemaVersion becomes 2.1.0, logicalClock 0, uuid new and
    /// an outcome's id its task's UUID and occurrence index.
    struct CareKitOutcomes: EntityMigrationPolicy {
        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let object = try CorpusPolicies.created(for: source, mapping, manager)
            let model = manager.destinationModel
            func set(_ value: AttributeValue?, _ key: String) throws(MigrationError) {
                guard model.attribute(named: key, inEntity: object.entityName) != nil else { return }
                try manager.setDestinationValue(value, forAttribute: key, of: object)
            }
            if object.entityName == "OCKCDOutcome" {
                let date = try CorpusPolicies.value("date", of: source, manager)
                for key in ["startDate", "effectiveDate", "endDate"] { try set(date, key) }
                // The app's id: the task's UUID and the occurrence index.
                var task = "task"
                if case .value(let value) = try manager.sourceValue(forKeyPath: ["task", "uuid"], of: source), let value
                {
                    task = String(describing: value)
                }
                let index =
                    try CorpusPolicies.value("taskOccurrenceIndex", of: source, manager).map(String.init(describing:))
                    ?? "0"
                try set(.string(task + "_" + index), "id")
            }
            if case .string? = try? CorpusPolicies.value("schemaVersion", of: source, manager) {
                try set(.string("2.1.0"), "schemaVersion")
            }
            try set(.integer(0), "logicalClock")
            try set(.uuid(UUID()), "uuid")
        }

        /// As the app's: every source relationship, through the mapping `<Entity>To<Entity>` of
        /// its destination entity.
        func createRelationships(
            forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            guard let source = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination).first
            else { return }
            for relationship in manager.sourceModel.allRelationships(of: source.entityName)
            where !relationship.isTransient {
                guard
                    manager.destinationModel.relationship(named: relationship.name, inEntity: destination.entityName)
                        != nil,
                    case .objects(let related) = try manager.sourceValue(forKeyPath: [relationship.name], of: source)
                else { continue }
                let target = relationship.destinationEntityName
                let objects = manager.destinationInstances(forMapping: "\(target)To\(target)", sourceInstances: related)
                try manager.setDestinationRelationship(relationship.name, of: destination, to: objects)
            }
        }
    }
}
