import ChefsBook
import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernTestSupport
import Testing

@testable import TernMigrationTesting

/// The migration test kit on the Chef's Book and on models built to break.
@Suite struct MigrationTestingTests {
    @Test(arguments: ChefsBook.versionNames)
    func sampleObjectsMakeAStoreThatVerifiesClean(version: String) async throws {
        let model = try ChefsBook.model()
        let objects = try MigrationTesting.sampleObjects(
            for: try #require(model.version(named: version)).model, count: 6)
        let tmp = try TemporaryDirectory()
        let url = try await MigrationTesting.makeStore(
            version: version, of: model, at: tmp.path("Book.sqlite"), objects: objects)
        let report = try await StoreVerifier.verify(
            storeAt: url, model: try #require(model.version(named: version)).model)
        #expect(report.problems.isEmpty, "\(report.problems)")
        #expect(report.objectCount == objects.count)
        #expect(try model.version(matching: SQLiteStore.metadata(at: url))?.name == version)
    }

    @Test func sampleObjectsKeepInversesAndRequiredLinks() throws {
        let model = try ManagedObjectModel {
            Entity("Recipe") {
                Attribute("title", .string).required()
                Attribute("rating", .integer16).range(1...5)
                Relationship("steps", to: "Step", inverse: "recipe").toMany(ordered: true).count(1...3)
            }
            Entity("Step") {
                Attribute("text", .string)
                Relationship("recipe", to: "Recipe", inverse: "steps").required()
            }
        }
        let rows = try MigrationTesting.sampleObjects(for: model, count: 4)
        let recipes = rows.filter { $0.reference.entityName == "Recipe" }
        let steps = rows.filter { $0.reference.entityName == "Step" }
        #expect(recipes.count == 4 && steps.count == 4)
        #expect(recipes.allSatisfy { $0.attributes["title"] != nil })
        #expect(
            recipes.compactMap { $0.attributes["rating"] }.allSatisfy {
                $0 == .integer(1) || $0 == .integer(2) || $0 == .integer(3) || $0 == .integer(4) || $0 == .integer(5)
            })
        for step in steps {
            let recipe = try #require(step.toOne["recipe"])
            let owner = try #require(recipes.first { $0.reference == recipe })
            #expect(owner.toMany["steps"]?.contains(step.reference) == true)
        }
        #expect(recipes.allSatisfy { (1...3).contains($0.toMany["steps"]?.count ?? 0) })
    }

    @Test func everyVersionOfTheChefsBookMigratesWithItsMappings() async throws {
        let model = try ChefsBook.model()
        let results = try await MigrationTesting.everyVersionMigrates(
            model: model, mappings: try ChefsBook.mappings(for: model), policies: ChefsBook.policies,
            objectsPerEntity: 4)
        #expect(results.map(\.version) == Array(ChefsBook.versionNames.dropLast()))
        #expect(results.allSatisfy { $0.report.plan.destination == "ChefsBook 4" })
    }

    @Test func withoutItsMappingsTheChefsBookFailsNamingTheVersionAndTheProperty() async throws {
        let model = try ChefsBook.model()
        let error = await #expect(throws: MigrationTestError.self) {
            try await MigrationTesting.everyVersionMigrates(model: model, objectsPerEntity: 3)
        }
        let failure = try #require(error)
        #expect(failure.code == .migrationFailed && failure.sourceVersion == "ChefsBook 1")
        #expect(failure.underlyingError is MigrationError)
        #expect(failure.message.contains("cannot be inferred"), "\(failure.message)")
    }

    /// v2 makes `note` required without a default: the sample objects that have none (one in
    /// three) stop the migration, which the kit reports with the version and the property.
    @Test func aRequiredValueTheSamplesLackIsReportedWithItsVersionAndProperty() async throws {
        let model = try VersionedModel("Notes") {
            ModelVersion("v1") { Entity("Note") { Attribute("note", .string) } }
            ModelVersion("v2") { Entity("Note") { Attribute("note", .string).required() } }
        }
        let error = await #expect(throws: MigrationTestError.self) {
            try await MigrationTesting.everyVersionMigrates(model: model, objectsPerEntity: 3)
        }
        #expect(error?.sourceVersion == "v1" && error?.entityName == "Note" && error?.propertyName == "note")
        #expect(error?.message.contains("1 Note object(s) have no value") == true, "\(error?.message ?? "")")
    }

    @Test func aFixtureIsMigratedFromACopyAndLeftAsItWas() async throws {
        let item = try #require(
            try RealWorldCorpus.items(of: .store).first {
                $0.path.hasSuffix("CoreDataMigration_Example_3.sqlite")
                    && $0.folder.lastPathComponent.hasPrefix("wibosco__CoreDataMigration-Example")
            })
        let model = try XcodeModel.readVersionedModel(at: item.folder.appendingPathComponent(try #require(item.model)))
        let before = try Data(contentsOf: item.url)
        let report = try await MigrationTesting.migrateAndValidate(copyOf: item.url, model: model)
        #expect(report.plan.destination == model.currentVersion.name)
        #expect(try Data(contentsOf: item.url) == before)
    }

    @Test func theCountsFollowTheEntityMappings() {
        let counts: [String: Int?] = ["A": 3, "B": 2, "C": 5]
        let carried = Accounting.carry(
            counts,
            through: [
                EntityMapping(kind: .copy, source: "A", destination: "A"),
                EntityMapping(kind: .transform, source: "B", destination: "A2"),
                EntityMapping(kind: .transform, source: "C", destination: "A2"),
                EntityMapping(kind: .custom, source: "C", destination: "D"),
                EntityMapping(kind: .add, source: nil, destination: "E"),
            ])
        #expect(carried["A"] == 3 && carried["A2"] == 7 && carried["E"] == 0)
        #expect(carried["D"] == .some(nil) && carried["B"] == nil)
    }
}
