import Foundation
public import TernCore
import TernFormats

/// The Chef's Book: a recipe book whose data model went through four versions, the example
/// that `tern demo` walks through and the integration tests start from.
///
/// - Version 1 keeps everything in `Recipe`: name, servings, preparation and cooking time as
///   text ("45 mins"), ingredients and method as text blocks.
/// - Version 2 splits `Ingredient` out into its own entity and turns the times into integer
///   minutes: a custom step (``ChefsBook/SplitIngredientsPolicy``).
/// - Version 3 renames `Recipe.name` to `title` with a renaming identifier and adds a unique `uid`.
/// - Version 4 splits the method into ordered `Step` objects: a custom step
///   (``ChefsBook/SplitStepsPolicy``), which also fills in `uid`.
///
/// The model files are `Examples/ChefsBook/ChefsBook.xcdatamodeld`; the same XML is embedded
/// here so that the `tern` binary needs no files beside it (a test checks they are equal).
///
/// ```swift
/// let model = try ChefsBook.model()
/// model.versions.map(\.name)   // ["ChefsBook 1", …, "ChefsBook 4"]
/// ```
public enum ChefsBook {
    /// The versions' names, oldest first.
    public static let versionNames = ["ChefsBook 1", "ChefsBook 2", "ChefsBook 3", "ChefsBook 4"]

    /// The versioned model: four versions, the last one current.
    ///
    /// - Throws: `TernError` if the embedded XML does not read (a bug).
    public static func model() throws -> VersionedModel {
        var versions: [ModelVersion] = []
        for (name, xml) in zip(versionNames, contents) {
            versions.append(ModelVersion(name: name, model: try XcodeModel.model(fromContents: Data(xml.utf8), path: name)))
        }
        return VersionedModel(name: "ChefsBook", versions: versions)
    }

    /// The `contents` XML of each version, oldest first.
    public static let contents: [String] = [
        #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1">
            <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                <attribute name="cookingTime" optional="YES" attributeType="String"/>
                <attribute name="ingredients" optional="YES" attributeType="String"/>
                <attribute name="method" optional="YES" attributeType="String"/>
                <attribute name="name" attributeType="String"/>
                <attribute name="preparationTime" optional="YES" attributeType="String"/>
                <attribute name="servings" attributeType="Integer 16" defaultValueString="2" usesScalarValueType="YES"/>
            </entity>
        </model>
        """#,
        #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="2">
            <entity name="Ingredient" representedClassName="Ingredient" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="quantity" optional="YES" attributeType="String"/>
                <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="ingredients" inverseEntity="Recipe"/>
            </entity>
            <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                <attribute name="cookingTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="method" optional="YES" attributeType="String"/>
                <attribute name="name" attributeType="String"/>
                <attribute name="preparationTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="servings" attributeType="Integer 16" defaultValueString="2" usesScalarValueType="YES"/>
                <relationship name="ingredients" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Ingredient" inverseName="recipe" inverseEntity="Ingredient"/>
            </entity>
        </model>
        """#,
        #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="3">
            <entity name="Ingredient" representedClassName="Ingredient" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="quantity" optional="YES" attributeType="String"/>
                <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="ingredients" inverseEntity="Recipe"/>
            </entity>
            <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                <attribute name="cookingTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="method" optional="YES" attributeType="String"/>
                <attribute name="preparationTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="servings" attributeType="Integer 16" defaultValueString="2" usesScalarValueType="YES"/>
                <attribute name="title" attributeType="String" elementID="name"/>
                <attribute name="uid" optional="YES" attributeType="String"/>
                <relationship name="ingredients" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Ingredient" inverseName="recipe" inverseEntity="Ingredient"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="uid"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
        </model>
        """#,
        #"""
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23E224" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="4">
            <entity name="Ingredient" representedClassName="Ingredient" syncable="YES">
                <attribute name="name" attributeType="String"/>
                <attribute name="quantity" optional="YES" attributeType="String"/>
                <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="ingredients" inverseEntity="Recipe"/>
            </entity>
            <entity name="Recipe" representedClassName="Recipe" syncable="YES">
                <attribute name="cookingTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="preparationTime" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="servings" attributeType="Integer 16" defaultValueString="2" usesScalarValueType="YES"/>
                <attribute name="title" attributeType="String" elementID="name"/>
                <attribute name="uid" optional="YES" attributeType="String"/>
                <relationship name="ingredients" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Ingredient" inverseName="recipe" inverseEntity="Ingredient"/>
                <relationship name="steps" optional="YES" toMany="YES" ordered="YES" deletionRule="Cascade" destinationEntity="Step" inverseName="recipe" inverseEntity="Step"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="uid"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Step" representedClassName="Step" syncable="YES">
                <attribute name="text" attributeType="String"/>
                <relationship name="recipe" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Recipe" inverseName="steps" inverseEntity="Recipe"/>
            </entity>
        </model>
        """#,
    ]
}
