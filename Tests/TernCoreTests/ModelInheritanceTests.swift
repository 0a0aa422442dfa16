import TernCore
import Testing

@Suite struct ModelInheritanceTests {
    private let model = FixtureModels.sampleModelV1

    @Test func walksUpTheChain() {
        #expect(model.parent(of: "ExpensiveSportCar")?.name == "SportCar")
        #expect(model.parent(of: "Car") == nil)
        #expect(model.parent(of: "Unknown") == nil)
        #expect(model.ancestors(of: "ExpensiveSportCar").map(\.name) == ["SportCar", "Car"])
        #expect(model.rootEntity(of: "ExpensiveSportCar")?.name == "Car")
        #expect(model.rootEntity(of: "Person")?.name == "Person")
        #expect(model.rootEntity(of: "Unknown") == nil)
    }

    @Test func walksDownTheTree() {
        #expect(model.subentities(of: "Car").map(\.name) == ["SportCar"])
        #expect(model.allSubentities(of: "Car").map(\.name) == ["SportCar", "ExpensiveSportCar"])
        #expect(model.allSubentities(of: "ExpensiveSportCar").isEmpty)
        #expect(model.subentities(of: "Person").isEmpty)
    }

    @Test func allSubentitiesIsDepthFirstWithSortedSiblings() {
        let tree = ManagedObjectModel(entities: [
            EntityDescription(name: "Root"), EntityDescription(name: "B", parent: "Root"),
            EntityDescription(name: "A", parent: "Root"), EntityDescription(name: "A2", parent: "A"),
            EntityDescription(name: "B1", parent: "B"),
        ])
        #expect(tree.allSubentities(of: "Root").map(\.name) == ["A", "A2", "B", "B1"])
    }

    @Test func kindOfFollowsInheritance() {
        #expect(model.isKind("ExpensiveSportCar", of: "Car"))
        #expect(model.isKind("Car", of: "Car"))
        #expect(!model.isKind("Car", of: "SportCar"))
        #expect(!model.isKind("Person", of: "Car"))
        #expect(!model.isKind("Unknown", of: "Unknown"))
    }

    @Test func inheritsPropertiesWithOverrides() {
        #expect(
            model.allAttributes(of: "ExpensiveSportCar").map(\.name) == [
                "color", "currentDrivingSpeed", "isLimitedEdition", "maker", "markedForDeletionAsOf", "model",
                "numberPlate",
            ])
        #expect(model.allRelationships(of: "SportCar").map(\.name) == ["owner"])
        #expect(model.allAttributes(of: "Unknown").isEmpty)

        var overridden = model
        overridden.entities[3].attributes = [AttributeDescription(name: "maker", type: .integer16)]  // SportCar
        #expect(overridden.allAttributes(of: "ExpensiveSportCar").first { $0.name == "maker" }?.type == .integer16)
        #expect(overridden.allAttributes(of: "Car").first { $0.name == "maker" }?.type == .string)
    }

    @Test func looksUpInheritedProperties() {
        #expect(model.relationship(named: "owner", inEntity: "ExpensiveSportCar")?.destinationEntityName == "Person")
        #expect(model.attribute(named: "numberPlate", inEntity: "SportCar")?.isOptional == false)
        #expect(model.attribute(named: "owner", inEntity: "SportCar") == nil)
        #expect(model.property(named: "isLimitedEdition", inEntity: "SportCar") == nil)
        #expect(model.property(named: "color", inEntity: "ExpensiveSportCar")?.name == "color")
    }

    @Test func toleratesCycles() {
        let cyclic = ManagedObjectModel(entities: [
            EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A"),
        ])
        #expect(cyclic.ancestors(of: "A").map(\.name) == ["B"])
        #expect(cyclic.rootEntity(of: "A")?.name == "B")
        #expect(cyclic.allSubentities(of: "A").map(\.name) == ["B"])
        #expect(!cyclic.isKind("A", of: "C"))
    }
}
