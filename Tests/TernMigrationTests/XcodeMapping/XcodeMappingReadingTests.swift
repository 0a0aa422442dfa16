import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@testable import TernMigration

/// Reading compiled `.cdm` mapping models, translating their expressions, and refusing what
/// cannot be used, naming the mapping model, entity mapping, property and expression.
@Suite struct XcodeMappingReadingTests {
    /// A compiled mapping model as Core Data archives an `NSMappingModel`.
    static func compiledMapping(
        source: ManagedObjectModel, destination: ManagedObjectModel, label: ExpressionNode, stamp: ExpressionNode,
        policy: String? = XcodeMappingSeedTests.policyName
    ) -> Data {
        var writer = KeyedArchiveWriter()
        func property(_ name: String, _ expression: ExpressionNode) -> BinaryPropertyList.Value {
            let archived = expression.archive(in: &writer)
            return writer.object(
                ["NSPropertyMapping", "NSObject"],
                fields: ["NSDestinationPropertyName": writer.string(name), "NSValueExpression": archived])
        }
        func fetch(_ predicate: String) -> BinaryPropertyList.Value {
            ExpressionNode.fetch(
                request: .function(
                    .variable("manager"), selector: "fetchRequestForSourceEntityNamed:predicateString:",
                    arguments: [.constant(.string("Event")), .constant(.string(predicate))]),
                context: .keyPath(.variable("manager"), "sourceContext"), countOnly: false
            ).archive(in: &writer)
        }
        func entity(
            _ name: String, type: Int64, destination entity: String, property: BinaryPropertyList.Value, filter: String,
            policy: String?, userInfo: [(String, String)]
        ) -> BinaryPropertyList.Value {
            var fields: [String: BinaryPropertyList.Value] = [
                "NSMappingName": writer.string(name), "NSMappingType": .integer(type),
                "NSSourceEntityName": writer.string("Event"),
                "NSSourceEntityVersionHash": writer.value(.data(source.entityVersionHashes["Event"] ?? Data())),
                "NSDestinationEntityName": writer.string(entity),
                "NSDestinationEntityVersionHash": writer.value(
                    .data(destination.entityVersionHashes[entity] ?? Data())),
                "NSSourceExpression": fetch(filter),
                "NSAttributeMappings": writer.array([property]), "NSRelationshipMappings": writer.array([]),
                "NSUserInfo": writer.dictionary(userInfo.map { (key: $0.0, value: writer.string($0.1)) }),
            ]
            if let policy { fields["NSEntityMigrationPolicyClassName"] = writer.string(policy) }
            return writer.object(["NSEntityMapping", "NSObject"], fields: fields)
        }
        let labelMapping = entity(
            "EventToEventLabel", type: 5, destination: "EventLabel", property: property("printedDate", label),
            filter: "TRUEPREDICATE",
            policy: policy, userInfo: [("note", "label")])
        let stampMapping = entity(
            "EventToEventStamp", type: 4, destination: "EventStamp", property: property("timeStamp", stamp),
            filter: "timeStamp != nil", policy: nil, userInfo: [])
        let root = writer.object(
            ["NSMappingModel", "NSObject"], fields: ["NSEntityMappings": writer.array([labelMapping, stampMapping])])
        return writer.archive(root: root)
    }

    static let policyLabel = ExpressionNode.function(
        .variable("entityPolicy"), selector: "labelForDate:", arguments: [.keyPath(.variable("source"), "timeStamp")])
    static let stampInterval = ExpressionNode.keyPath(.variable("source"), "timeStamp.timeIntervalSinceReferenceDate")

    @Test func readsACompiledMappingModelBoundByItsEntityHashes() throws {
        let model = try XcodeMappingSeedTests.model()
        let folder = try TemporaryDirectory()
        let url = folder.path("EventSplit.cdm")
        try Self.compiledMapping(
            source: model.versions[0].model, destination: model.versions[1].model, label: Self.policyLabel,
            stamp: Self.stampInterval
        ).write(to: url)
        #expect(try StepMapping.xcodeMappingVersions(at: url, in: model) == ("Event 1", "Event 2"))
        let step = try StepMapping(xcodeMappingModelsAt: [url], in: model, policies: XcodeMappingSeedTests.policies)
        #expect(
            step.sourceVersion == "Event 1" && step.destinationVersion == "Event 2"
                && step.passes.map(\.name) == ["EventSplit"])
        let pass = step.passes[0]
        #expect(pass.isBound(source: model.versions[0].model, destination: model.versions[1].model))
        #expect(pass.entityMappings.map(\.name) == ["EventToEventLabel", "EventToEventStamp"])
        let label = pass.entityMappings[0]
        #expect(
            label.kind == .transform && label.policyName == XcodeMappingSeedTests.policyName
                && label.userInfo == ["note": "label"])
        #expect(label.sourceFilter == nil)
        #expect(
            label.attributeMappings.map { "\($0.name)=\($0.valueExpression.map(String.init(describing:)) ?? "nil")" }
                == [#"printedDate=policy("labelForDate:", $source.timeStamp)"#])
        let stamp = pass.entityMappings[1]
        // A copy with property mappings runs them, as Core Data's default policy does: a transform.
        let filter = try FetchPredicate("timeStamp != nil")
        #expect(stamp.kind == .transform && stamp.sourceFilter == filter)
        #expect(
            stamp.attributeMappings.first?.valueExpression == .call(.timeInterval, [.source(keyPath: ["timeStamp"])]))
        // The same step as the two .xcmappingmodel files of the seed, in one pass.
        let seed = try StepMapping(
            xcodeMappingModelsAt: XcodeMappingSeedTests.passes, in: model, policies: XcodeMappingSeedTests.policies)
        #expect(
            seed.passes.flatMap(\.entityMappings).map(\.attributeMappings)
                == pass.entityMappings.map(\.attributeMappings))
    }

    @Test(arguments: [
        (ExpressionNode.keyPath(.variable("source"), "owner.name"), "$source.owner.name"),
        (.variable("source"), "$source"),
        (.constant(.integer(12)), "12"),
        (.constant(.real(1.5)), "1.5"),
        (.constant(.string("a \"b\"")), #""a \"b\"""#),
        (.constant(.bool(true)), "true"),
        (.constant(.null), "nil"),
        (
            .builtin(selector: "add:to:", arguments: [.keyPath(.variable("source"), "price"), .constant(.integer(1))]),
            "$source.price + 1"
        ),
        (
            .builtin(
                selector: "from:subtract:", arguments: [.keyPath(.variable("source"), "price"), .constant(.integer(1))]),
            "$source.price - 1"
        ),
        (
            .builtin(
                selector: "multiply:by:", arguments: [.keyPath(.variable("source"), "price"), .constant(.integer(2))]),
            "$source.price * 2"
        ),
        (
            .builtin(
                selector: "divide:by:", arguments: [.keyPath(.variable("source"), "price"), .constant(.integer(2))]),
            "$source.price / 2"
        ),
        (.builtin(selector: "now", arguments: []), "now()"),
        (
            .builtin(selector: "uppercase:", arguments: [.keyPath(.variable("source"), "name")]),
            "uppercase($source.name)"
        ),
        (
            .builtin(selector: "lowercase:", arguments: [.keyPath(.variable("source"), "name")]),
            "lowercase($source.name)"
        ),
        (
            .builtin(
                selector: "castObject:toType:",
                arguments: [.keyPath(.variable("source"), "count"), .constant(.string("NSString"))]),
            "string($source.count)"
        ),
        (
            .builtin(
                selector: "castObject:toType:",
                arguments: [.keyPath(.variable("source"), "text"), .constant(.string("NSNumber"))]),
            "number($source.text)"
        ),
        (
            .builtin(selector: "castObject:toType:", arguments: [.constant(.real(0)), .constant(.string("NSDate"))]),
            "date(0.0)"
        ),
        (.keyPath(.variable("source"), "name.uppercaseString"), "uppercase($source.name)"),
        (
            .function(.keyPath(.variable("source"), "name"), selector: "lowercaseString", arguments: []),
            "lowercase($source.name)"
        ),
        (.keyPath(.variable("source"), "count.stringValue"), "string($source.count)"),
        (
            .function(
                .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments: [.constant(.string("DeptToDept")), .keyPath(.variable("source"), "dept")]),
            #"destinationInstances("DeptToDept", $source.dept)"#
        ),
        (
            .function(
                .variable("manager"), selector: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                arguments: [.constant(.string("dept")), .keyPath(.variable("source"), "dept")]),
            "destinationInstances($source.dept)"
        ),
        (
            .function(
                .variable("entityPolicy"), selector: "hexFor:", arguments: [.keyPath(.variable("source"), "color")]),
            #"policy("hexFor:", $source.color)"#
        ),
    ])
    func translatesArchivedExpressions(node: ExpressionNode, expected: String) throws {
        // Only key paths the source model does not have end in a Foundation key.
        let known: Set<String> = ["owner.name", "price", "name", "count", "text", "dept", "color"]
        let archived = try ExpressionNode(archivedData: node.archivedData())
        #expect(archived == node)
        let translated = try XcodeExpressionTranslation.valueExpression(
            archived, isSourceKeyPath: { known.contains($0) })
        #expect(translated.description == expected)
    }

    @Test func writesTheExpressionsCoreDataEvaluatesAndRefusesTheOthers() throws {
        for text in [
            "$source.a.b", "$source.price * 2 + 1", "uppercase($source.name)", "string($source.n)",
            "timeInterval($source.t)",
            #"destinationInstances("AToB", $source.b)"#, #"policy("f:", $source.a, 3)"#, "now()", "date(12)",
        ] {
            let expression = try ValueExpression(text)
            let written = try XcodeExpressionTranslation.node(expression)
            let known: Set<String> = ["a.b", "price", "name", "n", "t", "b", "a"]
            #expect(
                try XcodeExpressionTranslation.valueExpression(written, isSourceKeyPath: { known.contains($0) })
                    == expression)
        }
        let format = try ValueExpression(#"formatDate($source.t, "yyyy")"#)
        #expect(throws: XcodeExpressionTranslation.Refusal.self) { try XcodeExpressionTranslation.node(format) }
    }
}
