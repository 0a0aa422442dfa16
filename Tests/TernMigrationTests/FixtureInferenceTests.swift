import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

/// Inference over the real CoreDataPlus SampleModel bundle, whose stores Core Data wrote.
@Suite struct FixtureInferenceTests {
    let sample: VersionedModel

    init() throws {
        sample = try XcodeModel.readVersionedModel(
            at: Fixtures.sampleModel, order: ["SampleModel", "SampleModel2", "SampleModel3"])
    }

    func model(_ name: String) throws -> ManagedObjectModel {
        try #require(sample.version(named: name)).model
    }

    @Test func sampleModelToSampleModel2RenamesTheExpensiveSportCar() throws {
        let inference = MappingInference(from: try model("SampleModel"), to: try model("SampleModel2"))
        #expect(inference.isInferable)
        #expect(
            inference.changes.map(\.summary) == [
                "rename entity ExpensiveSportCar to LuxuryCar", "remove attribute Car.color",
                "remove attribute Person.id",
            ])
        #expect(
            inference.mapping.entityMappings.map(\.name) == [
                "CarToCar", "ExpensiveSportCarToLuxuryCar", "PersonToPerson", "SportCarToSportCar",
            ])
        #expect(inference.mapping.entityMappings.allSatisfy { $0.kind == .transform })
        let luxury = try #require(inference.mapping.entityMapping(named: "ExpensiveSportCarToLuxuryCar"))
        #expect(
            luxury.attributeMappings.map(\.name) == [
                "isLimitedEdition", "maker", "markedForDeletionAsOf", "model", "numberPlate",
            ])
        #expect(
            luxury.relationshipMappings.map(\.valueExpression?.description) == ["destinationInstances($source.owner)"])
        try inference.mapping.validate(source: try model("SampleModel"), destination: try model("SampleModel2"))
    }

    @Test func sampleModel2ToSampleModel3InfersButDropsTheMakerText() throws {
        let inference = MappingInference(from: try model("SampleModel2"), to: try model("SampleModel3"))
        #expect(inference.isInferable)
        #expect(
            Set(inference.changes.map(\.summary)) == [
                "add relationship Car.createdBy", "add relationship Car.previousOwners", "add entity Maker",
                "add relationship Person.previousCars", "remove attribute Car.maker",
            ])
        #expect(inference.mapping.entityMapping(named: "AddMaker")?.kind == .add)
        #expect(inference.mapping.entityMapping(named: "LuxuryCarToLuxuryCar") != nil)
    }

    @Test func theStoresMigrateToSampleModel3InOneInferredStep() throws {
        for version in ["SampleModel", "SampleModel2"] {
            let plan = try MigrationPlanner(model: sample).plan(
                storeHashes: try model(version).entityVersionHashes, to: "SampleModel3")
            #expect(
                plan.steps.map { "\($0.from)→\($0.to):\($0.kind.rawValue)" } == ["\(version)→SampleModel3:inferred"])
            #expect(plan.isExecutable)
            let changes = try #require(plan.steps.first).changes.map(\.summary)
            #expect(changes.contains("remove attribute Car.maker"))
            #expect(changes.contains("rename entity ExpensiveSportCar to LuxuryCar") == (version == "SampleModel"))
        }
    }

    @Test func theBundlesCurrentVersionIsTheOldest() throws {
        // The bundle's .xccurrentversion names SampleModel, so a plan to the current version from
        // SampleModel2 is a downgrade.
        #expect(sample.currentVersionName == "SampleModel")
        #expect {
            _ = try MigrationPlanner(model: sample).plan(storeHashes: try model("SampleModel2").entityVersionHashes)
        } throws: { ($0 as? MigrationError)?.code == .downgradeRefused }
    }
}

extension FixtureInferenceTests {
    @Test func inferredMappingsSurviveAMappingFile() throws {
        let inferred = try MappingModel.inferred(from: try model("SampleModel"), to: try model("SampleModel3"))
        let step = StepMapping(from: "SampleModel", to: "SampleModel3", passes: [inferred])
        let reread = try StepMapping(jsonData: try step.jsonData())
        #expect(reread == step)
        #expect(try reread.resolved(in: sample) == step)
    }
}
