import TernCore

extension CodeWriter {
    // MARK: - Classes

    /// The files of one entity: its class (unless the developer writes it), the extension with
    /// its properties, and in the machine-human style the human class.
    func classUnits(of plan: ClassPlan) -> [Unit] {
        var units: [Unit] = []
        let properties = propertiesExtension(of: plan)
        let foundation: Imports =
            plan.attributes.contains { Self.usesFoundation($0.swiftType) } ? .publicFoundation : []
        switch (plan.kind, options.style) {
        case (.definition, .xcode):
            units.append(
                Unit(
                    fileName: "\(plan.className)+CoreDataClass.swift", imports: .ternCore,
                    body: classDeclaration(of: plan)))
            units.append(
                Unit(
                    fileName: "\(plan.className)+CoreDataProperties.swift", imports: foundation.union(.ternCore),
                    body: properties))
        case (.definition, .machineHuman):
            units.append(
                Unit(
                    fileName: "\(plan.declaringName).swift", imports: foundation.union(.ternCore),
                    body: classDeclaration(of: plan) + "\n" + properties))
            units.append(
                Unit(fileName: "\(plan.className).swift", imports: [], body: humanClass(of: plan), isWrittenOnce: true))
        case (.category, .xcode):
            units.append(
                Unit(
                    fileName: "\(plan.className)+CoreDataProperties.swift", imports: foundation.union(.ternCore),
                    body: properties))
        case (.category, .machineHuman):
            units.append(
                Unit(fileName: "_\(plan.className).swift", imports: foundation.union(.ternCore), body: properties))
        }
        return units
    }

    /// `public final class Recipe: TernCore.ManagedObject {}` (or the machine class `_Recipe`).
    private func classDeclaration(of plan: ClassPlan) -> String {
        var source = SourceText()
        let entity = SwiftName.commentText(plan.entity.name)
        if let machine = plan.machineName {
            source.doc(
                "The generated base of `\(plan.className)`, for the entity `\(entity)` of \(modelPhrase): its properties.",
                "Write your own code in `\(plan.className)`; this class is generated again whenever the model changes.")
            source.line("\(access)class \(machine): \(plan.superclassName) {}")
        } else {
            source.doc("An object of the entity `\(entity)` of \(modelPhrase).")
            let final = plan.isLeaf ? "final " : ""
            source.line("\(access)\(final)class \(plan.className): \(plan.superclassName) {}")
        }
        return source.text
    }

    /// The developer's class of the machine-human style, written once.
    private func humanClass(of plan: ClassPlan) -> String {
        var source = SourceText()
        source.doc(
            "An object of the entity `\(SwiftName.commentText(plan.entity.name))` of \(modelPhrase).",
            "",
            "The generated properties are in `\(plan.declaringName)`; add your own code here.")
        source.line("\(access)class \(plan.className): \(plan.declaringName) {}")
        return source.text
    }

    /// The extension that declares an entity's properties, fetched properties and relationship
    /// helpers, and the conformance to `TypedManagedObject` for the topmost class.
    private func propertiesExtension(of plan: ClassPlan) -> String {
        var source = SourceText()
        let taken = Set(plan.memberNames)
        source.block("extension \(plan.declaringName)") { source in
            var first = true
            func separate() {
                if !first { source.line() }
                first = false
            }
            for attribute in plan.attributes {
                separate()
                write(attribute, in: &source)
            }
            for relationship in plan.relationships {
                separate()
                write(relationship, in: &source, taken: taken)
            }
            for fetched in plan.fetchedProperties {
                separate()
                write(fetched, in: &source)
            }
        }
        if plan.declaresConformance {
            source.line()
            conformance(of: plan, in: &source)
        }
        return source.text
    }

    // MARK: - Properties

    private func write(_ plan: AttributePlan, in source: inout SourceText) {
        let attribute = plan.attribute
        let key = SwiftName.literal(attribute.name)
        var notes = [attribute.type.xcodeName]
        if plan.fallback != nil { notes.append("scalar") }
        notes.append(attribute.isOptional ? "optional" : "required")
        if attribute.isTransient { notes.append("transient") }
        if attribute.isDerived { notes.append("derived") }
        source.doc("The `\(SwiftName.commentText(attribute.name))` attribute (\(notes.joined(separator: ", "))).")
        source.block("\(access)var \(SwiftName.escaped(plan.swiftName)): \(plan.swiftType)") { source in
            let read = plan.isRaw ? "self[attribute: \(key)]" : "self[\(key)]"
            source.line("get { \(read)\(plan.fallback.map { " ?? \($0)" } ?? "") }")
            if !attribute.isDerived { source.line("set { \(read) = newValue }") }
        }
    }

    private func write(_ plan: RelationshipPlan, in source: inout SourceText, taken: Set<String>) {
        let relationship = plan.relationship
        let key = SwiftName.literal(relationship.name)
        let name = SwiftName.escaped(plan.swiftName)
        let destination = plan.destinationClass
        let comment = SwiftName.commentText(relationship.name)
        let target = SwiftName.commentText(relationship.destinationEntityName)
        guard relationship.isToMany else {
            source.doc("The `\(comment)` relationship: one `\(target)`, or nil.")
            source.block("\(access)var \(name): \(destination)?") { source in
                source.line("get { self[toOne: \(key)] }")
                source.line("set { self[toOne: \(key)] = newValue }")
            }
            return
        }
        let kind = relationship.isOrdered ? "ordered" : "unordered"
        source.doc("The `\(comment)` relationship: the related `\(target)` objects (\(kind)).")
        source.block("\(access)var \(name): [\(destination)]") { source in
            source.line("get { objects(for: \(key)) }")
            source.line("set { setObjects(newValue, for: \(key)) }")
        }
        let suffix = SwiftName.capitalized(plan.swiftName)
        var helpers: [(name: String, doc: String, signature: String, body: String)] = [
            (
                "addTo\(suffix)", "Adds an object to `\(comment)`.", "(_ value: \(destination))",
                "add(value, to: \(key))"
            ),
            (
                "removeFrom\(suffix)", "Removes an object from `\(comment)`.", "(_ value: \(destination))",
                "remove(value, from: \(key))"
            ),
            (
                "addTo\(suffix)", "Adds objects to `\(comment)`.", "(_ values: [\(destination)])",
                "for value in values { add(value, to: \(key)) }"
            ),
            (
                "removeFrom\(suffix)", "Removes objects from `\(comment)`.", "(_ values: [\(destination)])",
                "for value in values { remove(value, from: \(key)) }"
            ),
        ]
        if relationship.isOrdered {
            helpers += [
                (
                    "insertInto\(suffix)", "Inserts an object into `\(comment)` at a position, or moves it there.",
                    "(_ value: \(destination), at index: Swift.Int)", "insert(value, into: \(key), at: index)"
                ),
                (
                    "removeFrom\(suffix)", "Removes the object at a position of `\(comment)`.", "(at index: Swift.Int)",
                    "remove(objects(for: \(key))[index], from: \(key))"
                ),
                (
                    "replace\(suffix)", "Replaces the object at a position of `\(comment)`.",
                    "(at index: Swift.Int, with value: \(destination))",
                    "var current = objects(for: \(key)); current[index] = value; setObjects(current, for: \(key))"
                ),
            ]
        }
        for helper in helpers where !taken.contains(helper.name) {
            source.doc(helper.doc)
            source.line("\(access)func \(helper.name)\(helper.signature) { \(helper.body) }")
        }
    }

    private func write(_ plan: FetchedPropertyPlan, in source: inout SourceText) {
        let fetched = plan.fetchedProperty
        let condition = fetched.predicate.map { " matching `\(SwiftName.commentText($0))`" } ?? ""
        source.doc(
            "The fetched property `\(SwiftName.commentText(fetched.name))`: the `\(SwiftName.commentText(fetched.entityName))` objects\(condition),",
            "fetched again at each call.",
            "",
            "- Parameter context: The object's context.",
            "- Returns: The matching objects.",
            "- Throws: When the predicate cannot run, or a store cannot be read.")
        let signature =
            "\(access)func \(SwiftName.escaped(plan.swiftName))(in context: isolated TernCore.ObjectContext) async throws"
        source.block("\(signature) -> [\(plan.destinationClass)]") { source in
            source.line("try await context.objects(forFetchedProperty: \(SwiftName.literal(fetched.name)), of: self)")
        }
    }

    /// The conformance of the topmost generated class, answering from the model's enum.
    private func conformance(of plan: ClassPlan, in source: inout SourceText) {
        let model = self.plan.modelTypeName
        source.block("extension \(plan.declaringName): TernCore.TypedManagedObject") { source in
            source.doc("The entity of the class: each generated subclass answers with its own.")
            source.block("\(access)static var entityName: Swift.String") { source in
                source.line("\(model).entityName(of: self) ?? \(SwiftName.literal(plan.entity.name))")
            }
            source.line()
            source.doc(
                "The model property a key path stands for, from \(model)'s key path table.", "",
                "- Parameter keyPath: A key path of a generated class.",
                "- Returns: The attribute or relationship name; nil for key paths of no stored property.")
            source.block("\(access)static func propertyName(for keyPath: Swift.AnyKeyPath) -> Swift.String?") {
                source in
                source.line("\(model).propertyName(for: keyPath)")
            }
            source.line()
            source.doc(
                "Registers the classes generated from \(modelPhrase) with a context.", "",
                "- Parameter context: The context.")
            source.block("\(access)static func registerModelClasses(in context: isolated TernCore.ObjectContext)") {
                source in
                source.line("\(model).register(in: context)")
            }
        }
    }
}
