import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@testable import TernMigration

/// Every Xcode mapping model of the corpus is read, and every archived expression in it
/// translates; those whose folder has their model are bound and run in TernSQLiteTests'
/// XcodeMappingCorpusRunTests.
@Suite struct XcodeMappingCorpusTests {
    static let items: [RealWorldCorpus.Item] = (try? RealWorldCorpus.items(of: .mappingModel)) ?? []

    @Test func theCorpusHoldsEveryMappingModel() {
        #expect(Self.items.count >= 36)
    }

    @Test(arguments: items)
    func readsTheMappingModelAndTranslatesEveryExpression(_ item: RealWorldCorpus.Item) throws {
        let description = try XcodeMappingDescription(contentsOf: item.url)
        #expect(!description.entityMappings.isEmpty)
        #expect(description.sourceModelPath?.hasSuffix(".xcdatamodel") == true)
        // Xcode embeds both models; they read as Xcode 3 models do.
        #expect(description.sourceModelHashes?.isEmpty == false && description.destinationModelHashes?.isEmpty == false)
        var refusals: [String] = []
        for mapping in description.entityMappings {
            #expect(mapping.sourceEntityName != nil || mapping.destinationEntityName != nil)
            for property in mapping.attributeMappings + mapping.relationshipMappings {
                guard let node = property.expression ?? property.inspectorExpression(defaultMapping: nil) else {
                    continue
                }
                do throws(XcodeExpressionTranslation.Refusal) {
                    _ = try XcodeExpressionTranslation.valueExpression(node)
                } catch {
                    refusals.append("\(mapping.effectiveName).\(property.name): \(error.reason)")
                }
            }
        }
        // AppCore's policy methods take the destination object and the migration manager, which
        // Tern's policy functions do not get: the only expressions of the corpus without a translation.
        let expected: [String] =
            item.path.hasPrefix("APCMapping")
            ? [
                "APCScheduleToAPCSchedule.maxCount: the variable $destination has no value in Tern; only $source does",
                "APCScheduleToAPCSchedule.tasks: the variable $manager has no value in Tern; only $source does",
            ] : []
        #expect(refusals == expected, "\(item)")
    }
}
