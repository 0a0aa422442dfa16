import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

@Suite struct XcodeMappingCorpusTests {
    @Test func exploreCorpus() throws {
        for item in try RealWorldCorpus.items(of: .mappingModel) {
            guard let modelURL = item.modelURL else { continue }
            let model = try XcodeModel.readVersionedModel(at: modelURL)
            do {
                let step = try StepMapping(xcodeMappingModelsAt: [item.url], in: model)
                print("OK \(item): \(step.sourceVersion ?? "?") -> \(step.destinationVersion ?? "?")")
                for m in step.passes[0].entityMappings { print("   ", m.name, m.kind, m.sourceEntityName ?? "-", m.destinationEntityName ?? "-", m.policyName ?? "", m.userInfo, m.sourceFilter.map { "\($0)" } ?? "", m.propertyMappings.map { "\($0.name)=\($0.valueExpression.map { "\($0)" } ?? "nil")" }) }
            } catch {
                print("FAIL \(item): \(error)")
            }
        }
    }
}
extension XcodeMappingCorpusTests {
    @Test func debugAny() throws {
        let folder = RealWorldCorpus.root.appendingPathComponent("n-miyo__TPMigrationManager")
        let model = try XcodeModel.readVersionedModel(at: folder.appendingPathComponent("Any.xcdatamodeld"))
        let text = try String(contentsOf: folder.appendingPathComponent("AnyMap-2_3.xcmappingmodel/xcmapping.xml"), encoding: .utf8)
        for key in ["sourcemodeldata", "destinationmodeldata"] {
            guard let start = text.range(of: "name=\"\(key)\" type=\"binary\">"), let end = text.range(of: "</attribute>", range: start.upperBound..<text.endIndex) else { continue }
            let data = Data(base64Encoded: String(text[start.upperBound..<end.lowerBound]), options: .ignoreUnknownCharacters)!
            var warnings: [ModelReadingWarning] = []
            let embedded = try XcodeModel.model(fromElements: data, warnings: &warnings)
            for version in model.versions {
                let h = version.model.entityVersionHashes
                let e = embedded.entityVersionHashes
                print(key, version.name, h == e, e.keys.sorted(), h.keys.sorted(), e.filter { h[$0.key] != $0.value }.keys.sorted())
                for entity in embedded.entities { print("  ", entity.name, entity.properties.map { "\($0.name)" }) }
            }
        }
    }
}
