import Foundation
import TernCore
import TernFormats

extension CodeWriter {
    // MARK: - The model's enum

    /// The enum named after the model: every version embedded, the entity hashes, the classes,
    /// their registration and the key path table.
    func modelEnumUnit() -> Unit {
        var source = SourceText()
        let name = plan.modelTypeName
        let modelName = SwiftName.literal(model.name)
        source.doc(
            "The \(SwiftName.commentText(plan.bundleName)) model: every version, embedded when the code was",
            "generated, and the classes generated for its current version, \(SwiftName.commentText(plan.currentVersionName)).",
            "",
            "```swift",
            "let coordinator = PersistentStoreCoordinator(model: \(name).current)",
            "try await context.perform { context in \(name).register(in: context) }",
            "```")
        source.block("\(access)enum \(name)") { source in
            source.doc(
                "Every version of the model, in migration order, read from the XML embedded below: no model",
                "file is needed at run time.")
            source.block("\(access)static let versioned: TernCore.VersionedModel =", closing: "}()") { source in
                source.line("var versions: [TernCore.ModelVersion] = []")
                source.block("for (name, contents) in versionContents") { source in
                    source.line("do {")
                    source.nested { source in
                        source.line(
                            "let model = try TernFormats.XcodeModel.model(fromContents: Foundation.Data(contents.utf8), path: name)"
                        )
                        source.line("versions.append(TernCore.ModelVersion(name: name, model: model))")
                    }
                    source.line("} catch {")
                    source.nested { source in
                        source.line(
                            "Swift.preconditionFailure(\"the embedded version \\(name) of \(name) does not read: \\(error)\")"
                        )
                    }
                    source.line("}")
                }
                source.line(
                    "return TernCore.VersionedModel(name: \(modelName), versions: versions, "
                        + "current: \(SwiftName.literal(model.currentVersionName)), hasExplicitOrder: \(model.hasExplicitOrder))"
                )
            }
            source.line()
            source.doc("The current version's model.")
            source.line("\(access)static var current: TernCore.ManagedObjectModel { versioned.currentVersion.model }")
            source.line()
            versionHashes(in: &source)
            source.line()
            classTables(in: &source)
            source.line()
            registration(in: &source)
            source.line()
            keyPathTable(in: &source)
            source.line()
            source.doc("Each version's name and `contents` XML, oldest first.")
            source.line("private static let versionContents: [(Swift.String, Swift.String)] = [")
            source.nested { source in
                for version in model.versions {
                    let xml = XcodeModel.contentsXML(for: version.model)
                    source.line("(\(SwiftName.literal(version.name)), \(SwiftName.rawMultilineLiteral(xml))),")
                }
            }
            source.line("]")
        }
        return Unit(fileName: "\(name).swift", imports: [.foundation, .ternCore, .ternFormats], body: source.text)
    }

    // MARK: - Non public

    private func versionHashes(in source: inout SourceText) {
        source.doc(
            "Each version's entity version hashes, as `tern model` prints them (base64), computed when the code",
            "was generated: by version name, then entity name. Tests and linters compare them with the",
            "hashes of ``versioned`` to catch a model edited since.")
        source.line("\(access)static let versionHashes: [Swift.String: [Swift.String: Swift.String]] = [")
        for version in model.versions {
            let hashes = version.model.entityVersionHashes.sorted { $0.key < $1.key }
            source.nested { source in
                guard !hashes.isEmpty else {
                    source.line("\(SwiftName.literal(version.name)): [:],")
                    return
                }
                source.line("\(SwiftName.literal(version.name)): [")
                for (entity, hash) in hashes {
                    source.line("    \(SwiftName.literal(entity)): \(SwiftName.literal(hash.base64EncodedString())),")
                }
                source.line("],")
            }
        }
        source.line("]")
    }

    private func classTables(in source: inout SourceText) {
        source.doc("The generated class of each entity that has one, by entity name.")
        dictionary(
            "\(access)static let classes: [Swift.String: TernCore.ManagedObject.Type] =",
            plan.classes.map { "\(SwiftName.literal($0.entity.name)): \($0.className).self" }, in: &source)
        source.line()
        source.doc(
            "The entity of a generated class.", "",
            "- Parameter type: A class of ``classes``.",
            "- Returns: Its entity's name; nil for other classes.")
        source.block("\(access)static func entityName(of type: TernCore.ManagedObject.Type) -> Swift.String?") {
            source in
            source.line("entityNames[Swift.ObjectIdentifier(type)]")
        }
        source.line()
        dictionary(
            "private static let entityNames: [Swift.ObjectIdentifier: Swift.String] =",
            plan.classes.map { "Swift.ObjectIdentifier(\($0.className).self): \(SwiftName.literal($0.entity.name))" },
            in: &source)
    }

    /// `declaration [entries…]`, one entry a line, or `declaration [:]`.
    private func dictionary(_ declaration: String, _ entries: [String], in source: inout SourceText) {
        guard !entries.isEmpty else {
            source.line(declaration + " [:]")
            return
        }
        source.line(declaration + " [")
        source.nested { source in
            for entry in entries { source.line(entry + ",") }
        }
        source.line("]")
    }

    private func registration(in source: inout SourceText) {
        source.doc(
            "Registers the generated classes with a context, for the entities the context's model has, so",
            "that fetches return them. Typed inserts and fetches register them by themselves.", "",
            "- Parameter context: The context.")
        source.block("\(access)static func register(in context: isolated TernCore.ObjectContext)") { source in
            source.line("let model = context.coordinator.model")
            source.block("for (entity, type) in classes where model.entity(named: entity) != nil") { source in
                source.line("context.register(type, forEntity: entity)")
            }
        }
    }

    /// `propertyName(for:)`, answering through one function per class that names the stored
    /// properties it declares, for any root at or below it.
    private func keyPathTable(in source: inout SourceText) {
        source.doc(
            "The model property a key path of a generated class stands for: the non-transient attributes and",
            "relationships; nil for other key paths (computed properties, transient attributes).", "",
            "- Parameter keyPath: A key path whose root is a generated class.",
            "- Returns: The property's name in the model.",
            "- Complexity: O(*p*) in the number of properties of the key path's class.")
        let stored = plan.classes.filter { !storedProperties(of: $0).isEmpty }
        let known = Set(stored.map(\.className))
        let roots = plan.classes.filter { !($0.ancestors + [$0.className]).filter(known.contains).isEmpty }
        guard !roots.isEmpty else {
            source.line("\(access)static func propertyName(for keyPath: Swift.AnyKeyPath) -> Swift.String? { nil }")
            return
        }
        source.block("\(access)static func propertyName(for keyPath: Swift.AnyKeyPath) -> Swift.String?") { source in
            source.line("var names: [Swift.AnyKeyPath: Swift.String] = [:]")
            source.line("switch Swift.ObjectIdentifier(Swift.type(of: keyPath).rootType) {")
            for root in roots {
                let calls = (root.ancestors + [root.className]).filter(known.contains)
                    .map { "add\($0)KeyPaths(\(root.className).self, into: &names)" }
                source.line("case Swift.ObjectIdentifier(\(root.className).self): \(calls.joined(separator: "; "))")
            }
            source.line("default: return nil")
            source.line("}")
            source.line("return names[keyPath]")
        }
        for plan in stored {
            source.line()
            let signature =
                "private static func add\(plan.className)KeyPaths<Root: \(plan.className)>(_ root: Root.Type, "
                + "into names: inout [Swift.AnyKeyPath: Swift.String])"
            source.block(signature) { source in
                for (swiftName, name) in storedProperties(of: plan) {
                    source.line("names[\\Root.\(SwiftName.escaped(swiftName))] = \(SwiftName.literal(name))")
                }
            }
        }
    }

    /// The Swift and model names of the non-transient attributes and relationships a class declares.
    private func storedProperties(of plan: ClassPlan) -> [(String, String)] {
        plan.attributes.filter { !$0.attribute.isTransient }.map { ($0.swiftName, $0.attribute.name) }
            + plan.relationships.filter { !$0.relationship.isTransient }.map { ($0.swiftName, $0.relationship.name) }
    }
}
