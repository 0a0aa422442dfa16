import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

/// Seed 004's split in Xcode's form: Event becomes EventLabel (its date formatted by a policy
/// method, `FUNCTION($entityPolicy, "labelForDate:", $source.timeStamp)`) in the pass StepOne,
/// and EventStamp (its date as a Double, `$source.timeStamp.timeIntervalSinceReferenceDate`,
/// only for events that have one) in the pass StepTwo.
@Suite struct XcodeMappingSeedTests {
    static let folder = MigrationFixtures.root.appendingPathComponent("EventSplit")
    static let passes = ["StepOne", "StepTwo"].map { folder.appendingPathComponent("\($0).xcmappingmodel") }
    static let policyName = "EventSplit.EventLabelPolicy"

    /// The policy the app registers for StepOne: its method labelForDate: formats a date.
    struct EventLabelPolicy: EntityMigrationPolicy {
        var expressionFunctions: [String: PolicyFunction] {
            [
                "labelForDate:": { arguments, _ throws(MigrationError) in
                    guard case .value(.date(let date)?)? = arguments.first else { return .value(nil) }
                    return .value(.string(EventLabelPolicy.label(date)))
                }
            ]
        }

        static func label(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            return formatter.string(from: date)
        }
    }

    static var policies: MigrationPolicyRegistry {
        var registry = MigrationPolicyRegistry()
        registry.register(EventLabelPolicy(), named: policyName)
        return registry
    }

    static func model() throws -> VersionedModel {
        try XcodeModel.readVersionedModel(at: folder.appendingPathComponent("EventSplit.xcdatamodeld"))
    }

    /// The step as designed in Swift: what the two mapping models were written from.
    static func designedStep() throws -> StepMapping {
        let label = EntityMapping(
            name: "EventToEventLabel", kind: .transform, source: "Event", destination: "EventLabel",
            attributes: [
                PropertyMapping("printedDate", try ValueExpression(#"policy("labelForDate:", $source.timeStamp)"#))
            ],
            policy: policyName)
        let stamp = EntityMapping(
            name: "EventToEventStamp", kind: .transform, source: "Event", destination: "EventStamp",
            filter: try FetchPredicate("timeStamp != nil"),
            attributes: [PropertyMapping("timeStamp", try ValueExpression("timeInterval($source.timeStamp)"))])
        return StepMapping(
            from: "Event 1", to: "Event 2",
            passes: [
                MappingModel(name: "StepOne", entityMappings: [label]),
                MappingModel(name: "StepTwo", entityMappings: [stamp]),
            ])
    }

    @Test func theMappingModelsAreWhatTernWritesForTheDesignedStep() throws {
        let model = try Self.model()
        let designed = try Self.designedStep().resolved(in: model)
        let directory = try TemporaryDirectory()
        var written: [URL] = []
        for (index, url) in Self.passes.enumerated() {
            let target =
                ProcessInfo.processInfo.environment["TERN_UPDATE_FIXTURES"] == "1"
                ? url : directory.url.appendingPathComponent(url.lastPathComponent)
            try designed.writeXcodeMappingModel(
                to: target, pass: index, modelPath: "EventSplit/EventSplit.xcdatamodeld")
            written.append(target)
        }
        let fromFixtures = try StepMapping(xcodeMappingModelsAt: Self.passes, in: model, policies: Self.policies)
        let fromWritten = try StepMapping(xcodeMappingModelsAt: written, in: model, policies: Self.policies)
        #expect(fromFixtures == designed)
        #expect(fromWritten == designed)
        let xml = try String(contentsOf: Self.passes[0].appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        #expect(
            xml.contains(
                #"<attribute name="migrationpolicyclassname" type="string">EventSplit.EventLabelPolicy</attribute>"#))
        #expect(
            xml.contains(
                #"<attribute name="sourcemodelpath" type="string">EventSplit/EventSplit.xcdatamodeld/Event 1.xcdatamodel</attribute>"#
            ))
        let stepTwo = try String(contentsOf: Self.passes[1].appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        #expect(
            stepTwo.contains(
                #"<attribute name="sourcefilterpredicatestring" type="string">timeStamp != nil</attribute>"#))
    }

    @Test func runsBothPassesAndChecksEveryValue() throws {
        let model = try Self.model()
        let step = try StepMapping(xcodeMappingModelsAt: Self.passes, in: model, policies: Self.policies)
        #expect(step.sourceVersion == "Event 1" && step.destinationVersion == "Event 2")
        #expect(step.passes.map(\.name) == ["StepOne", "StepTwo"])
        let stamps: [Double?] = [0, 86_400 * 365 + 3_723, -1_000.25, nil, 1_000_000_000.5]
        let rows = stamps.enumerated().map { index, stamp in
            StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: Int64(index + 1)), version: 1,
                attributes: stamp.map { ["timeStamp": .date(Date(timeIntervalSinceReferenceDate: $0))] } ?? [:])
        }
        let manager = InMemoryMigrationManager(
            source: model.versions[0].model, rows: rows, destination: model.versions[1].model)
        try MappingRunner(policies: Self.policies).run(step.passes, manager: manager)
        let labels = manager.destinationRows.filter { $0.reference.entityName == "EventLabel" }
        let expectedLabels = stamps.map {
            $0.map { AttributeValue.string(EventLabelPolicy.label(Date(timeIntervalSinceReferenceDate: $0))) }
        }
        #expect(labels.map { $0.attributes["printedDate"] } == expectedLabels)
        #expect(labels.compactMap { $0.attributes["printedDate"] }.first == .string("2001-01-01 00:00:00"))
        let timed = manager.destinationRows.filter { $0.reference.entityName == "EventStamp" }
        // The filter keeps the events that have a date: four of five.
        #expect(timed.map { $0.attributes["timeStamp"] } == stamps.compactMap { $0 }.map { .double($0) })
        #expect(
            manager.destinationInstances(forMapping: "EventToEventStamp", sourceInstances: [rows[3].reference]).isEmpty)
        #expect(
            manager.destinationInstances(forMapping: "EventToEventLabel", sourceInstances: [rows[1].reference]) == [
                labels[1].reference
            ])
    }

    @Test func writeToAnXcmappingmodelPathWritesAStepOfOnePassAndRefusesSeveral() throws {
        let model = try Self.model()
        let designed = try Self.designedStep().resolved(in: model)
        let directory = try TemporaryDirectory()
        let target = directory.path("Both.xcmappingmodel")
        #expect(throws: MigrationError.self) { try designed.write(to: target) }
        #expect(!FileManager.default.fileExists(atPath: target.path))
        let second = StepMapping(
            from: designed.sourceVersion, to: designed.destinationVersion, passes: [designed.passes[1]])
        let one = directory.path("StepTwo.xcmappingmodel")
        try second.write(to: one)
        #expect(try StepMapping(xcodeMappingModelsAt: [one], in: model) == second)
        // The formatted date has no NSExpression Core Data evaluates: written as a policy function or refused.
        var formatted = designed.passes[0]
        formatted.entityMappings[0].attributeMappings = [
            PropertyMapping("printedDate", try ValueExpression(#"formatDate($source.timeStamp, "yyyy")"#))
        ]
        let refused = StepMapping(from: designed.sourceVersion, to: designed.destinationVersion, passes: [formatted])
        do {
            try refused.write(to: directory.path("Formatted.xcmappingmodel"))
            Issue.record("must fail")
        } catch {
            #expect(
                error.code == .invalidMapping && error.mappingName == "EventToEventLabel"
                    && error.propertyName == "printedDate")
            #expect(error.message.contains("formatDate() has no NSExpression that Core Data evaluates"))
        }
    }
}
