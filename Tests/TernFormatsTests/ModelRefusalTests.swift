import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// The models readers refuse because they are meaningless, and the flawed models they still
/// read because Core Data does.
@Suite struct ModelRefusalTests {
    static let path = "/models/M.xcdatamodel/contents"

    /// A meaningless model: its XML, the entity and property the error names, and the line of
    /// the element at fault.
    struct Meaningless: CustomStringConvertible, Sendable {
        var name: String
        var xml: String
        var entity: String
        var property: String?
        var line: Int
        var description: String { name }
    }

    static let meaningless: [Meaningless] = [
        Meaningless(
            name: "dangling destination",
            xml: """
                <model>
                <entity name="Car">
                <relationship name="owner" destinationEntity="Person"/>
                </entity>
                </model>
                """,
            entity: "Car", property: "owner", line: 3),
        Meaningless(
            name: "dangling inverse",
            xml: """
                <model>
                <entity name="Car">
                <relationship name="owner" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                </entity>
                <entity name="Person">
                <attribute name="cars" attributeType="String"/>
                </entity>
                </model>
                """,
            entity: "Car", property: "owner", line: 3),
        Meaningless(
            name: "duplicate entity",
            xml: """
                <model>
                <entity name="Car"/>
                <entity name="Car"/>
                </model>
                """,
            entity: "Car", property: nil, line: 2),
        Meaningless(
            name: "duplicate property",
            xml: """
                <model>
                <entity name="Car">
                <attribute name="plate" attributeType="String"/>
                <relationship name="plate" destinationEntity="Car"/>
                </entity>
                </model>
                """,
            entity: "Car", property: "plate", line: 3),
        Meaningless(
            name: "missing parent",
            xml: """
                <model>
                <entity name="Car" parentEntity="Vehicle"/>
                </model>
                """,
            entity: "Car", property: nil, line: 2),
        Meaningless(
            name: "inheritance cycle",
            xml: """
                <model>
                <entity name="A" parentEntity="B"/>
                <entity name="B" parentEntity="A"/>
                </model>
                """,
            entity: "A", property: nil, line: 2),
    ]

    @Test(arguments: meaningless)
    func meaninglessModelsAreRefused(model: Meaningless) throws {
        let error = #expect(throws: TernError.self) {
            try XcodeModel.model(fromContents: Data(model.xml.utf8), path: Self.path)
        }
        #expect(error?.code == .invalidModel)
        #expect(error?.entityName == model.entity)
        #expect(error?.propertyName == model.property)
        #expect(error?.path == Self.path)
        let place = model.property.map { "\(model.entity).\($0)" } ?? model.entity
        #expect(error?.message.contains("\(place) (line \(model.line)): ") == true, "\(error?.message ?? "")")
    }

    @Test func aCycleNamesEveryEntityInIt() throws {
        let error = #expect(throws: TernError.self) {
            try XcodeModel.model(fromContents: Data(Self.meaningless[5].xml.utf8), path: Self.path)
        }
        let message = error?.message ?? ""
        #expect(message.hasPrefix("the model has 2 problems that leave it without meaning"))
        #expect(message.contains("\n- A (line 2): the entity is its own ancestor"))
        #expect(message.contains("\n- B (line 3): the entity is its own ancestor"))
    }

    @Test func readersOfFilesAndBundlesRefuseThemToo() throws {
        let tmp = try TemporaryDirectory()
        let folder = tmp.path("Cycle.xcdatamodeld/Cycle.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = folder.appendingPathComponent("contents")
        try Data(Self.meaningless[5].xml.utf8).write(to: contents)
        let single = #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: folder) }
        let bundle = #expect(throws: TernError.self) {
            try XcodeModel.readVersionedModel(at: tmp.path("Cycle.xcdatamodeld"))
        }
        for error in [single, bundle] {
            #expect(error?.code == .invalidModel && error?.entityName == "A")
            #expect(error?.path == contents.path)
        }
    }

    /// Flaws Core Data tolerates: the model still describes its objects and store.
    @Test(arguments: [
        // An inverse that points elsewhere.
        #"""
        <entity name="Car"><relationship name="owner" maxCount="1" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
        <relationship name="driver" maxCount="1" destinationEntity="Person"/></entity>
        <entity name="Person"><relationship name="cars" toMany="YES" destinationEntity="Car" inverseName="driver" inverseEntity="Car"/></entity>
        """#,
        // A subentity that redefines an inherited attribute.
        #"""
        <entity name="Car"><attribute name="plate" attributeType="String"/></entity>
        <entity name="SportCar" parentEntity="Car"><attribute name="plate" attributeType="String"/></entity>
        """#,
        // A to-one relationship with a maximum of 2.
        #"<entity name="Car"><relationship name="twin" maxCount="2" destinationEntity="Car"/></entity>"#,
        // A fetched property, a configuration and a fetch request naming entities not in the model.
        #"""
        <entity name="Car"><fetchedProperty name="rivals"><fetchRequest name="r" entity="Rival"/></fetchedProperty></entity>
        <configuration name="Main"><memberEntity name="Boat"/></configuration>
        <fetchRequest name="all" entity="Plane"/>
        """#,
        // A stored attribute of undefined type, a name that is not an identifier.
        #"<entity name="Car"><attribute name="the plate"/></entity>"#,
    ])
    func toleratedFlawsAreRead(entities: String) throws {
        let model = try XcodeModel.model(fromContents: Data("<model>\(entities)</model>".utf8), path: Self.path)
        #expect(!model.validationIssues.isEmpty)
        #expect(model.structuralIssues.isEmpty)
        #expect(model.entity(named: "Car") != nil)
    }
}
