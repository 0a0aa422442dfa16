import Foundation
import TernCodegen
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// The code generated for every model of the real-world corpus compiles, and declares for each
/// entity the properties and types the model calls for.
///
/// Every entity gets a class (compiled models keep no codegen setting, and source models mark
/// few entities), each model's types a prefix of their own (`M12_`) so that all the models share
/// one module: one `swiftc -typecheck` checks the whole corpus at once. Beside each model's code,
/// the test writes typed key path declarations from its own reading of the model
/// (`let _: ReferenceWritableKeyPath<M12_Recipe, Swift.String?> = \.title`): each compiles only
/// if the class has that property, settable, of exactly that type.
@Suite struct CorpusCodegenTests {
    /// One model of the corpus, generated.
    struct Generated {
        var item: RealWorldCorpus.Item
        var model: VersionedModel
        var code: GeneratedCode
        var file: URL
    }

    @Test func everyCorpusModelGeneratesCodeThatCompilesWithTheModelsTypes() throws {
        let folder = try TemporaryDirectory()
        var generated: [Generated] = []
        var checkedProperties = 0
        for (index, item) in try RealWorldCorpus.items(of: .model, .compiledModel).enumerated() {
            // Models without meaning are refused by the reader (RealWorldModelTests names them).
            guard let model = try? XcodeModel.readVersionedModel(at: item.url) else { continue }
            var options = CodegenOptions()
            options.layout = .singleFile
            options.generatesEveryEntity = true
            options.typeNamePrefix = "M\(index)_"
            let bundleName = item.url.deletingPathExtension().lastPathComponent
            let code = try ModelCodegen.generate(model, bundleName: bundleName, options: options)
            let (checks, count) = Self.checks(of: model.currentVersion.model, code: code, function: "check\(index)")
            checkedProperties += count
            let source = try #require(code.files.first).contents + "\n" + checks
            let file = folder.path("M\(index).swift")
            try Data(source.utf8).write(to: file)
            generated.append(Generated(item: item, model: model, code: code, file: file))
        }
        #expect(generated.count >= 200, "\(generated.count) models generated")
        #expect(checkedProperties >= 2_000, "\(checkedProperties) properties checked")
        let result = try SwiftTypechecker.typecheck(generated.map(\.file), moduleName: "CorpusCodegen")
        #expect(
            result.succeeded,
            "swiftc failed:\n\(result.output.split(separator: "\n").prefix(60).joined(separator: "\n"))")
        for model in generated {
            // Each entity has a class, unless another entity of the model took its class name.
            let entities = model.model.currentVersion.model.entities.count
            let collisions = model.code.warnings.filter { $0.contains("has the class name") }.count
            #expect(model.code.classNames.count == entities - collisions, "\(model.item)")
        }
    }

    @Test func theEmbeddedXMLReadsBackAsEveryCorpusVersion() throws {
        var versions = 0
        for item in try RealWorldCorpus.items(of: .model, .compiledModel) {
            guard let model = try? XcodeModel.readVersionedModel(at: item.url) else { continue }
            for version in model.versions {
                let xml = XcodeModel.contentsXML(for: version.model)
                let read = try XcodeModel.model(fromContents: Data(xml.utf8), path: version.name)
                #expect(read == version.model, "\(item) \(version.name)")
                versions += 1
            }
        }
        #expect(versions >= 150)
    }

    // MARK: - Expectations

    /// `ManagedObject`'s members that generated properties may not take (they get `Property`).
    static let reserved: Set<String> = [
        "objectID", "entity", "isInserted", "isDeleted", "isInaccessible", "context", "isFault", "fireFault",
        "isUpdated", "hasChanges", "changedKeys", "description",
    ]

    /// The Swift type the model calls for, as Xcode's code generation maps attribute types.
    static func expectedType(of attribute: AttributeDescription) -> String {
        let scalar = attribute.usesScalarValueType == true
        func number(_ name: String) -> String { scalar ? "Swift.\(name)" : "Swift.\(name)?" }
        switch attribute.type {
        case .integer16: return number("Int16")
        case .integer32: return number("Int32")
        case .integer64: return number("Int64")
        case .double: return number("Double")
        case .float: return number("Float")
        case .boolean: return number("Bool")
        case .decimal: return "Foundation.Decimal?"
        case .string: return "Swift.String?"
        case .date: return "Foundation.Date?"
        case .binary, .transformable: return "Foundation.Data?"
        case .uuid: return "Foundation.UUID?"
        case .uri: return "Foundation.URL?"
        case .undefined, .objectID, .composite: return "TernCore.AttributeValue?"
        }
    }

    /// A function of typed key path declarations, one per property whose Swift name follows from
    /// its model name; and how many there are.
    static func checks(of model: ManagedObjectModel, code: GeneratedCode, function: String) -> (String, Int) {
        var lines = ["func \(function)() {"]
        for entity in model.entities {
            guard let className = code.classNames[entity.name] else { continue }
            if let parent = entity.parentName, let parentClass = code.classNames[parent] {
                lines.append("    let _: \(parentClass).Type = \(className).self")
            }
            let inherited = Set(model.ancestors(of: entity.name).flatMap { $0.properties.map(\.name) })
            func name(_ property: String) -> String? {
                guard
                    property.unicodeScalars.allSatisfy({
                        $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0)
                    }),
                    let first = property.unicodeScalars.first, !("0"..."9").contains(first),
                    !inherited.contains(property)
                else { return nil }
                return reserved.contains(property) ? property + "Property" : "`\(property)`"
            }
            for attribute in entity.attributes {
                guard let swiftName = name(attribute.name) else { continue }
                let kind = attribute.isDerived ? "KeyPath" : "ReferenceWritableKeyPath"
                lines.append("    let _: \(kind)<\(className), \(expectedType(of: attribute))> = \\.\(swiftName)")
            }
            for relationship in entity.relationships {
                guard let swiftName = name(relationship.name) else { continue }
                let destination = code.classNames[relationship.destinationEntityName] ?? "TernCore.ManagedObject"
                let type = relationship.isToMany ? "[\(destination)]" : "\(destination)?"
                lines.append("    let _: ReferenceWritableKeyPath<\(className), \(type)> = \\.\(swiftName)")
            }
            for fetched in entity.fetchedProperties {
                guard let swiftName = name(fetched.name) else { continue }
                let destination = code.classNames[fetched.entityName] ?? "TernCore.ManagedObject"
                lines.append(
                    "    let _ = { (object: \(className), context: isolated TernCore.ObjectContext) async throws -> [\(destination)] in "
                        + "try await object.\(swiftName)(in: context) }")
            }
        }
        lines.append("    let _: TernCore.VersionedModel = \(code.modelTypeName).versioned")
        lines.append("}")
        return (
            lines.joined(separator: "\n") + "\n", lines.count { $0.contains("KeyPath<") || $0.contains("isolated") }
        )
    }
}
