import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernTestSupport
import Testing

/// `tern plan` and `tern migrate` with Xcode mapping models: given with --mapping, found beside
/// the model as Core Data finds them in the app's bundle, or in --mappings DIR; refused before
/// anything is touched when they cannot be used.
@Suite struct XcodeMappingCommandTests {
    static let wibosco = RealWorldCorpus.root.appendingPathComponent("wibosco__CoreDataMigration-Example")
    static var wiboscoModel: URL { wibosco.appendingPathComponent("CoreDataMigration_Example.xcdatamodeld") }
    static let eventSplit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TernMigrationTests/Fixtures/EventSplit")

    /// Posts of a store by postID: (color or hexColor).
    static func posts(_ url: URL, model: ManagedObjectModel, key: String) async throws -> [String: AttributeValue?] {
        let store = try SQLiteStore(at: url, model: model)
        var result: [String: AttributeValue?] = [:]
        for row in try await store.fetch(StoreFetchRequest(entityName: "Post")) {
            guard case .string(let id)? = row.attributes["postID"] else { continue }
            result[id] = row.attributes[key]
        }
        return result
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func theMappingModelBesideTheModelIsUsedForTheStepItMapsAndPlanSaysSo() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Self.wibosco.appendingPathComponent("CoreDataMigration_Example_1.sqlite"))
        let plan = await ToolRunner.run([
            "plan", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 2", "--json",
        ])
        #expect(plan.status == 0, "\(plan.standardError)")
        let steps = try #require(try Self.json(plan.standardOutput)["steps"] as? [[String: Any]])
        #expect(steps.count == 1 && steps[0]["kind"] as? String == "mapping")
        let origin = try #require(steps[0]["mapping"] as? [String: Any])
        #expect(origin["from"] as? String == "model folder")
        #expect(
            origin["paths"] as? [String] == [Self.wibosco.appendingPathComponent("Migration1to2.xcmappingmodel").path])
        #expect(plan.standardError.contains("using the mapping model"))

        // Migrated with it, every Post keeps its row and gets hexColor from its old color.
        let model = try XcodeModel.readVersionedModel(at: Self.wiboscoModel)
        let before = try await Self.posts(
            store, model: try #require(model.version(named: "CoreDataMigration_Example")).model, key: "color")
        let migrate = await ToolRunner.run([
            "migrate", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 2",
        ])
        #expect(migrate.status == 0, "\(migrate.standardError)")
        let after = try await Self.posts(
            store, model: try #require(model.version(named: "CoreDataMigration_Example 2")).model, key: "hexColor")
        #expect(before.count == 1001 && after == before)
        #expect(after.values.contains { $0 != nil })
    }

    @Test func aStepWithoutAMappingModelBesideTheModelIsInferredAsBefore() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Self.wibosco.appendingPathComponent("CoreDataMigration_Example_1.sqlite"))
        // No mapping model maps version 1 to 3 directly: one inferred step, as Core Data would infer it.
        let plan = await ToolRunner.run([
            "plan", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 3", "--json",
        ])
        let steps = try #require(try Self.json(plan.standardOutput)["steps"] as? [[String: Any]])
        #expect(steps.map { $0["kind"] as? String } == ["inferred"] && steps[0]["mapping"] is NSNull)
        #expect(!plan.standardError.contains("using the mapping model"))
    }

    @Test func mappingsDirAndExplicitMappingsSayWhereTheyCameFrom() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Self.wibosco.appendingPathComponent("CoreDataMigration_Example_1.sqlite"))
        let mappings = try TemporaryDirectory()
        try mappings.copy(Self.wibosco.appendingPathComponent("Migration1to2.xcmappingmodel"))
        let folder = mappings.url
        let viaFolder = await ToolRunner.run([
            "plan", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 2", "--mappings",
            folder.path,
            "--json",
        ])
        let steps = try #require(try Self.json(viaFolder.standardOutput)["steps"] as? [[String: Any]])
        #expect((steps.first?["mapping"] as? [String: Any])?["from"] as? String == "--mappings")
        let explicit = Self.wibosco.appendingPathComponent("Migration1to2.xcmappingmodel").path
        let viaOption = await ToolRunner.run([
            "plan", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 2", "--mapping",
            explicit, "--json",
        ])
        let optionSteps = try #require(try Self.json(viaOption.standardOutput)["steps"] as? [[String: Any]])
        let origin = try #require(optionSteps.first?["mapping"] as? [String: Any])
        #expect(origin["from"] as? String == "--mapping" && origin["paths"] as? [String] == [explicit])
        #expect(!viaOption.standardError.contains("using the mapping model"))
    }

    @Test func aMappingModelThatNeedsAPolicyIsRefusedBeforeAnythingIsTouched() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Self.wibosco.appendingPathComponent("CoreDataMigration_Example_2.sqlite"))
        let before = try Data(contentsOf: store)
        let result = await ToolRunner.run([
            "migrate", store.path, "--model", Self.wiboscoModel.path, "--to", "CoreDataMigration_Example 3",
        ])
        #expect(result.status == 1)
        let lines = result.errorLines
        #expect(
            lines.first?.contains("cannot use the mapping model") == true
                && lines.first?.contains("Migration2to3.xcmappingmodel") == true)
        #expect(
            lines.contains {
                $0.contains("mapping PostToPost")
                    && $0.contains("CoreDataMigration_Example.Post2ToPost3MigrationPolicy")
            })
        #expect(lines.contains { $0.contains("tern cannot run Swift policies") })
        #expect(try Data(contentsOf: store) == before)
    }

    @Test func theSeedsSecondPassMigratesAStoreAndTheFirstIsRefusedForItsPolicy() async throws {
        let tmp = try TemporaryDirectory()
        let modelURL = Self.eventSplit.appendingPathComponent("EventSplit.xcdatamodeld")
        let model = try XcodeModel.readVersionedModel(at: modelURL)
        let url = tmp.path("Events.sqlite")
        let stamps: [Double?] = [0, 3_723.5, nil]
        do {
            let store = try SQLiteStore(at: url, model: model.versions[0].model)
            let rows = stamps.enumerated().map { index, stamp in
                StoreRow(
                    reference: RowReference(entityName: "Event", primaryKey: Int64(index + 1)), version: 1,
                    attributes: stamp.map { ["timeStamp": .date(Date(timeIntervalSinceReferenceDate: $0))] } ?? [:])
            }
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        let stepOne = Self.eventSplit.appendingPathComponent("StepOne.xcmappingmodel").path
        let stepTwo = Self.eventSplit.appendingPathComponent("StepTwo.xcmappingmodel").path
        let refused = await ToolRunner.run([
            "plan", url.path, "--model", modelURL.path, "--mapping", stepOne, "--mapping", stepTwo,
        ])
        #expect(refused.status == 1)
        #expect(
            refused.errorLines.first
                == "error: cannot use the mapping model \(stepOne), \(stepTwo): The Xcode mapping model StepOne cannot be used (1 problem(s)); nothing was migrated"
        )
        #expect(
            refused.errorLines.contains {
                $0.contains("mapping EventToEventLabel") && $0.contains("EventSplit.EventLabelPolicy")
            })

        let migrated = await ToolRunner.run(["migrate", url.path, "--model", modelURL.path, "--mapping", stepTwo])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        let store = try SQLiteStore(at: url, model: model.versions[1].model)
        let values = try await store.fetch(StoreFetchRequest(entityName: "EventStamp")).map {
            $0.attributes["timeStamp"]
        }
        #expect(values.sorted { "\($0 as Any)" < "\($1 as Any)" } == [.double(0), .double(3_723.5)])
        #expect(try await store.fetch(StoreFetchRequest(entityName: "EventLabel")).isEmpty)
    }
}
