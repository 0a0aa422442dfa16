import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@Suite struct XcodeModelReadingTests {
    @Test func readsEveryVersionOfSampleModel() throws {
        let bundle = try XcodeModel.readVersionedModel(at: Fixtures.sampleModel)
        #expect(bundle.name == "SampleModel")
        #expect(bundle.currentVersionName == "SampleModel")
        // Natural order with the current version (here the oldest) moved last.
        #expect(bundle.versions.map(\.name) == ["SampleModel2", "SampleModel3", "SampleModel"])

        let v1 = try #require(bundle.version(named: "SampleModel")?.model)
        #expect(v1.versionIdentifiers == ["1"])
        #expect(v1.entities.map(\.name) == ["Car", "ExpensiveSportCar", "Person", "SportCar"])
        let car = try #require(v1.entity(named: "Car"))
        #expect(car.representedClassName == "Car")
        #expect(car.parentName == nil)
        #expect(
            car.attributes.map(\.name) == [
                "color", "currentDrivingSpeed", "maker", "markedForDeletionAsOf", "model", "numberPlate",
            ])
        let color = try #require(car.attribute(named: "color"))
        #expect(color.type == .transformable)
        #expect(color.isOptional)
        #expect(color.valueTransformerName == "ColorTransformer")
        #expect(color.attributeValueClassName == "Color")
        let speed = try #require(car.attribute(named: "currentDrivingSpeed"))
        #expect(speed.type == .integer64)
        #expect(speed.isTransient)
        #expect(speed.defaultValue == .integer(0))
        #expect(speed.usesScalarValueType == true)
        let deletion = try #require(car.attribute(named: "markedForDeletionAsOf"))
        #expect(deletion.type == .date)
        #expect(deletion.usesScalarValueType == false)
        let plate = try #require(car.attribute(named: "numberPlate"))
        #expect(!plate.isOptional)
        #expect(plate.usesScalarValueType == nil)
        let owner = try #require(car.relationship(named: "owner"))
        #expect(owner.destinationEntityName == "Person")
        #expect(owner.inverseName == "cars")
        #expect(!owner.isToMany)
        #expect(owner.maxCount == 1)
        #expect(owner.deleteRule == .nullify)
        #expect(owner.isOptional)
        #expect(car.uniquenessConstraints == [["numberPlate"]])

        let expensive = try #require(v1.entity(named: "ExpensiveSportCar"))
        #expect(expensive.parentName == "SportCar")
        #expect(expensive.attribute(named: "isLimitedEdition")?.defaultValue == .bool(false))
        let person = try #require(v1.entity(named: "Person"))
        #expect(person.attribute(named: "id")?.type == .uuid)
        #expect(person.attribute(named: "id")?.preservesValueInHistoryOnDeletion == true)
        #expect(person.attribute(named: "isDriving")?.isTransient == true)
        let cars = try #require(person.relationship(named: "cars"))
        #expect(cars.isToMany)
        #expect(cars.maxCount == 0)
        #expect(person.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(v1.entity(named: "SportCar")?.attributes.isEmpty == true)

        let v2 = try #require(bundle.version(named: "SampleModel2")?.model)
        #expect(v2.versionIdentifiers == ["2"])
        #expect(v2.entities.map(\.name) == ["Car", "LuxuryCar", "Person", "SportCar"])
        #expect(v2.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
        #expect(
            v2.entity(named: "Car")?.fetchIndexes == [
                FetchIndex(
                    name: "byMakerAndNumberPlate",
                    elements: [
                        FetchIndex.Element(property: "maker"), FetchIndex.Element(property: "numberPlate"),
                    ])
            ])

        let v3 = try #require(bundle.version(named: "SampleModel3")?.model)
        #expect(v3.versionIdentifiers == ["3"])
        #expect(v3.entities.map(\.name) == ["Car", "LuxuryCar", "Maker", "Person", "SportCar"])
        #expect(v3.entity(named: "Car")?.relationships.map(\.name) == ["createdBy", "owner", "previousOwners"])
        #expect(v3.entity(named: "Maker")?.uniquenessConstraints == [["name"]])
    }

    @Test func readsEveryVersionOfSampleModel3() throws {
        let bundle = try XcodeModel.readVersionedModel(at: Fixtures.sampleModel3)
        #expect(bundle.currentVersionName == "SampleModel3")
        #expect(bundle.versions.map(\.name) == ["SampleModel3_v2", "SampleModel3_v3", "SampleModel3"])
        let v1 = try #require(bundle.version(named: "SampleModel3")?.model)
        #expect(v1.versionIdentifiers == ["1"])
        #expect(v1.entities.map(\.name) == ["User"])
        #expect(v1.entity(named: "User")?.attributes.map(\.name) == ["name", "petName"])
        let v2 = try #require(bundle.version(named: "SampleModel3_v2")?.model)
        #expect(v2.entities.map(\.name) == ["Pet", "User"])
        #expect(v2.entity(named: "Pet")?.relationship(named: "owner")?.inverseName == "pet")
        let v3 = try #require(bundle.version(named: "SampleModel3_v3")?.model)
        #expect(v3.versionIdentifiers == ["3"])
        #expect(v3.entity(named: "User")?.attributes.map(\.name) == ["name"])
    }

    @Test func readsEveryVersionOfCoreDataStackSample() throws {
        let bundle = try XcodeModel.readVersionedModel(at: Fixtures.coreDataStackModel)
        #expect(bundle.name == "Sample")
        #expect(bundle.currentVersionName == "TestModel 2")
        #expect(bundle.versions.map(\.name) == ["TestModel", "TestModel 2"])
        let v1 = try #require(bundle.version(named: "TestModel")?.model)
        // userDefinedModelVersionIdentifier="" gives one empty identifier, as in the store's metadata.
        #expect(v1.versionIdentifiers == [""])
        #expect(v1.entities.map(\.name) == ["Author", "Book"])
        let books = try #require(v1.entity(named: "Author")?.relationship(named: "books"))
        #expect(books.isToMany && books.inverseName == "authors" && books.destinationEntityName == "Book")
        let v2 = try #require(bundle.version(named: "TestModel 2")?.model)
        #expect(v2.entities.map(\.name) == ["Author", "Book", "Publisher"])
        #expect(v2.entity(named: "Publisher")?.representedClassName == nil)
        #expect(v2.entity(named: "Book")?.relationship(named: "publisher")?.maxCount == 1)
    }

    @Test(arguments: [Fixtures.sampleModel, Fixtures.sampleModel3, Fixtures.coreDataStackModel])
    func everyFixtureVersionIsValid(bundle: URL) throws {
        for version in try XcodeModel.readVersionedModel(at: bundle).versions {
            #expect(version.model.validationIssues.isEmpty, "\(version.name)")
            #expect(throws: Never.self) { try version.model.validate() }
        }
    }

    @Test func readsOneVersionFolderOrContentsFile() throws {
        let folder = Fixtures.coreDataStackModel.appendingPathComponent("TestModel.xcdatamodel")
        let fromFolder = try XcodeModel.readModel(contentsOf: folder)
        let fromFile = try XcodeModel.readModel(contentsOf: folder.appendingPathComponent("contents"))
        #expect(fromFolder == fromFile)
        let single = try XcodeModel.readVersionedModel(at: folder)
        #expect(single.name == "TestModel")
        #expect(single.versions.map(\.name) == ["TestModel"])
        #expect(single.currentVersion.model == fromFolder)
        let viaFile = try XcodeModel.readVersionedModel(at: folder.appendingPathComponent("contents"))
        #expect(viaFile == single)
    }

    @Test func modelWithoutIdentifierHasNone() throws {
        let model = try XcodeModel.model(
            fromContents: Data(#"<model type="com.apple.IDECoreDataModeler.DataModel"/>"#.utf8))
        #expect(model.versionIdentifiers == [])
        #expect(model.entities.isEmpty)
    }

    @Test func readsEveryOtherElementAndAttribute() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" usedWithCloudKit="YES">
                <entity name="Recipe" representedClassName="App.Recipe" isAbstract="YES" elementID="OldRecipe" versionHashModifier="v2" codeGenerationType="class">
                    <attribute name="added" optional="YES" attributeType="Date" minDateTimeInterval="0" maxDateTimeInterval="1000.5" defaultDateTimeInterval="631123200"/>
                    <attribute name="cost" attributeType="Decimal" defaultValueString="3.25" minValueString="0"/>
                    <attribute name="title" attributeType="String" minValueString="1" maxValueString="80" regularExpressionString="[A-Z].*" defaultValueString="Untitled" elementID="name" versionHashModifier="h" indexed="YES" spotlightIndexingEnabled="YES" storedInTruthFile="YES" allowsCloudEncryption="YES" syncable="YES">
                        <userInfo>
                            <entry key="a" value="1"/>
                            <entry key="b"/>
                        </userInfo>
                    </attribute>
                    <attribute name="photo" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
                    <attribute name="scratch" optional="YES" transient="YES"/>
                    <attribute name="count" optional="YES" attributeType="Integer 32" derived="YES" derivationExpression="ingredients.@count"/>
                    <attribute name="rating" optional="YES" attributeType="Float" defaultValueString="2.5"/>
                    <attribute name="key" optional="YES" attributeType="UUID" defaultValueString="E621E1F8-C36C-495A-93FC-0C247A3E6E5F"/>
                    <attribute name="link" optional="YES" attributeType="URI" defaultValueString="https://example.com/a"/>
                    <relationship name="ingredients" toMany="YES" ordered="YES" minCount="1" maxCount="20" deletionRule="Cascade" destinationEntity="Ingredient" inverseName="recipe" inverseEntity="Ingredient" elementID="parts" versionHashModifier="m" indexed="YES" transient="YES">
                        <userInfo><entry key="k" value="v"/></userInfo>
                    </relationship>
                    <relationship name="author" maxCount="1" deletionRule="Deny" destinationEntity="Person"/>
                    <relationship name="editor" deletionRule="No Action" destinationEntity="Person"/>
                    <fetchedProperty name="favourites" optional="YES">
                        <fetchRequest name="fetchedPropertyFetchRequest" entity="Ingredient" predicateString="isFavourite == YES"/>
                        <userInfo><entry key="x" value="y"/></userInfo>
                    </fetchedProperty>
                    <fetchIndex name="byTitle">
                        <fetchIndexElement property="title" type="Binary" order="descending"/>
                    </fetchIndex>
                    <compoundIndexes>
                        <compoundIndex>
                            <index value="title"/>
                            <index value="cost"/>
                        </compoundIndex>
                    </compoundIndexes>
                    <uniquenessConstraints>
                        <uniquenessConstraint><constraint value="title"/></uniquenessConstraint>
                    </uniquenessConstraints>
                    <userInfo><entry key="table" value="recipes"/></userInfo>
                </entity>
                <entity name="Ingredient">
                    <relationship name="recipe" maxCount="1" destinationEntity="Recipe" inverseName="ingredients" inverseEntity="Recipe"/>
                </entity>
                <entity name="Person"/>
                <fetchRequest name="Quick" entity="Recipe" predicateString="cost &lt; $MAX" fetchLimit="10" resultType="2" returnDistinctResults="YES"/>
                <configuration name="Cloud">
                    <memberEntity name="Recipe"/>
                </configuration>
                <configuration name="Empty"/>
                <elements>
                    <element name="Recipe" positionX="0" positionY="0" width="128" height="90"/>
                </elements>
            </model>
            """
        let model = try XcodeModel.model(fromContents: Data(xml.utf8))
        let recipe = try #require(model.entity(named: "Recipe"))
        #expect(recipe.representedClassName == "App.Recipe")
        #expect(recipe.isAbstract)
        #expect(recipe.renamingIdentifier == "OldRecipe")
        #expect(recipe.versionHashModifier == "v2")
        #expect(recipe.codeGenerationType == "class")
        #expect(recipe.userInfo == ["table": "recipes"])

        let added = try #require(recipe.attribute(named: "added"))
        #expect(added.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 631_123_200)))
        #expect(added.minimum == .date(Date(timeIntervalSinceReferenceDate: 0)))
        #expect(added.maximum == .date(Date(timeIntervalSinceReferenceDate: 1000.5)))
        let cost = try #require(recipe.attribute(named: "cost"))
        #expect(cost.defaultValue == .decimal(Decimal(string: "3.25")!))
        #expect(cost.minimum == .decimal(0))
        #expect(!cost.isOptional)
        let title = try #require(recipe.attribute(named: "title"))
        #expect(title.minimum == .integer(1) && title.maximum == .integer(80))
        #expect(title.regularExpression == "[A-Z].*")
        #expect(title.defaultValue == .string("Untitled"))
        #expect(title.renamingIdentifier == "name" && title.versionHashModifier == "h")
        #expect(title.isIndexed && title.isIndexedBySpotlight && title.isStoredInExternalRecord)
        #expect(title.allowsCloudEncryption)
        #expect(title.userInfo == ["a": "1", "b": ""])
        #expect(recipe.attribute(named: "photo")?.allowsExternalBinaryDataStorage == true)
        let scratch = try #require(recipe.attribute(named: "scratch"))
        #expect(scratch.type == .undefined && scratch.isTransient)
        let count = try #require(recipe.attribute(named: "count"))
        #expect(count.derivationExpression == "ingredients.@count" && count.isDerived)
        #expect(recipe.attribute(named: "rating")?.defaultValue == .double(2.5))
        #expect(
            recipe.attribute(named: "key")?.defaultValue
                == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
        #expect(recipe.attribute(named: "link")?.defaultValue == .uri(URL(string: "https://example.com/a")!))

        let ingredients = try #require(recipe.relationship(named: "ingredients"))
        #expect(ingredients.isToMany && ingredients.isOrdered && !ingredients.isOptional)
        #expect(ingredients.minCount == 1 && ingredients.maxCount == 20)
        #expect(ingredients.deleteRule == .cascade && ingredients.isTransient && ingredients.isIndexed)
        #expect(ingredients.renamingIdentifier == "parts" && ingredients.versionHashModifier == "m")
        #expect(ingredients.userInfo == ["k": "v"])
        #expect(recipe.relationship(named: "author")?.deleteRule == .deny)
        #expect(recipe.relationship(named: "editor")?.deleteRule == .noAction)
        #expect(recipe.relationship(named: "editor")?.maxCount == 1)

        let favourites = try #require(recipe.fetchedProperties.first)
        #expect(favourites.name == "favourites" && favourites.entityName == "Ingredient")
        #expect(favourites.predicate == "isFavourite == YES" && favourites.isOptional)
        #expect(favourites.userInfo == ["x": "y"])
        #expect(recipe.fetchIndexes.count == 2)
        #expect(recipe.fetchIndexes.first?.elements == [FetchIndex.Element(property: "title", isAscending: false)])
        #expect(recipe.fetchIndexes.last?.elements.map(\.property) == ["title", "cost"])
        #expect(recipe.uniquenessConstraints == [["title"]])

        #expect(
            model.fetchRequestTemplates == [
                FetchRequestTemplate(
                    name: "Quick", entityName: "Recipe", predicate: "cost < $MAX",
                    settings: ["fetchLimit": "10", "resultType": "2", "returnDistinctResults": "YES"])
            ])
        #expect(
            model.configurations == [
                Configuration(name: "Cloud", entityNames: ["Recipe"]), Configuration(name: "Empty", entityNames: []),
            ])
    }

    @Test func ignoresUnknownAttributesAndElements() throws {
        let xml = """
            <model type="com.apple.IDECoreDataModeler.DataModel" futureFlag="YES">
                <entity name="A" vectorSearchable="YES">
                    <attribute name="x" attributeType="String" vectorSearchable="YES" someOption="3"/>
                    <futureThing name="y"><nested/></futureThing>
                </entity>
                <compositeAttribute name="Address"><attribute name="street" attributeType="String"/></compositeAttribute>
            </model>
            """
        let model = try XcodeModel.model(fromContents: Data(xml.utf8))
        #expect(model.entities.map(\.name) == ["A"])
        #expect(
            model.entity(named: "A")?.attributes == [AttributeDescription(name: "x", type: .string, isOptional: false)])
    }
}
