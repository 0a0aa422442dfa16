public import Foundation
public import TernCore

extension XcodeModel {
    // MARK: - Reading one model version

    /// Reads one model version: an `.xcdatamodel` folder (with `contents`, or with an Xcode 3
    /// `elements` file), the `contents` or `elements` file inside it, or a compiled `.mom` file.
    ///
    /// Every element and attribute Xcode writes is read; unknown ones are ignored, so files
    /// saved by newer Xcode versions still open. An Xcode 3 version is read as the `contents`
    /// Xcode writes when it converts it; a `.mom` as ``readCompiledModel(at:warnings:)`` reads it.
    /// Values are read as `momc` reads them (`defaultValueString="NO"` on an integer is 0); see
    /// ``readModel(contentsOf:warnings:)`` to learn which were read leniently.
    ///
    /// ```swift
    /// let model = try XcodeModel.readModel(contentsOf: URL(fileURLWithPath: "Recipes.xcdatamodel"))
    /// model.entity(named: "Recipe")?.attributes.map(\.name)
    /// ```
    ///
    /// - Parameter url: An `.xcdatamodel` folder, a `contents` or `elements` file, or a `.mom` file.
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` when the file is missing, is not
    ///   well-formed XML (or, for `elements` and `.mom`, not a keyed archive of a model), is an
    ///   optimised `.omo` model, or lacks required names; ``/TernCore/TernError/Code/invalidModel`` when an
    ///   attribute type or delete rule is unknown, or the model is meaningless
    ///   (``/TernCore/ManagedObjectModel/structuralIssues``: duplicate entity or property names, a missing
    ///   parent, an inheritance cycle, a relationship whose destination or inverse does not
    ///   exist). Errors carry the file's path and the entity and
    ///   property involved.
    /// - Complexity: O(*n*) in the size of the file.
    public static func readModel(contentsOf url: URL) throws(TernError) -> ManagedObjectModel {
        var warnings: [ModelReadingWarning] = []
        return try readModel(contentsOf: url, warnings: &warnings)
    }

    /// Reads one model version, collecting what was read leniently.
    ///
    /// - Parameters:
    ///   - url: An `.xcdatamodel` folder, a `contents` or `elements` file, or a `.mom` file.
    ///   - warnings: Receives the read's warnings, in the order they were found.
    /// - Returns: The model.
    /// - Throws: As ``readModel(contentsOf:)``.
    /// - Complexity: O(*n*) in the size of the file.
    public static func readModel(
        contentsOf url: URL, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> ManagedObjectModel {
        switch try modelFile(of: url) {
        case .contents(let file):
            return try model(fromContents: readData(at: file), path: file.path, warnings: &warnings)
        case .elements(let file):
            return try model(fromElements: readData(at: file), path: file.path, warnings: &warnings)
        case .compiled(let file):
            return try readCompiledModel(at: file, warnings: &warnings)
        }
    }

    /// Decodes the `contents` XML of a model version.
    ///
    /// ```swift
    /// let model = try XcodeModel.model(fromContents: Data(xml.utf8))
    /// ```
    ///
    /// - Parameters:
    ///   - data: The XML.
    ///   - path: The file the XML comes from, for error messages.
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` for malformed or unsafe XML (entity
    ///   declarations, excessive nesting) and missing names; ``/TernCore/TernError/Code/invalidModel`` for
    ///   unknown attribute types and delete rules, and for a meaningless model (see
    ///   ``readModel(contentsOf:)``).
    /// - Complexity: O(*n*) in the size of the XML.
    public static func model(fromContents data: Data, path: String? = nil) throws(TernError) -> ManagedObjectModel {
        var warnings: [ModelReadingWarning] = []
        return try model(fromContents: data, path: path, warnings: &warnings)
    }

    /// Decodes the `contents` XML of a model version, collecting what was read leniently.
    ///
    /// - Parameters:
    ///   - data: The XML.
    ///   - path: The file the XML comes from, for error messages and warnings.
    ///   - warnings: Receives the read's warnings, in the order they were found.
    /// - Returns: The model.
    /// - Throws: As ``model(fromContents:path:)``.
    /// - Complexity: O(*n*) in the size of the XML.
    public static func model(
        fromContents data: Data, path: String? = nil, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> ManagedObjectModel {
        let root = try XMLElementTree.parse(data, path: path ?? "contents")
        let log = ModelWarningLog()
        defer { warnings += log.warnings }
        return try ContentsDecoder(path: path, log: log).model(from: root)
    }

    // MARK: - Non public

    /// The file that holds one model version, by kind.
    enum ModelFile {
        /// A `contents` XML file.
        case contents(URL)
        /// An Xcode 3 `elements` archive.
        case elements(URL)
        /// A compiled `.mom` (or `.omo`) file.
        case compiled(URL)
    }

    /// The file of a version folder (`contents`, else Xcode 3's `elements`), or the file itself
    /// by its name or extension.
    static func modelFile(of url: URL) throws(TernError) -> ModelFile {
        let kind = itemKind(at: url)
        guard kind.exists else {
            throw TernError(.unreadableModelFile, "no model exists at this path", path: url.path)
        }
        guard kind.isDirectory else {
            switch url.pathExtension {
            case compiledModelExtension, optimizedModelExtension: return .compiled(url)
            default: return url.lastPathComponent == legacyElementsFileName ? .elements(url) : .contents(url)
            }
        }
        let contents = url.appendingPathComponent(contentsFileName)
        if itemKind(at: contents).exists { return .contents(contents) }
        let elements = url.appendingPathComponent(legacyElementsFileName)
        if itemKind(at: elements).exists { return .elements(elements) }
        throw TernError(
            .unreadableModelFile,
            "\(url.lastPathComponent) has no `contents` file (nor an Xcode 3 `elements` file), "
                + "so it is not an Xcode model version",
            path: url.path)
    }
}

/// Turns the element tree of a `contents` file into a ``ManagedObjectModel``.
struct ContentsDecoder {
    /// The file being read, for error messages.
    var path: String?
    /// Where warnings go.
    var log = ModelWarningLog()

    // MARK: - Model

    func model(from root: XMLElementTree) throws(TernError) -> ManagedObjectModel {
        guard root.name == "model" else {
            throw failure("the root element is <\(root.name)>, not <model>: this is not an Xcode model file", at: root)
        }
        var entities: [EntityDescription] = []
        for element in root.children(named: "entity") {
            entities.append(try entity(from: element))
        }
        var model = ManagedObjectModel(entities: entities)
        if let identifier = root[attribute: "userDefinedModelVersionIdentifier"] {
            model.versionIdentifiers = [identifier]
        }
        for element in root.children(named: "configuration") {
            let name = try requiredName(of: element)
            let members = element.children(named: "memberEntity").compactMap { $0[attribute: "name"] }
            model.configurations.append(Configuration(name: name, entityNames: members))
        }
        for element in root.children(named: "fetchRequest") {
            model.fetchRequestTemplates.append(try fetchRequestTemplate(from: element))
        }
        try model.refuseIfMeaningless(path: path) { issue in line(of: issue, in: root) }
        return model
    }

    /// The line of the element an issue concerns: the property's, else the entity's.
    func line(of issue: ModelIssue, in root: XMLElementTree) -> Int? {
        guard let entity = root.children(named: "entity").first(where: { $0[attribute: "name"] == issue.entityName })
        else { return nil }
        let property = issue.propertyName.flatMap { name in entity.children.first { $0[attribute: "name"] == name } }
        let line = (property ?? entity).line
        return line > 0 ? line : nil
    }

    func fetchRequestTemplate(from element: XMLElementTree) throws(TernError) -> FetchRequestTemplate {
        let name = try requiredName(of: element)
        guard let entityName = element[attribute: "entity"] else {
            throw failure("the fetch request \(name) names no entity", at: element)
        }
        var settings = element.attributes
        for key in ["name", "entity", "predicateString"] { settings[key] = nil }
        return FetchRequestTemplate(
            name: name, entityName: entityName, predicate: element[attribute: "predicateString"],
            settings: settings)
    }

    // MARK: - Entity

    func entity(from element: XMLElementTree) throws(TernError) -> EntityDescription {
        let name = try requiredName(of: element)
        var entity = EntityDescription(
            name: name, parent: element[attribute: "parentEntity"], isAbstract: flag(element, "isAbstract"))
        entity.representedClassName = element[attribute: "representedClassName"]
        entity.codeGenerationType = element[attribute: "codeGenerationType"]
        entity.renamingIdentifier = element[attribute: "elementID"]
        entity.versionHashModifier = element[attribute: "versionHashModifier"]
        entity.userInfo = userInfo(of: element)

        var attributes: [AttributeDescription] = []
        for child in element.children(named: "attribute") {
            attributes.append(try attribute(from: child, entity: name))
        }
        var relationships: [RelationshipDescription] = []
        for child in element.children(named: "relationship") {
            relationships.append(try relationship(from: child, entity: name))
        }
        var fetchedProperties: [FetchedPropertyDescription] = []
        for child in element.children(named: "fetchedProperty") {
            fetchedProperties.append(try fetchedProperty(from: child, entity: name))
        }
        entity.attributes = attributes
        entity.relationships = relationships
        entity.fetchedProperties = fetchedProperties

        for group in element.children(named: "uniquenessConstraints") {
            for constraint in group.children(named: "uniquenessConstraint") {
                entity.uniquenessConstraints.append(
                    constraint.children(named: "constraint").compactMap { $0[attribute: "value"] })
            }
        }
        for index in element.children(named: "fetchIndex") {
            entity.fetchIndexes.append(fetchIndex(from: index))
        }
        for group in element.children(named: "compoundIndexes") {
            for index in group.children(named: "compoundIndex") {
                let properties = index.children(named: "index").compactMap { $0[attribute: "value"] }
                entity.fetchIndexes.append(
                    FetchIndex(
                        name: "compoundIndex_" + properties.joined(separator: "_"),
                        elements: properties.map { FetchIndex.Element(property: $0) }))
            }
        }
        return entity
    }

    func fetchIndex(from element: XMLElementTree) -> FetchIndex {
        let elements = element.children(named: "fetchIndexElement").compactMap { child -> FetchIndex.Element? in
            guard let property = child[attribute: "property"] ?? child[attribute: "expression"] else { return nil }
            return FetchIndex.Element(
                property: property, kind: child[attribute: "type"] ?? "Binary",
                isAscending: child[attribute: "order"] != "descending")
        }
        return FetchIndex(name: element[attribute: "name"] ?? "", elements: elements)
    }

    // MARK: - Properties

    func attribute(from element: XMLElementTree, entity: String) throws(TernError) -> AttributeDescription {
        let name = try requiredName(of: element, in: entity)
        var type = AttributeType.undefined
        if let typeName = element[attribute: "attributeType"] {
            guard let known = AttributeType(xcodeName: typeName) else {
                throw invalid("has an unknown attributeType (\(typeName))", at: element, entity: entity, property: name)
            }
            type = known
        }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: flag(element, "optional"), isTransient: flag(element, "transient"))
        if type == .date, element[attribute: "defaultDateTimeInterval"] != nil {
            // Xcode writes the date as text too (defaultValueString), for display only.
            attribute.defaultValue = interval(element, "defaultDateTimeInterval", entity: entity, property: name)
                .map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        } else {
            attribute.defaultValue = value(element, entity: entity, property: name, type: type) { text in
                XcodeValueText.defaultValue(text, for: type)
            }
        }
        if type == .date {
            attribute.minimum = interval(element, "minDateTimeInterval", entity: entity, property: name)
                .map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            attribute.maximum = interval(element, "maxDateTimeInterval", entity: entity, property: name)
                .map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        } else {
            attribute.minimum = value(element, "minValueString", entity: entity, property: name, type: type) { text in
                XcodeValueText.bound(text, for: type)
            }
            attribute.maximum = value(element, "maxValueString", entity: entity, property: name, type: type) { text in
                XcodeValueText.bound(text, for: type)
            }
        }
        attribute.regularExpression = element[attribute: "regularExpressionString"]
        attribute.allowsExternalBinaryDataStorage = flag(element, "allowsExternalBinaryDataStorage")
        attribute.preservesValueInHistoryOnDeletion = flag(element, "preserveAfterDeletion")
        attribute.valueTransformerName = element[attribute: "valueTransformerName"]
        attribute.attributeValueClassName = element[attribute: "customClassName"]
        if flag(element, "derived") {
            attribute.derivationExpression = element[attribute: "derivationExpression"] ?? ""
        }
        attribute.renamingIdentifier = element[attribute: "elementID"]
        attribute.versionHashModifier = element[attribute: "versionHashModifier"]
        attribute.isIndexed = flag(element, "indexed")
        attribute.isIndexedBySpotlight = flag(element, "spotlightIndexingEnabled")
        attribute.isStoredInExternalRecord = flag(element, "storedInTruthFile")
        attribute.allowsCloudEncryption = flag(element, "allowsCloudEncryption")
        attribute.usesScalarValueType = element[attribute: "usesScalarValueType"].map { Self.isYes($0) }
        attribute.userInfo = userInfo(of: element)
        return attribute
    }

    func relationship(from element: XMLElementTree, entity: String) throws(TernError) -> RelationshipDescription {
        let name = try requiredName(of: element, in: entity)
        guard let destination = element[attribute: "destinationEntity"] else {
            throw failure("names no destinationEntity", at: element, entity: entity, property: name)
        }
        var deleteRule = DeleteRule.nullify
        if let ruleName = element[attribute: "deletionRule"] {
            guard let rule = DeleteRule(xcodeName: ruleName) else {
                throw invalid("has an unknown deletionRule (\(ruleName))", at: element, entity: entity, property: name)
            }
            deleteRule = rule
        }
        let isToMany = flag(element, "toMany")
        var relationship = RelationshipDescription(
            name: name, destination: destination, inverse: element[attribute: "inverseName"], toMany: isToMany,
            ordered: flag(element, "ordered"), deleteRule: deleteRule, isOptional: flag(element, "optional"))
        relationship.minCount = count(element, "minCount", entity: entity, property: name) ?? 0
        relationship.maxCount = count(element, "maxCount", entity: entity, property: name) ?? (isToMany ? 0 : 1)
        relationship.isTransient = flag(element, "transient")
        relationship.renamingIdentifier = element[attribute: "elementID"]
        relationship.versionHashModifier = element[attribute: "versionHashModifier"]
        relationship.isIndexed = flag(element, "indexed")
        relationship.userInfo = userInfo(of: element)
        return relationship
    }

    func fetchedProperty(from element: XMLElementTree, entity: String) throws(TernError) -> FetchedPropertyDescription {
        let name = try requiredName(of: element, in: entity)
        guard let request = element.child(named: "fetchRequest"), let target = request[attribute: "entity"] else {
            throw failure("has no fetch request naming an entity", at: element, entity: entity, property: name)
        }
        var property = FetchedPropertyDescription(
            name: name, entityName: target, predicate: request[attribute: "predicateString"])
        property.isOptional = flag(element, "optional")
        property.userInfo = userInfo(of: element)
        return property
    }

    // MARK: - Non public

    /// Whether an XML attribute holds Xcode's `YES` (case-insensitive; `true` and `1` are accepted too).
    static func isYes(_ text: String) -> Bool {
        switch text.lowercased() {
        case "yes", "true", "1": true
        default: false
        }
    }

    private func flag(_ element: XMLElementTree, _ name: String) -> Bool {
        element[attribute: name].map(Self.isYes) ?? false
    }

    private func userInfo(of element: XMLElementTree) -> [String: String] {
        var entries: [String: String] = [:]
        for group in element.children(named: "userInfo") {
            for entry in group.children(named: "entry") {
                guard let key = entry[attribute: "key"] else { continue }
                entries[key] = entry[attribute: "value"] ?? ""
            }
        }
        return entries
    }

    /// Reads a value attribute of an element leniently, warning when the text was not clean.
    ///
    /// - Parameters:
    ///   - element: The element.
    ///   - name: The XML attribute holding the text.
    ///   - entity: The entity, for the warning.
    ///   - property: The property, for the warning.
    ///   - type: The attribute's type, for the warning; nil for a relationship.
    ///   - read: How the text is read.
    private func value<Value>(
        _ element: XMLElementTree, _ name: String = "defaultValueString", entity: String, property: String,
        type: AttributeType?, read: (String) -> XcodeValueText.Reading<Value>
    ) -> Value? {
        guard let text = element[attribute: name] else { return nil }
        let reading = read(text)
        if let leniency = reading.leniency {
            let owner = type.map { "\(Self.article(of: $0)) \($0.xcodeName) attribute" } ?? "a relationship"
            log.add(
                ModelReadingWarning(
                    .lenientValue, "\(name) \(Self.quoted(text)) on \(owner) \(leniency)", entityName: entity,
                    propertyName: property, path: path, line: element.line > 0 ? element.line : nil))
        }
        return reading.value
    }

    private func interval(_ element: XMLElementTree, _ name: String, entity: String, property: String) -> TimeInterval?
    {
        value(element, name, entity: entity, property: property, type: .date, read: XcodeValueText.interval)
    }

    private func count(_ element: XMLElementTree, _ name: String, entity: String, property: String) -> Int? {
        value(element, name, entity: entity, property: property, type: nil, read: XcodeValueText.count)
    }

    /// A text as a warning quotes it: in quotation marks, cut after 40 characters.
    static func quoted(_ text: String) -> String {
        "\"" + (text.count > 40 ? text.prefix(40) + "…" : text) + "\""
    }

    /// The indefinite article of a type's name: "an Integer 32", "a Boolean".
    static func article(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .undefined, .objectID: "an"
        default: "a"
        }
    }

    private func requiredName(of element: XMLElementTree, in entity: String? = nil) throws(TernError) -> String {
        guard let name = element[attribute: "name"], !name.isEmpty else {
            throw failure("an <\(element.name)> element has no name", at: element, entity: entity)
        }
        return name
    }

    private func failure(
        _ message: String, at element: XMLElementTree, entity: String? = nil, property: String? = nil
    ) -> TernError {
        TernError(.unreadableModelFile, message + lineSuffix(element), entity: entity, property: property, path: path)
    }

    private func invalid(
        _ message: String, at element: XMLElementTree, entity: String, property: String
    ) -> TernError {
        TernError(
            .invalidModel, "the property " + message + lineSuffix(element) + "; fix it in Xcode",
            entity: entity, property: property, path: path)
    }

    private func lineSuffix(_ element: XMLElementTree) -> String {
        element.line > 0 ? " (line \(element.line))" : ""
    }
}
