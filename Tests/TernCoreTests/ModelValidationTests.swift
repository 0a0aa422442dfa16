import Foundation
import TernCore
import Testing

/// Each validation rule, on a model built by hand so that the builder's own validation does
/// not stand in the way.
@Suite struct ModelValidationTests {
    /// The place and kind of each issue, for exact comparison.
    private struct Found: Hashable, CustomStringConvertible {
        var kind: ModelIssue.Kind
        var entity: String
        var property: String?
        var description: String { "\(kind) at \(entity).\(property ?? "-")" }
    }

    private func found(_ entities: [EntityDescription]) -> [Found] {
        found(ManagedObjectModel(entities: entities))
    }

    private func found(_ model: ManagedObjectModel) -> [Found] {
        model.validationIssues.map { Found(kind: $0.kind, entity: $0.entityName, property: $0.propertyName) }
    }

    private func attribute(_ change: (inout AttributeDescription) -> Void, type: AttributeType = .string) -> [Found] {
        var attribute = AttributeDescription(name: "value", type: type)
        change(&attribute)
        return found([EntityDescription(name: "Item", attributes: [attribute])])
    }

    // MARK: - Valid models

    @Test func fixtureModelsAreValid() throws {
        for model in [
            FixtureModels.sampleModelV1, FixtureModels.sampleModelV2, FixtureModels.sampleModelV3,
            FixtureModels.sampleModel3V1, FixtureModels.sampleModel3V2, FixtureModels.sampleModel3V3,
            FixtureModels.testModel,
        ] {
            #expect(model.validationIssues.isEmpty, "\(model.validationIssues)")
            try model.validate()
        }
    }

    @Test func abstractEntityWithoutSubentitiesIsAllowed() {
        #expect(found([EntityDescription(name: "Shape", isAbstract: true)]).isEmpty)
    }

    @Test func selfInverseRelationshipIsValid() {
        let person = EntityDescription(
            name: "Person",
            relationships: [RelationshipDescription(name: "spouse", destination: "Person", inverse: "spouse")])
        #expect(found([person]).isEmpty)
    }

    // MARK: - Names

    @Test func rejectsDuplicateEntities() {
        #expect(
            found([EntityDescription(name: "A"), EntityDescription(name: "A")]) == [
                Found(kind: .duplicateEntity, entity: "A")
            ])
    }

    @Test func rejectsBadNames() {
        #expect(found([EntityDescription(name: "")]) == [Found(kind: .invalidName, entity: "")])
        #expect(found([EntityDescription(name: "2Cars")]) == [Found(kind: .invalidName, entity: "2Cars")])
        #expect(
            found([EntityDescription(name: "Car", attributes: [AttributeDescription(name: "the plate", type: .string)])]
            )
                == [Found(kind: .invalidName, entity: "Car", property: "the plate")])
        #expect(
            found([EntityDescription(name: "Car", attributes: [AttributeDescription(name: "", type: .string)])])
                == [Found(kind: .invalidName, entity: "Car", property: "")])
        #expect(found([EntityDescription(name: "_Café2")]).isEmpty)
    }

    @Test func rejectsDuplicateProperties() {
        let entity = EntityDescription(
            name: "Car", attributes: [AttributeDescription(name: "owner", type: .string)],
            relationships: [RelationshipDescription(name: "owner", destination: "Car")])
        #expect(found([entity]) == [Found(kind: .duplicateProperty, entity: "Car", property: "owner")])
    }

    @Test func rejectsRedefinedInheritedProperties() {
        let car = EntityDescription(name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)])
        let sport = EntityDescription(
            name: "SportCar", parent: "Car", attributes: [AttributeDescription(name: "plate", type: .string)])
        let issues = ManagedObjectModel(entities: [car, sport]).validationIssues
        #expect(issues.map(\.kind) == [.duplicateProperty])
        #expect(issues.first?.entityName == "SportCar" && issues.first?.propertyName == "plate")
        #expect(issues.first?.message.contains("Car") == true)
    }

    // MARK: - Inheritance

    @Test func rejectsUnknownParent() {
        #expect(found([EntityDescription(name: "A", parent: "B")]) == [Found(kind: .unknownParent, entity: "A")])
    }

    @Test func rejectsInheritanceCycles() {
        let issues = found([
            EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A"),
            EntityDescription(name: "C", parent: "A"), EntityDescription(name: "D", parent: "D"),
        ])
        #expect(
            issues == [
                Found(kind: .inheritanceCycle, entity: "A"), Found(kind: .inheritanceCycle, entity: "B"),
                Found(kind: .inheritanceCycle, entity: "D"),
            ])
    }

    // MARK: - Relationships

    @Test func rejectsUnknownDestination() {
        let car = EntityDescription(
            name: "Car", relationships: [RelationshipDescription(name: "owner", destination: "Person")])
        #expect(found([car]) == [Found(kind: .unknownEntity, entity: "Car", property: "owner")])
    }

    @Test func rejectsMissingInverse() {
        let car = EntityDescription(
            name: "Car", relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")]
        )
        let person = EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)])
        #expect(found([car, person]) == [Found(kind: .unknownInverse, entity: "Car", property: "owner")])
        // An attribute of that name is not an inverse either.
        let named = EntityDescription(name: "Person", attributes: [AttributeDescription(name: "cars", type: .string)])
        #expect(found([car, named]) == [Found(kind: .unknownInverse, entity: "Car", property: "owner")])
    }

    @Test func rejectsInverseThatDoesNotPointBack() {
        let car = EntityDescription(
            name: "Car",
            relationships: [
                RelationshipDescription(name: "owner", destination: "Person", inverse: "cars"),
                RelationshipDescription(name: "driver", destination: "Person"),
            ])
        let person = EntityDescription(
            name: "Person",
            relationships: [RelationshipDescription(name: "cars", destination: "Car", inverse: "driver", toMany: true)])
        #expect(
            found([car, person]) == [
                Found(kind: .mismatchedInverse, entity: "Car", property: "owner"),
                Found(kind: .mismatchedInverse, entity: "Person", property: "cars"),
            ])

        // Right name, wrong destination: the inverse leads to another entity.
        let boat = EntityDescription(name: "Boat")
        let owner = EntityDescription(
            name: "Person",
            relationships: [RelationshipDescription(name: "cars", destination: "Boat", inverse: "owner", toMany: true)])
        let onlyCar = EntityDescription(
            name: "Car", relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")]
        )
        #expect(
            found([boat, onlyCar, owner]).contains(Found(kind: .mismatchedInverse, entity: "Car", property: "owner")))
    }

    @Test func acceptsInverseDeclaredOnAParent() {
        // SportCar inherits Car.owner, whose inverse Person.cars leads to Car.
        #expect(found(FixtureModels.sampleModelV1).isEmpty)
        let garage = EntityDescription(
            name: "Garage",
            relationships: [RelationshipDescription(name: "car", destination: "SportCar", inverse: "garage")])
        let sport = EntityDescription(
            name: "SportCar", parent: "Car",
            relationships: [RelationshipDescription(name: "garage", destination: "Garage", inverse: "car")])
        var model = FixtureModels.sampleModelV1
        model.entities += [garage]
        model.entities[model.entities.firstIndex { $0.name == "SportCar" } ?? 0] = sport
        #expect(found(model).isEmpty)
    }

    @Test func rejectsBadCardinality() {
        func issues(_ change: (inout RelationshipDescription) -> Void) -> [Found] {
            var relationship = RelationshipDescription(name: "links", destination: "Node")
            change(&relationship)
            return found([EntityDescription(name: "Node", relationships: [relationship])])
        }
        let expected = [Found(kind: .invalidCardinality, entity: "Node", property: "links")]
        #expect(issues { $0.maxCount = 3 } == expected)  // to-one with max 3
        #expect(issues { $0.isToMany = true } == expected)  // to-many with max 1
        #expect(issues { $0.isOrdered = true } == expected)  // ordered to-one
        #expect(
            issues {
                $0.isToMany = true
                $0.minCount = 5
                $0.maxCount = 2
            } == expected)
        #expect(
            issues {
                $0.isToMany = true
                $0.minCount = -1
                $0.maxCount = 0
            } == expected)
        #expect(
            issues {
                $0.isToMany = true
                $0.minCount = 5
                $0.maxCount = 0
            }.isEmpty)  // unbounded
        #expect(
            issues {
                $0.isToMany = true
                $0.isOrdered = true
                $0.maxCount = 0
            }.isEmpty)
    }

    // MARK: - Attributes

    @Test func rejectsStoredUndefinedAttribute() {
        #expect(
            attribute({ _ in }, type: .undefined) == [Found(kind: .undefinedType, entity: "Item", property: "value")])
        #expect(attribute({ $0.isTransient = true }, type: .undefined).isEmpty)
    }

    @Test func rejectsDefaultsThatDoNotFit() {
        let expected = [Found(kind: .invalidDefaultValue, entity: "Item", property: "value")]
        #expect(attribute({ $0.defaultValue = .integer(3) }) == expected)
        #expect(attribute({ $0.defaultValue = .integer(70_000) }, type: .integer16) == expected)
        #expect(attribute({ $0.defaultValue = .integer(70_000) }, type: .integer32).isEmpty)
        #expect(attribute({ $0.defaultValue = .string("x") }, type: .date) == expected)
        #expect(attribute({ $0.defaultValue = .double(1.5) }, type: .float).isEmpty)
    }

    @Test func rejectsDefaultsOutsideTheRange() {
        let expected = [Found(kind: .invalidDefaultValue, entity: "Item", property: "value")]
        let ranged: (inout AttributeDescription) -> Void = {
            $0.minimum = .integer(1)
            $0.maximum = .integer(10)
        }
        #expect(
            attribute(
                {
                    ranged(&$0)
                    $0.defaultValue = .integer(11)
                }, type: .integer32) == expected)
        #expect(
            attribute(
                {
                    ranged(&$0)
                    $0.defaultValue = .integer(0)
                }, type: .integer32) == expected)
        #expect(
            attribute(
                {
                    ranged(&$0)
                    $0.defaultValue = .integer(10)
                }, type: .integer32
            ).isEmpty)
        #expect(
            attribute({
                ranged(&$0)
                $0.defaultValue = .string("")
            }) == expected)  // length 0 < 1
        #expect(
            attribute({
                ranged(&$0)
                $0.defaultValue = .string("abc")
            }).isEmpty)
        let early = Date(timeIntervalSinceReferenceDate: 0)
        #expect(
            attribute(
                {
                    $0.minimum = .date(early.addingTimeInterval(10))
                    $0.defaultValue = .date(early)
                }, type: .date)
                == expected)
    }

    @Test func rejectsRangesOfTheWrongKind() {
        let expected = [Found(kind: .invalidRange, entity: "Item", property: "value")]
        #expect(attribute({ $0.minimum = .string("a") }) == expected)  // string lengths are integers
        #expect(attribute({ $0.maximum = .integer(-1) }, type: .binary) == expected)
        #expect(attribute({ $0.minimum = .integer(1) }, type: .double) == expected)
        #expect(attribute({ $0.minimum = .bool(true) }, type: .boolean) == expected)
        #expect(
            attribute(
                {
                    $0.minimum = .integer(5)
                    $0.maximum = .integer(1)
                }, type: .integer64) == expected)
        #expect(
            attribute(
                {
                    $0.minimum = .double(0)
                    $0.maximum = .double(1)
                }, type: .double
            ).isEmpty)
    }

    @Test func rejectsBadRegularExpressions() {
        let expected = [Found(kind: .invalidRegularExpression, entity: "Item", property: "value")]
        #expect(attribute { $0.regularExpression = "([a-z" } == expected)
        #expect(attribute({ $0.regularExpression = "[0-9]+" }, type: .integer32) == expected)
        #expect(attribute { $0.regularExpression = "[a-z]+" }.isEmpty)
        #expect(
            attribute {
                $0.regularExpression = "[a-z]+"
                $0.defaultValue = .string("abc1")
            }
                == [Found(kind: .invalidDefaultValue, entity: "Item", property: "value")])
    }

    // MARK: - Constraints, indexes, configurations

    @Test func rejectsConstraintsOnUnknownOrToManyProperties() {
        var car = EntityDescription(
            name: "Car", attributes: [AttributeDescription(name: "plate", type: .string)],
            relationships: [
                RelationshipDescription(name: "owner", destination: "Car"),
                RelationshipDescription(name: "parts", destination: "Car", toMany: true),
            ])
        car.uniquenessConstraints = [["plate", "owner"], ["vin"], []]
        car.fetchIndexes = [FetchIndex(name: "byParts", elements: [.init(property: "parts")])]
        #expect(
            found([car]) == [
                Found(kind: .invalidConstraint, entity: "Car", property: "vin"),
                Found(kind: .invalidConstraint, entity: "Car", property: "parts"),
            ])
        // Inherited properties may be constrained.
        var sport = EntityDescription(name: "SportCar", parent: "Car")
        sport.uniquenessConstraints = [["plate"]]
        car.uniquenessConstraints = []
        car.fetchIndexes = []
        #expect(found([car, sport]).isEmpty)
    }

    @Test func rejectsUnknownEntitiesInConfigurationsAndFetches() {
        var model = ManagedObjectModel(
            entities: [EntityDescription(name: "Car")],
            configurations: [Configuration(name: "Local", entityNames: ["Car", "Boat"])])
        model.fetchRequestTemplates = [FetchRequestTemplate(name: "planes", entityName: "Plane")]
        model.entities[0].fetchedProperties = [FetchedPropertyDescription(name: "trucks", entityName: "Truck")]
        #expect(
            found(model) == [
                Found(kind: .unknownEntity, entity: "Car", property: "trucks"),
                Found(kind: .unknownConfigurationEntity, entity: "Boat"),
                Found(kind: .unknownEntity, entity: "Plane"),
            ])
    }

    // MARK: - Throwing

    @Test func validateThrowsEveryIssue() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", parent: "Missing"),
            EntityDescription(name: "B", relationships: [RelationshipDescription(name: "c", destination: "C")]),
        ])
        do {
            try model.validate()
            Issue.record("validate() did not throw")
        } catch {
            #expect(error.code == .invalidModel)
            #expect(error.message.contains("2 problems"))
            #expect(error.message.contains("A: the parent entity 'Missing'"))
            #expect(error.message.contains("B.c: the destination entity 'C'"))
            #expect(error.entityName == nil)
        }
    }

    @Test func singleIssueNamesEntityAndProperty() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "B", relationships: [RelationshipDescription(name: "c", destination: "C")])
        ])
        #expect {
            try model.validate()
        } throws: { error in
            guard let error = error as? TernError else { return false }
            return error.entityName == "B" && error.propertyName == "c"
                && error.description.hasPrefix("B.c: The model is invalid")
        }
    }
}
