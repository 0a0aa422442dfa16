import TernCore

/// The fixture models of `Tests/Fixtures`, built in Swift exactly as their `contents` XML says,
/// so that hashes can be checked against real values without the Xcode model reader.
enum FixtureModels {
    // MARK: - CoreDataPlus/SampleModel3

    /// `SampleModel3.xcdatamodel`: one entity, User.
    static let sampleModel3V1 = ManagedObjectModel(
        entities: [
            EntityDescription(name: "User", attributes: [string("name", optional: false), string("petName")])
        ], versionIdentifiers: ["1"])

    /// `SampleModel3_v2.xcdatamodel`: User gains a pet.
    static let sampleModel3V2 = ManagedObjectModel(
        entities: [
            EntityDescription(
                name: "Pet", attributes: [string("name", optional: false)],
                relationships: [RelationshipDescription(name: "owner", destination: "User", inverse: "pet")]),
            EntityDescription(
                name: "User", attributes: [string("name", optional: false), string("petName")],
                relationships: [RelationshipDescription(name: "pet", destination: "Pet", inverse: "owner")]),
        ], versionIdentifiers: ["2"])

    /// `SampleModel3_v3.xcdatamodel`: User loses petName.
    static let sampleModel3V3 = ManagedObjectModel(
        entities: [
            EntityDescription(
                name: "Pet", attributes: [string("name", optional: false)],
                relationships: [RelationshipDescription(name: "owner", destination: "User", inverse: "pet")]),
            EntityDescription(
                name: "User", attributes: [string("name", optional: false)],
                relationships: [RelationshipDescription(name: "pet", destination: "Pet", inverse: "owner")]),
        ], versionIdentifiers: ["3"])

    /// `SampleModel3.xcdatamodeld`.
    static let sampleModel3 = VersionedModel(
        name: "SampleModel3",
        versions: [
            ModelVersion(name: "SampleModel3", model: sampleModel3V1),
            ModelVersion(name: "SampleModel3_v2", model: sampleModel3V2),
            ModelVersion(name: "SampleModel3_v3", model: sampleModel3V3),
        ], current: "SampleModel3")

    // MARK: - CoreDataStack/Sample

    /// `TestModel.xcdatamodel`: Author and Book, many-to-many.
    static let testModel = ManagedObjectModel(
        entities: [
            EntityDescription(
                name: "Author", attributes: [string("firstName"), string("lastName")],
                relationships: [
                    RelationshipDescription(name: "books", destination: "Book", inverse: "authors", toMany: true)
                ]),
            EntityDescription(
                name: "Book", attributes: [string("title")],
                relationships: [
                    RelationshipDescription(name: "authors", destination: "Author", inverse: "books", toMany: true)
                ]),
        ], versionIdentifiers: [""])

    // MARK: - CoreDataPlus/SampleModel

    /// `SampleModel.xcdatamodel`: Car, SportCar, ExpensiveSportCar and Person.
    static let sampleModelV1: ManagedObjectModel = {
        var car = EntityDescription(
            name: "Car",
            attributes: [
                AttributeDescription(name: "color", type: .transformable),
                AttributeDescription(
                    name: "currentDrivingSpeed", type: .integer64, isTransient: true, defaultValue: .integer(0)),
                string("maker"),
                AttributeDescription(name: "markedForDeletionAsOf", type: .date),
                string("model"),
                string("numberPlate", optional: false),
            ],
            relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")])
        car.attributes[0].valueTransformerName = "ColorTransformer"
        car.attributes[0].attributeValueClassName = "Color"
        car.uniquenessConstraints = [["numberPlate"]]

        var id = AttributeDescription(name: "id", type: .uuid, isOptional: false)
        id.preservesValueInHistoryOnDeletion = true
        var person = EntityDescription(
            name: "Person",
            attributes: [
                string("firstName"), id,
                AttributeDescription(
                    name: "isDriving", type: .boolean, isOptional: false, isTransient: true,
                    defaultValue: .bool(false)),
                string("lastName"),
                AttributeDescription(name: "updatedAt", type: .date, isOptional: false),
            ],
            relationships: [RelationshipDescription(name: "cars", destination: "Car", inverse: "owner", toMany: true)])
        person.uniquenessConstraints = [["firstName", "lastName"]]

        return ManagedObjectModel(
            entities: [
                car,
                EntityDescription(
                    name: "ExpensiveSportCar", parent: "SportCar",
                    attributes: [
                        AttributeDescription(name: "isLimitedEdition", type: .boolean, defaultValue: .bool(false))
                    ]),
                person,
                EntityDescription(name: "SportCar", parent: "Car"),
            ], versionIdentifiers: ["1"])
    }()

    /// `SampleModel2.xcdatamodel`: ExpensiveSportCar renamed LuxuryCar, Car loses color and
    /// currentDrivingSpeed, Person loses id and isDriving, Car gains a fetch index.
    static let sampleModelV2: ManagedObjectModel = {
        var car = EntityDescription(
            name: "Car",
            attributes: [
                string("maker"), AttributeDescription(name: "markedForDeletionAsOf", type: .date), string("model"),
                string("numberPlate", optional: false),
            ],
            relationships: [RelationshipDescription(name: "owner", destination: "Person", inverse: "cars")])
        car.uniquenessConstraints = [["numberPlate"]]
        car.fetchIndexes = [
            FetchIndex(
                name: "byMakerAndNumberPlate", elements: [.init(property: "maker"), .init(property: "numberPlate")])
        ]
        var luxury = EntityDescription(
            name: "LuxuryCar", parent: "SportCar",
            attributes: [AttributeDescription(name: "isLimitedEdition", type: .boolean, defaultValue: .bool(false))])
        luxury.renamingIdentifier = "ExpensiveSportCar"
        return ManagedObjectModel(
            entities: [car, luxury, person(relationships: []), EntityDescription(name: "SportCar", parent: "Car")],
            versionIdentifiers: ["2"])
    }()

    /// `SampleModel3.xcdatamodel` of the SampleModel bundle: Car gains a Maker and previous owners.
    static let sampleModelV3: ManagedObjectModel = {
        var car = EntityDescription(
            name: "Car",
            attributes: [
                AttributeDescription(name: "markedForDeletionAsOf", type: .date), string("model"),
                string("numberPlate", optional: false),
            ],
            relationships: [
                RelationshipDescription(name: "createdBy", destination: "Maker", inverse: "cars"),
                RelationshipDescription(name: "owner", destination: "Person", inverse: "cars"),
                RelationshipDescription(
                    name: "previousOwners", destination: "Person", inverse: "previousCars", toMany: true),
            ])
        car.uniquenessConstraints = [["numberPlate"]]
        var luxury = EntityDescription(
            name: "LuxuryCar", parent: "SportCar",
            attributes: [AttributeDescription(name: "isLimitedEdition", type: .boolean, defaultValue: .bool(false))])
        luxury.renamingIdentifier = "ExpensiveSportCar"
        var maker = EntityDescription(
            name: "Maker", attributes: [string("name", optional: false)],
            relationships: [
                RelationshipDescription(name: "cars", destination: "Car", inverse: "createdBy", toMany: true)
            ])
        maker.uniquenessConstraints = [["name"]]
        let previousCars = RelationshipDescription(
            name: "previousCars", destination: "Car", inverse: "previousOwners", toMany: true)
        return ManagedObjectModel(
            entities: [
                car, luxury, maker, person(relationships: [previousCars]),
                EntityDescription(name: "SportCar", parent: "Car"),
            ], versionIdentifiers: ["3"])
    }()

    /// `SampleModel.xcdatamodeld`.
    static let sampleModel = VersionedModel(
        name: "SampleModel",
        versions: [
            ModelVersion(name: "SampleModel", model: sampleModelV1),
            ModelVersion(name: "SampleModel2", model: sampleModelV2),
            ModelVersion(name: "SampleModel3", model: sampleModelV3),
        ], current: "SampleModel")

    // MARK: - Non public

    private static func string(_ name: String, optional: Bool = true) -> AttributeDescription {
        AttributeDescription(name: name, type: .string, isOptional: optional)
    }

    /// Person of SampleModel2 and 3: names and update date, its cars, plus `extra` relationships.
    private static func person(relationships extra: [RelationshipDescription]) -> EntityDescription {
        var person = EntityDescription(
            name: "Person",
            attributes: [
                string("firstName"), string("lastName"),
                AttributeDescription(name: "updatedAt", type: .date, isOptional: false),
            ],
            relationships: [RelationshipDescription(name: "cars", destination: "Car", inverse: "owner", toMany: true)]
                + extra)
        person.uniquenessConstraints = [["firstName", "lastName"]]
        return person
    }
}
