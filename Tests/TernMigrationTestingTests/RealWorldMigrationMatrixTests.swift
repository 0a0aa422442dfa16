import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

@testable import TernMigrationTesting

/// The migration test kit on every model of the real-world corpus that has several versions:
/// a store of sample objects per version, migrated by inference alone to the current version.
@Suite struct RealWorldMigrationMatrixTests {
    /// A corpus model with several versions.
    struct Model: Sendable, CustomStringConvertible {
        var item: RealWorldCorpus.Item
        var description: String { item.description }
    }

    static let models: [Model] = ((try? RealWorldCorpus.items(of: .model)) ?? []).filter { item in
        (try? XcodeModel.readVersionedModel(at: item.url).versions.count) ?? 0 > 1
    }.map(Model.init)

    /// The models some of whose versions cannot migrate by inference alone to the current one,
    /// each for a reason Core Data shares, with the code of the migration's error:
    /// `notInferable` where the app ships a mapping model (or a change needs one), and
    /// `constraintViolated` where a version adds a required attribute or relationship without a
    /// default, which Core Data's lightweight migration refuses for a store with objects (the
    /// sample stores have some).
    static let expectedFailures: [String: MigrationError.Code] = [
        "MIT-Mobile__MIT-Mobile-for-iPhone/CampusMap.xcdatamodeld": .constraintViolated,  // MapSearch.token
        "MIT-Mobile__MIT-Mobile-for-iPhone/News.xcdatamodeld": .notInferable,
        "SwiftGen__SwiftGen/Model.xcdatamodeld": .constraintViolated,  // ChildEntity.boolean
        "carekit-apple__CareKit/CareKitStore.xcdatamodeld": .notInferable,  // ships 2.0_2.1_Mapping
        "duckduckgo__macos-browser/Bookmark.xcdatamodeld": .constraintViolated,  // BookmarkManagedObject.id
        // The current version is the oldest one: version 3's store would be migrated back.
        "mwkirk__MWKCoreData/MWKCoreDataTests.xcdatamodeld": .constraintViolated,
        "n-miyo__TPMigrationManager/SpecificOnly.xcdatamodeld": .notInferable,  // ships SpecificOnlyMap-1_2
        "n-miyo__TPMigrationManager/NoMap.xcdatamodeld": .notInferable,
        // Ships MappingModel1.2.0to2.0.2.
        "richardpiazza__XCServerCoreData/XCServerCoreData.xcdatamodeld": .notInferable,
        // Ships Migration1to2.
        "wibosco__CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld": .notInferable,
        "willowtreeapps__vocable-ios/Phrases.xcdatamodeld": .constraintViolated,  // Phrase.category; ships v2_to_v3
    ]

    @Test func theCorpusHasModelsWithSeveralVersions() {
        #expect(Self.models.count >= 40, "\(Self.models.count)")
        let names = Set(Self.models.map(\.description))
        #expect(
            Set(Self.expectedFailures.keys).isSubset(of: names), "\(Set(Self.expectedFailures.keys).subtracting(names))"
        )
    }

    @Test(arguments: models)
    func everyVersionMigratesOrFailsForItsReason(_ model: Model) async throws {
        let versioned = try XcodeModel.readVersionedModel(at: model.item.url)
        let expected = Self.expectedFailures[model.description]
        do {
            let results = try await MigrationTesting.everyVersionMigrates(model: versioned, objectsPerEntity: 3)
            #expect(
                expected == nil,
                "\(model) migrates, but is listed as failing with \(expected.map(String.init(describing:)) ?? "")")
            #expect(results.count == versioned.versions.count - 1)
        } catch let error as MigrationTestError {
            let cause = error.underlyingError as? MigrationError
            #expect(
                error.code == .migrationFailed && cause?.code == expected && expected != nil,
                "\(model): \(error.message)")
            #expect(error.sourceVersion.map { versioned.version(named: $0) != nil } == true)
        }
    }
}
