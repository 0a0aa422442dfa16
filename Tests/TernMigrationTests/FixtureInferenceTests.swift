import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

@Suite struct FixtureInferenceTests {
    let sample: VersionedModel

    init() throws {
        sample = try XcodeModel.readVersionedModel(
            at: Fixtures.sampleModel, order: ["SampleModel", "SampleModel2", "SampleModel3"])
    }

    @Test func printsSample() throws {
        let v1 = try #require(sample.version(named: "SampleModel")).model
        let v2 = try #require(sample.version(named: "SampleModel2")).model
        let v3 = try #require(sample.version(named: "SampleModel3")).model
        for (a, b, via) in [(v1, v2, [ManagedObjectModel]()), (v2, v3, []), (v1, v3, [v2]), (v1, v3, [])] {
            let inference = MappingInference(from: a, to: b, through: via)
            print("----")
            for change in inference.changes { print(change) }
            for issue in inference.issues { print("ISSUE", issue) }
            for mapping in inference.mapping.entityMappings {
                print(mapping.name, mapping.kind, mapping.propertyMappings.map { "\($0.name)=\($0.valueExpression.map(String.init(describing:)) ?? "-")" })
            }
        }
    }
}
