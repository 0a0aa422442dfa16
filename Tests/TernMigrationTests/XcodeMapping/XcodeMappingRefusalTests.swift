import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

/// What cannot be used is refused when the mapping model is read, before any store is opened:
/// an expression Tern cannot translate, a policy class or a selector that is not registered.
/// Each problem names the mapping model (its path), the entity mapping, the property and the
/// expression.
@Suite struct XcodeMappingRefusalTests {
    /// The seed's StepOne, with its xcmapping.xml changed by `edit`.
    static func stepOne(in folder: TemporaryDirectory, _ edit: (String) -> String) throws -> URL {
        let url = folder.path("StepOne.xcmappingmodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let xml = try String(
            contentsOf: XcodeMappingSeedTests.passes[0].appendingPathComponent("xcmapping.xml"), encoding: .utf8)
        try Data(edit(xml).utf8).write(to: url.appendingPathComponent("xcmapping.xml"))
        return url
    }

    /// The error reading a mapping model gives.
    static func refusal(_ url: URL, policies: MigrationPolicyRegistry?) throws -> MigrationError {
        let model = try XcodeMappingSeedTests.model()
        do {
            _ = try StepMapping(xcodeMappingModelsAt: [url], in: model, policies: policies)
        } catch {
            return error
        }
        Issue.record("the mapping model was read")
        return MigrationError(.invalidMapping, "")
    }

    @Test func aPolicyClassThatIsNotRegisteredIsRefused() throws {
        let folder = try TemporaryDirectory()
        let url = try Self.stepOne(in: folder) { $0 }
        let error = try Self.refusal(url, policies: MigrationPolicyRegistry())
        #expect(error.code == .unknownPolicy && error.path == url.path && error.failures.count == 1)
        let failure = try #require(error.failures.first)
        #expect(failure.mappingName == "EventToEventLabel" && failure.code == .unknownPolicy)
        #expect(
            failure.message.hasPrefix(
                "mapping model StepOne: no migration policy is registered under the class name EventSplit.EventLabelPolicy"
            ))
        #expect(
            error.description.hasPrefix(
                "The Xcode mapping model StepOne cannot be used (1 problem(s)); nothing was migrated (\(url.path))"))
        // Read without policies (nil), the mapping model is only read: the migration refuses it later.
        #expect(try StepMapping(xcodeMappingModelsAt: [url], in: try XcodeMappingSeedTests.model()).passes.count == 1)
    }

    @Test func aSelectorThePolicyDoesNotRegisterIsRefusedNamingThePropertyAndExpression() throws {
        let folder = try TemporaryDirectory()
        let url = try Self.stepOne(in: folder) { $0 }
        var policies = MigrationPolicyRegistry()
        policies.register(DefaultMigrationPolicy(), named: XcodeMappingSeedTests.policyName)
        let error = try Self.refusal(url, policies: policies)
        let failure = try #require(error.failures.first)
        #expect(
            error.code == .unknownPolicy && failure.mappingName == "EventToEventLabel"
                && failure.propertyName == "printedDate")
        #expect(
            failure.description
                == "mapping EventToEventLabel, EventLabel.printedDate: mapping model StepOne: 'FUNCTION($entityPolicy, \"labelForDate:\", "
                + "$source.timeStamp)' calls the selector labelForDate:, which the policy EventSplit.EventLabelPolicy does not register; "
                + "add it to the policy's expressionFunctions (\(url.path))")
    }

    @Test func anExpressionWithoutTranslationIsRefusedNamingItAndWhy() throws {
        let folder = try TemporaryDirectory()
        let odd = ExpressionNode.function(
            .variable("source"), selector: "labelWithStyle:", arguments: [.constant(.integer(2))])
        let url = try Self.stepOne(in: folder) { xml in
            let start = xml.range(of: #"<attribute name="valueexpressiondata" type="binary">"#)
            let end = xml.range(of: "</attribute>", range: (start?.upperBound ?? xml.startIndex)..<xml.endIndex)
            guard let start, let end else { return xml }
            return xml.replacingCharacters(
                in: start.upperBound..<end.lowerBound, with: odd.archivedData().base64EncodedString())
        }
        let error = try Self.refusal(url, policies: XcodeMappingSeedTests.policies)
        #expect(error.code == .invalidMapping && error.path == url.path)
        let failure = try #require(error.failures.first)
        #expect(
            failure.mappingName == "EventToEventLabel" && failure.entityName == "EventLabel"
                && failure.propertyName == "printedDate")
        #expect(
            failure.message
                == "mapping model StepOne: the expression 'FUNCTION($source, \"labelWithStyle:\", 2)' cannot be translated: the method "
                + "labelWithStyle: sent to $source has no translation; move it into a method of the entity's policy and call it "
                + "with FUNCTION($entityPolicy, …)")
    }

    @Test func aPolicyFunctionInAMappingWithoutAPolicyIsRefused() throws {
        let folder = try TemporaryDirectory()
        let url = try Self.stepOne(in: folder) {
            $0.replacingOccurrences(
                of:
                    #"<attribute name="migrationpolicyclassname" type="string">EventSplit.EventLabelPolicy</attribute>"#,
                with: "")
        }
        let error = try Self.refusal(url, policies: XcodeMappingSeedTests.policies)
        #expect(
            error.failures.map(\.message) == [
                "mapping model StepOne: 'FUNCTION($entityPolicy, \"labelForDate:\", $source.timeStamp)' calls $entityPolicy's labelForDate:, "
                    + "but the entity mapping names no policy class"
            ])
    }

    @Test func aMappingModelForOtherVersionsOrNotAMappingModelIsRefused() throws {
        let folder = try TemporaryDirectory()
        let other = try Self.stepOne(in: folder) {
            $0.replacingOccurrences(of: "Event 1.xcdatamodel", with: "Event 0.xcdatamodel")
        }
        let error = try Self.refusal(other, policies: nil)
        #expect(
            error.code == .unknownVersion && error.versionName == "Event 0"
                && error.message.contains("match no version of EventSplit"))
        let broken = folder.path("Broken.cdm")
        try Data("not an archive".utf8).write(to: broken)
        let unreadable = try Self.refusal(broken, policies: nil)
        #expect(unreadable.code == .unreadableMappingFile && unreadable.path == broken.path)
        #expect(
            unreadable.message.hasPrefix("The Xcode mapping model cannot be read: it is not a compiled mapping model"))
        let empty = folder.path("Empty.xcmappingmodel")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        #expect(try Self.refusal(empty, policies: nil).message.contains("the bundle has no readable xcmapping.xml"))
    }

    @Test func theRunnerRefusesWhatWasReadWithoutPoliciesBeforeItRuns() throws {
        let model = try XcodeMappingSeedTests.model()
        let step = try StepMapping(xcodeMappingModelsAt: XcodeMappingSeedTests.passes, in: model)
        let rows = [
            StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: 1), version: 1,
                attributes: ["timeStamp": .date(Date())])
        ]
        let manager = InMemoryMigrationManager(
            source: model.versions[0].model, rows: rows, destination: model.versions[1].model)
        #expect(throws: MigrationError.self) { try MappingRunner().run(step.passes, manager: manager) }
        #expect(manager.destinationRows.isEmpty)
        // Registered without the function its expression calls, the policy is refused before the first object too.
        var policies = MigrationPolicyRegistry()
        policies.register(DefaultMigrationPolicy(), named: XcodeMappingSeedTests.policyName)
        do {
            try MappingRunner(policies: policies).run(step.passes, manager: manager)
            Issue.record("must fail")
        } catch {
            #expect(
                error.code == .unknownPolicy && error.propertyName == "printedDate"
                    && error.message.contains("labelForDate:"))
        }
        #expect(manager.destinationRows.isEmpty)
    }
}
