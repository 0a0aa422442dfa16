public import Foundation
public import TernCore

extension XcodeModel {
    /// The `lastSavedToolsVersion` written into `contents` (the Xcode 15.3 build number).
    public static let toolsVersion = "22758"

    // MARK: - Writing XML

    /// The `contents` XML of a model version, as Xcode writes it.
    ///
    /// Entities and properties are sorted by name, Booleans are `YES`/`NO`, settings equal to
    /// their default are left out, and to-one relationships carry `maxCount="1"`. Only the first
    /// of several version identifiers can be written (Xcode keeps one). Binary default values
    /// have no text form in Xcode's files and are left out.
    ///
    /// ```swift
    /// let xml = XcodeModel.contentsXML(for: model)
    /// try XcodeModel.model(fromContents: Data(xml.utf8)) == model   // true
    /// ```
    ///
    /// - Parameter model: The model to write.
    /// - Returns: The XML text.
    /// - Complexity: O(*n*) in the size of the model.
    public static func contentsXML(for model: ManagedObjectModel) -> String {
        var xml = ContentsXMLBuilder()
        xml.line(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#)
        xml.open(
            "model",
            [
                ("type", "com.apple.IDECoreDataModeler.DataModel"), ("documentVersion", "1.0"),
                ("lastSavedToolsVersion", toolsVersion), ("minimumToolsVersion", "Automatic"),
                ("sourceLanguage", "Swift"), ("userDefinedModelVersionIdentifier", model.versionIdentifiers.first),
            ])
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            xml.write(entity)
        }
        for template in model.fetchRequestTemplates {
            let settings = template.settings.sorted { $0.key < $1.key }
                .filter { !["name", "entity", "predicateString"].contains($0.key) }
                .map { ($0.key, Optional($0.value)) }
            xml.empty(
                "fetchRequest",
                [("name", template.name), ("entity", template.entityName), ("predicateString", template.predicate)]
                    + settings)
        }
        for configuration in model.configurations {
            xml.group("configuration", [("name", configuration.name)], isEmpty: configuration.entityNames.isEmpty) {
                xml in
                for member in configuration.entityNames { xml.empty("memberEntity", [("name", member)]) }
            }
        }
        xml.close("model", newline: false)
        return xml.text
    }

    // MARK: - Writing files

    /// Writes one model version as an `.xcdatamodel` folder holding its `contents`.
    ///
    /// - Parameters:
    ///   - model: The model to write.
    ///   - url: The `.xcdatamodel` folder; created when missing, its `contents` replaced.
    /// - Throws: ``/TernCore/TernError/Code/unwritableModelFile`` when the folder or file cannot be written.
    /// - Complexity: O(*n*) in the size of the model.
    public static func writeModel(_ model: ManagedObjectModel, to url: URL) throws(TernError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try Data(contentsXML(for: model).utf8).write(
                to: url.appendingPathComponent(contentsFileName), options: .atomic)
        } catch {
            throw TernError(
                .unwritableModelFile, "the model cannot be written: \(describe(error))", path: url.path,
                underlyingError: error)
        }
    }

    /// Writes a versioned model as an `.xcdatamodeld` bundle: one `.xcdatamodel` folder per
    /// version and an `.xccurrentversion` naming the current one.
    ///
    /// The bundle is built beside its destination, then moved into place, replacing an existing
    /// bundle. Xcode stores no version order, so reading the bundle back sorts versions by name
    /// (see ``readVersionedModel(at:order:)``).
    ///
    /// ```swift
    /// try XcodeModel.write(recipes, to: URL(fileURLWithPath: "Recipes.xcdatamodeld"))
    /// ```
    ///
    /// - Parameters:
    ///   - versionedModel: The versions to write.
    ///   - url: The bundle's location, ending in `.xcdatamodeld`.
    /// - Throws: ``/TernCore/TernError/Code/unwritableModelFile`` when `url` does not end in
    ///   `.xcdatamodeld`, a version name cannot be a folder name, or writing fails.
    /// - Complexity: O(*n*) in the size of the versions.
    public static func write(_ versionedModel: VersionedModel, to url: URL) throws(TernError) {
        guard url.pathExtension == bundleExtension else {
            throw TernError(
                .unwritableModelFile, "a model bundle's name must end in .\(bundleExtension)", path: url.path)
        }
        var seen: Set<String> = []
        for version in versionedModel.versions {
            let name = version.name
            guard !name.isEmpty, !name.hasPrefix("."), !name.contains("/"), seen.insert(name).inserted else {
                throw TernError(
                    .unwritableModelFile,
                    "the version name \"\(name)\" cannot be a folder name, or is used twice; rename the version",
                    path: url.path)
            }
        }
        let staging = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: staging) }
        for version in versionedModel.versions {
            try writeModel(
                version.model,
                to: staging.appendingPathComponent("\(version.name).\(versionExtension)", isDirectory: true))
        }
        do {
            try Data(currentVersionPropertyList(versionedModel.currentVersionName).utf8)
                .write(to: staging.appendingPathComponent(currentVersionFileName))
            if itemKind(at: url).exists {
                try FileManager.default.removeItem(at: url)
            }
            try FileManager.default.moveItem(at: staging, to: url)
        } catch {
            throw TernError(
                .unwritableModelFile, "the model bundle cannot be written: \(describe(error))", path: url.path,
                underlyingError: error)
        }
    }

    // MARK: - Non public

    /// The `.xccurrentversion` property list Xcode writes.
    static func currentVersionPropertyList(_ versionName: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>\(currentVersionKey)</key>
        \t<string>\(XMLElementTree.escape(versionName + "." + versionExtension))</string>
        </dict>
        </plist>

        """
    }
}

/// Builds indented XML text in Xcode's layout: four spaces per level, `/>` on empty elements.
struct ContentsXMLBuilder {
    typealias Attributes = [(String, String?)]

    private(set) var text = ""
    private var depth = 0

    // MARK: - Elements

    mutating func line(_ content: String) {
        text += String(repeating: "    ", count: depth) + content + "\n"
    }

    mutating func open(_ name: String, _ attributes: Attributes) {
        line("<\(name)\(Self.render(attributes))>")
        depth += 1
    }

    mutating func close(_ name: String, newline: Bool = true) {
        depth -= 1
        line("</\(name)>")
        if !newline { text.removeLast() }
    }

    mutating func empty(_ name: String, _ attributes: Attributes) {
        line("<\(name)\(Self.render(attributes))/>")
    }

    /// An element with children, or an empty element when `isEmpty`.
    mutating func group(
        _ name: String, _ attributes: Attributes = [], isEmpty: Bool = false, _ children: (inout Self) -> Void
    ) {
        guard !isEmpty else { return empty(name, attributes) }
        open(name, attributes)
        children(&self)
        close(name)
    }

    // MARK: - Model parts

    mutating func write(_ entity: EntityDescription) {
        let attributes: Attributes = [
            ("name", entity.name), ("representedClassName", entity.representedClassName),
            ("parentEntity", entity.parentName), ("isAbstract", Self.yes(entity.isAbstract)),
            ("elementID", entity.renamingIdentifier), ("versionHashModifier", entity.versionHashModifier),
            ("codeGenerationType", entity.codeGenerationType),
        ]
        let isEmpty =
            entity.attributes.isEmpty && entity.relationships.isEmpty && entity.fetchedProperties.isEmpty
            && entity.fetchIndexes.isEmpty && entity.uniquenessConstraints.isEmpty && entity.userInfo.isEmpty
        group("entity", attributes, isEmpty: isEmpty) { xml in
            for attribute in entity.attributes.sorted(by: { $0.name < $1.name }) { xml.write(attribute) }
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name }) { xml.write(relationship) }
            for property in entity.fetchedProperties.sorted(by: { $0.name < $1.name }) { xml.write(property) }
            for index in entity.fetchIndexes {
                xml.group("fetchIndex", [("name", index.name)], isEmpty: index.elements.isEmpty) { xml in
                    for element in index.elements {
                        xml.empty(
                            "fetchIndexElement",
                            [
                                ("property", element.property), ("type", element.kind),
                                ("order", element.isAscending ? "ascending" : "descending"),
                            ])
                    }
                }
            }
            if !entity.uniquenessConstraints.isEmpty {
                xml.group("uniquenessConstraints") { xml in
                    for constraint in entity.uniquenessConstraints {
                        xml.group("uniquenessConstraint", isEmpty: constraint.isEmpty) { xml in
                            for property in constraint { xml.empty("constraint", [("value", property)]) }
                        }
                    }
                }
            }
            xml.write(userInfo: entity.userInfo)
        }
    }

    mutating func write(_ attribute: AttributeDescription) {
        let type = attribute.type
        var attributes: Attributes = [
            ("name", attribute.name), ("optional", Self.yes(attribute.isOptional)),
            ("transient", Self.yes(attribute.isTransient)),
            ("attributeType", type == .undefined ? nil : type.xcodeName),
        ]
        attributes += Self.valueAttributes(attribute.minimum, text: "minValueString", date: "minDateTimeInterval")
        attributes += Self.valueAttributes(attribute.maximum, text: "maxValueString", date: "maxDateTimeInterval")
        attributes += Self.valueAttributes(
            attribute.defaultValue, text: "defaultValueString", date: "defaultDateTimeInterval")
        attributes += [
            ("regularExpressionString", attribute.regularExpression),
            ("usesScalarValueType", attribute.usesScalarValueType.map { $0 ? "YES" : "NO" }),
            ("allowsExternalBinaryDataStorage", Self.yes(attribute.allowsExternalBinaryDataStorage)),
            ("preserveAfterDeletion", Self.yes(attribute.preservesValueInHistoryOnDeletion)),
            ("valueTransformerName", attribute.valueTransformerName),
            ("customClassName", attribute.attributeValueClassName),
            ("derived", Self.yes(attribute.isDerived)), ("derivationExpression", attribute.derivationExpression),
            ("elementID", attribute.renamingIdentifier), ("versionHashModifier", attribute.versionHashModifier),
            ("indexed", Self.yes(attribute.isIndexed)),
            ("spotlightIndexingEnabled", Self.yes(attribute.isIndexedBySpotlight)),
            ("storedInTruthFile", Self.yes(attribute.isStoredInExternalRecord)),
            ("allowsCloudEncryption", Self.yes(attribute.allowsCloudEncryption)),
        ]
        group("attribute", attributes, isEmpty: attribute.userInfo.isEmpty) { xml in
            xml.write(userInfo: attribute.userInfo)
        }
    }

    mutating func write(_ relationship: RelationshipDescription) {
        let writesMaxCount = !relationship.isToMany || relationship.maxCount != 0
        let attributes: Attributes = [
            ("name", relationship.name), ("optional", Self.yes(relationship.isOptional)),
            ("transient", Self.yes(relationship.isTransient)), ("toMany", Self.yes(relationship.isToMany)),
            ("ordered", Self.yes(relationship.isOrdered)),
            ("minCount", relationship.minCount == 0 ? nil : String(relationship.minCount)),
            ("maxCount", writesMaxCount ? String(relationship.maxCount) : nil),
            ("deletionRule", relationship.deleteRule.xcodeName),
            ("destinationEntity", relationship.destinationEntityName), ("inverseName", relationship.inverseName),
            ("inverseEntity", relationship.inverseName == nil ? nil : relationship.destinationEntityName),
            ("elementID", relationship.renamingIdentifier),
            ("versionHashModifier", relationship.versionHashModifier),
            ("indexed", Self.yes(relationship.isIndexed)),
        ]
        group("relationship", attributes, isEmpty: relationship.userInfo.isEmpty) { xml in
            xml.write(userInfo: relationship.userInfo)
        }
    }

    mutating func write(_ property: FetchedPropertyDescription) {
        group("fetchedProperty", [("name", property.name), ("optional", Self.yes(property.isOptional))]) { xml in
            xml.empty(
                "fetchRequest",
                [
                    ("name", "fetchedPropertyFetchRequest"), ("entity", property.entityName),
                    ("predicateString", property.predicate),
                ])
            xml.write(userInfo: property.userInfo)
        }
    }

    mutating func write(userInfo: [String: String]) {
        guard !userInfo.isEmpty else { return }
        group("userInfo") { xml in
            for (key, value) in userInfo.sorted(by: { $0.key < $1.key }) {
                xml.empty("entry", [("key", key), ("value", value)])
            }
        }
    }

    // MARK: - Non public

    /// `YES` for true; nil (left out) for false, Xcode's default.
    private static func yes(_ flag: Bool) -> String? { flag ? "YES" : nil }

    /// A value as a `…ValueString` attribute, or as a `…DateTimeInterval` for dates.
    private static func valueAttributes(_ value: AttributeValue?, text: String, date: String) -> Attributes {
        guard let value else { return [] }
        if case .date(let moment) = value {
            return [(date, XcodeValueText.intervalText(moment.timeIntervalSinceReferenceDate))]
        }
        return [(text, XcodeValueText.text(of: value))]
    }

    private static func render(_ attributes: Attributes) -> String {
        var rendered = ""
        for case (let name, let value?) in attributes {
            rendered += " \(name)=\"\(XMLElementTree.escape(value))\""
        }
        return rendered
    }
}
