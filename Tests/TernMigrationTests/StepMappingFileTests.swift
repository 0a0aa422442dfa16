import Foundation
import TernCore
import TernFormats
import TernMigration
import Testing

/// The files in `Tests/TernMigrationTests/Fixtures`.
enum MigrationFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static var eventModel: URL { root.appendingPathComponent("EventModel.xcdatamodeld") }
    static var eventSplit: URL { root.appendingPathComponent("EventSplit.json") }
}

@Suite struct StepMappingFileTests {
    let events: VersionedModel

    init() throws {
        events = try XcodeModel.readVersionedModel(at: MigrationFixtures.eventModel)
    }

    @Test func readsTheEventExampleAndChecksItAgainstTheModel() throws {
        #expect(events.versions.map(\.name) == ["Event", "Event 2"])
        let step = try StepMapping(contentsOf: MigrationFixtures.eventSplit)
        #expect(step.sourceVersion == "Event" && step.destinationVersion == "Event 2")
        #expect(step.passes.map(\.name) == ["StepOne", "StepTwo"])
        let printed = try #require(step.passes[0].entityMappings.first)
        #expect(
            printed.kind == .transform && printed.sourceEntityName == "Event"
                && printed.destinationEntityName == "PrintedEvent")
        #expect(
            printed.attributeMappings
                == [
                    PropertyMapping(
                        "printedDate",
                        .call(.formatDate, [.source(keyPath: ["timeStamp"]), .literal(.string("yyyy-MM-dd HH:mm:ss"))]))
                ])
        #expect(step.passes[1].entityMappings.map(\.name) == ["EventToTimeStampEvent", "RemoveEvent"])

        let bound = try step.resolved(in: events)
        #expect(
            bound.passes.allSatisfy {
                $0.isBound(source: events.versions[0].model, destination: events.versions[1].model)
            })
        let plan = try MigrationPlanner(model: events, mappings: [step])
            .plan(storeHashes: events.versions[0].model.entityVersionHashes)
        #expect(plan.steps.map(\.kind) == [.mapping])
        #expect(plan.steps[0].mappings.map(\.name) == ["StepOne", "StepTwo"])
        // Without the mapping, the split cannot be inferred: Event's objects would simply go.
        let inferred = try MigrationPlanner(model: events).plan(
            storeHashes: events.versions[0].model.entityVersionHashes)
        #expect(inferred.steps.first?.changes.map(\.summary).contains("remove entity Event") == true)
    }

    @Test func migratesTheEventsInTwoPasses() throws {
        let step = try StepMapping(contentsOf: MigrationFixtures.eventSplit).resolved(in: events)
        let stamps: [Double] = [0, 86_400 * 365 + 3_723, -1_000]
        let rows =
            stamps.enumerated().map { index, stamp in
                StoreRow(
                    reference: RowReference(entityName: "Event", primaryKey: Int64(index + 1)), version: 1,
                    attributes: ["timeStamp": .date(Date(timeIntervalSinceReferenceDate: stamp))])
            } + [StoreRow(reference: RowReference(entityName: "Event", primaryKey: 4), version: 1)]
        let manager = InMemoryMigrationManager(
            source: events.versions[0].model, rows: rows, destination: events.versions[1].model)
        try MappingRunner().run(step.passes, manager: manager)
        let printed = manager.destinationRows.filter { $0.reference.entityName == "PrintedEvent" }
        let timed = manager.destinationRows.filter { $0.reference.entityName == "TimeStampEvent" }
        #expect(
            printed.map { $0.attributes["printedDate"] }
                == [
                    .string("2001-01-01 00:00:00"), .string("2002-01-01 01:02:03"), .string("2000-12-31 23:43:20"), nil,
                ])
        let expectedStamps: [AttributeValue?] = [.double(0), .double(86_400 * 365 + 3_723), .double(-1_000), nil]
        #expect(timed.map { $0.attributes["timeStamp"] } == expectedStamps)
        #expect(
            manager.destinationInstances(forMapping: "EventToPrintedEvent", sourceInstances: [rows[1].reference]) == [
                printed[1].reference
            ])
    }

    @Test func writesAndReadsBackTheSameMapping() throws {
        let step = try StepMapping(contentsOf: MigrationFixtures.eventSplit).resolved(in: events)
        let data = try step.jsonData()
        let reread = try StepMapping(jsonData: data)
        #expect(reread == step)
        let text = try #require(String(data: data, encoding: .utf8))
        #expect(text.contains(#""timeStamp" : "timeInterval($source.timeStamp)""#))
        #expect(text.contains(#""sourceHashes""#))

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-mapping-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("copy.json")
        try step.write(to: file)
        #expect(try StepMapping(contentsOf: file) == step)
    }

    @Test func readsASingleMappingModelWithFiltersAndRelationships() throws {
        let json = #"""
            {"name": "Cheap", "entityMappings": [
              {"kind": "transform", "source": "Car", "destination": "Car", "filter": "price < 1000 AND owner != nil",
               "attributes": {"price": "$source.price * 2", "label": null},
               "relationships": {"owner": "destinationInstances(\"PersonToPerson\", $source.owner)"}},
              {"kind": "copy", "source": "Person", "destination": "Person"},
              {"kind": "custom", "source": "Garage", "destination": "Garage", "policy": "GaragePolicy"}]}
            """#
        let step = try StepMapping(jsonData: Data(json.utf8))
        #expect(step.sourceVersion == nil && step.passes.count == 1 && step.passes[0].name == "Cheap")
        let car = try #require(step.passes[0].entityMapping(named: "CarToCar"))
        #expect(car.sourceFilter == (try FetchPredicate("price < 1000 AND owner != nil")))
        #expect(
            car.attributeMappings.map(\.name) == ["label", "price"] && car.attributeMappings[0].valueExpression == nil)
        #expect(
            car.relationshipMappings.first?.valueExpression?.description
                == #"destinationInstances("PersonToPerson", $source.owner)"#)
        #expect(step.passes[0].entityMapping(named: "GarageToGarage")?.policyName == "GaragePolicy")
    }

    @Test(arguments: [
        (
            #"{"entityMappings": [{"kind": "move", "source": "A"}]}"#, MigrationError.Code.invalidMapping,
            "Unknown entity mapping kind 'move'"
        ),
        (
            #"{"entityMappings": [{"kind": "transform", "source": "A", "destination": "B", "attributes": {"x": "tim($source.y)"}}]}"#,
            .invalidExpression, "Unknown function 'tim'"
        ),
        (
            #"{"entityMappings": [{"kind": "transform", "source": "A", "filter": "x =="}]}"#, .invalidMapping,
            "The filter does not parse"
        ),
        (
            #"{"entityMappings": [{"source": "A"}]}"#, .unreadableMappingFile,
            "The mapping file is not valid: \"kind\" is missing at entityMappings.[0]"
        ),
        (#"{"passes": 3}"#, .unreadableMappingFile, "The mapping file is not valid: wrong or missing value at passes"),
        (#"{"name": "x"}"#, .unreadableMappingFile, "The mapping file has neither"),
        ("not json", .unreadableMappingFile, "The mapping file is not valid"),
    ])
    func reportsBadFiles(json: String, code: MigrationError.Code, message: String) {
        #expect {
            _ = try StepMapping(jsonData: Data(json.utf8))
        } throws: { error in
            guard let error = error as? MigrationError else { return false }
            return error.code == code && error.message.hasPrefix(message)
        }
    }

    @Test func namesTheMappingPropertyAndPositionOfABadExpression() throws {
        let json =
            #"{"entityMappings": [{"name": "EventToStamp", "kind": "transform", "source": "Event", "destination": "TimeStampEvent", "attributes": {"timeStamp": "timeInterval($source.timeStamp, 1)"}}]}"#
        do {
            _ = try StepMapping(jsonData: Data(json.utf8))
            Issue.record("must fail")
        } catch {
            #expect(error.mappingName == "EventToStamp" && error.propertyName == "timeStamp" && error.position == 0)
            #expect(
                error.description
                    == "mapping EventToStamp, TimeStampEvent.timeStamp, at 0: timeInterval takes 1 argument(s), not 2")
        }
    }

    @Test func typeChecksAgainstBothModels() throws {
        let v1 = events.versions[0].model
        let v2 = events.versions[1].model
        func problems(_ attributes: [String: String], destination: String = "TimeStampEvent") throws -> [String] {
            var mappings: [PropertyMapping] = []
            for (name, text) in attributes { mappings.append(PropertyMapping(name, try ValueExpression(text))) }
            let model = MappingModel(
                name: "Check",
                entityMappings: [
                    EntityMapping(
                        name: "M", kind: .transform, source: "Event", destination: destination, attributes: mappings)
                ])
            return model.validationProblems(source: v1, destination: v2).map(\.description)
        }
        #expect(try problems(["timeStamp": "timeInterval($source.timeStamp)"]).isEmpty)
        #expect(
            try problems(["timeStamp": "$source.timeStamp"])
                == [
                    "mapping M, TimeStampEvent.timeStamp: '$source.timeStamp' gives a date but TimeStampEvent.timeStamp is Double; convert it, for example with double(…)"
                ])
        #expect(
            try problems(["timeStamp": "1 + timeInterval($source.when)"])
                == [
                    "mapping M, TimeStampEvent.timeStamp, at 17: unknown key path $source.when: Event has no property 'when' (in '1 + timeInterval($source.when)')"
                ])
        #expect(
            try problems(["printedDate": "lowercase($source.timeStamp)"], destination: "PrintedEvent")
                == [
                    "mapping M, PrintedEvent.printedDate, at 0: argument 1 of lowercase() must be text, not a date (in 'lowercase($source.timeStamp)')"
                ])
        #expect(
            try problems(["printedDate": "concat('a') + 1"], destination: "PrintedEvent").first?
                .contains("'+' needs numbers, not text and a number; join text with concat()") == true)
        #expect(
            try problems(["nothing": "1"]) == [
                "mapping M, TimeStampEvent.nothing: TimeStampEvent has no attribute 'nothing'"
            ])
        #expect(
            try problems(["timeStamp": #"destinationInstances("Nope", $source)"#]).first?
                .contains("destinationInstances() names the unknown entity mapping 'Nope'") == true)
        let wrongKinds = MappingModel(
            name: "Kinds",
            entityMappings: [
                EntityMapping(kind: .add, source: "Event", destination: "PrintedEvent"),
                EntityMapping(kind: .transform, source: "Ghost", destination: "PrintedEvent"),
                EntityMapping(kind: .custom, source: "Event", destination: "PrintedEvent"),
                EntityMapping(kind: .copy, source: "Event", destination: "TimeStampEvent"),
            ])
        let messages = wrongKinds.validationProblems(source: v1, destination: v2).map(\.message)
        #expect(
            messages == [
                "An add mapping has no source entity", "The source model has no entity Ghost",
                "A custom mapping needs the name of its migration policy",
                "A copy needs Event and TimeStampEvent to have the same attributes and relationships; use transform",
            ])
        // A missing source entity is the source's fault: the problem names it, not the destination.
        let ghost = wrongKinds.validationProblems(source: v1, destination: v2).first { $0.message.hasSuffix("Ghost") }
        #expect(ghost?.entityName == "Ghost")
        #expect(ghost?.description.contains("entity Ghost: ") == true)
    }
}
