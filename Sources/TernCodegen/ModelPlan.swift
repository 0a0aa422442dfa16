import TernCore

/// What is written for a model: the classes of the current version's entities with their
/// properties' Swift names and types, decided before any code is written.
struct ModelPlan {
    /// The name of the model's enum.
    var modelTypeName: String
    /// The model file's name without its extension.
    var bundleName: String
    /// The version the classes are written for.
    var currentVersionName: String
    /// The entities that get a class or an extension, in entity name order.
    var classes: [ClassPlan]
    /// What was renamed or left out.
    var warnings: [String] = []

    init(model: VersionedModel, bundleName: String, options: CodegenOptions) {
        let current = model.currentVersion.model
        self.bundleName = bundleName
        currentVersionName = model.currentVersionName
        modelTypeName = ModelCodegen.modelTypeName(forBundleName: bundleName, prefix: options.typeNamePrefix)
        var builder = Builder(model: current, options: options)
        classes = current.entities.compactMap { builder.plan(of: $0.name) }
        warnings = builder.warnings
        let taken = Set(classes.flatMap { [$0.className] + ($0.machineName.map { [$0] } ?? []) })
        if taken.contains(modelTypeName) {
            let first = modelTypeName
            while taken.contains(modelTypeName) { modelTypeName += "Model" }
            warnings.append(
                "the model's enum is named \(modelTypeName), since the class of an entity is named \(first)")
        }
    }
}

/// One entity's class or extension.
struct ClassPlan {
    /// How the entity's class comes about.
    enum Kind {
        /// The class is generated (codegen `class`).
        case definition
        /// The developer writes the class; an extension adds the properties (codegen `category`).
        case category
    }

    var entity: EntityDescription
    var kind: Kind
    /// The entity's class: what fetches return and relationships hold (the human class in the
    /// machine-human style).
    var className: String
    /// The machine class that declares the properties in the machine-human style (`_Recipe`).
    var machineName: String?
    /// The superclass of the declared class.
    var superclassName: String
    /// Whether this is the topmost generated class of its hierarchy, which declares the
    /// conformance to `TypedManagedObject`.
    var declaresConformance: Bool
    /// Whether no entity inherits from this one, so that its class can be final.
    var isLeaf: Bool
    /// The generated classes above this one, topmost first.
    var ancestors: [String]
    var attributes: [AttributePlan] = []
    var relationships: [RelationshipPlan] = []
    var fetchedProperties: [FetchedPropertyPlan] = []

    /// The class whose declaration (or extension) holds the properties.
    var declaringName: String { machineName ?? className }
    /// The Swift names of the properties this class declares.
    var memberNames: [String] {
        attributes.map(\.swiftName) + relationships.map(\.swiftName) + fetchedProperties.map(\.swiftName)
    }
}

/// One attribute's Swift property.
struct AttributePlan {
    var attribute: AttributeDescription
    /// The property's name (not escaped).
    var swiftName: String
    /// The property's type, fully qualified.
    var swiftType: String
    /// The value a scalar reads when the attribute is nil (`0`, `false`); nil for optional types.
    var fallback: String?
    /// Whether the property holds the raw `AttributeValue` (undefined, object ID and composite
    /// attributes).
    var isRaw: Bool
}

/// One relationship's Swift property.
struct RelationshipPlan {
    var relationship: RelationshipDescription
    var swiftName: String
    /// The class of the destination entity.
    var destinationClass: String
}

/// One fetched property's accessor.
struct FetchedPropertyPlan {
    var fetchedProperty: FetchedPropertyDescription
    var swiftName: String
    var destinationClass: String
}

extension ModelPlan {
    /// Works out the plans entity by entity, parents first.
    struct Builder {
        let model: ManagedObjectModel
        let options: CodegenOptions
        var warnings: [String] = []
        private var plans: [String: ClassPlan?] = [:]
        /// The entity that took each generated class name first.
        private var owners: [String: String] = [:]

        init(model: ManagedObjectModel, options: CodegenOptions) {
            self.model = model
            self.options = options
            for entity in model.entities where kind(of: entity) != nil {
                let name = generatedName(of: entity)
                if let owner = owners[name] {
                    warnings.append(
                        "entity \(entity.name) has the class name \(name) of entity \(owner): no class is generated "
                            + "for \(entity.name); give it a class name of its own")
                } else {
                    owners[name] = entity.name
                }
            }
        }

        /// The plan of an entity, or nil when it gets no code.
        mutating func plan(of entityName: String) -> ClassPlan? {
            if let known = plans[entityName] { return known }
            guard let entity = model.entity(named: entityName), let kind = kind(of: entity),
                owners[generatedName(of: entity)] == entity.name
            else {
                plans[entityName] = .some(nil)
                return nil
            }
            var ancestors: [String] = []
            for ancestor in model.ancestors(of: entity.name).reversed() {
                if let plan = plan(of: ancestor.name) { ancestors.append(plan.className) }
            }
            let generated = generatedName(of: entity)
            var plan = ClassPlan(
                entity: entity, kind: kind, className: generated,
                machineName: kind == .definition && options.style == .machineHuman ? "_" + generated : nil,
                superclassName: entity.parentName.map(self.className(of:)) ?? "TernCore.ManagedObject",
                declaresConformance: ancestors.isEmpty,
                isLeaf: !model.entities.contains { $0.parentName == entity.name },
                ancestors: ancestors)
            var taken = Set(inheritedMemberNames(of: entity))
            for attribute in entity.attributes {
                let name = swiftName(for: attribute.name, in: entity, taken: &taken)
                let (type, fallback, isRaw) = Self.swiftType(of: attribute, options: options)
                plan.attributes.append(
                    AttributePlan(
                        attribute: attribute, swiftName: name, swiftType: type, fallback: fallback, isRaw: isRaw))
            }
            for relationship in entity.relationships {
                let name = swiftName(for: relationship.name, in: entity, taken: &taken)
                plan.relationships.append(
                    RelationshipPlan(
                        relationship: relationship, swiftName: name,
                        destinationClass: className(of: relationship.destinationEntityName)))
            }
            for fetched in entity.fetchedProperties {
                let name = swiftName(for: fetched.name, in: entity, taken: &taken)
                plan.fetchedProperties.append(
                    FetchedPropertyPlan(
                        fetchedProperty: fetched, swiftName: name, destinationClass: className(of: fetched.entityName)))
            }
            plans[entityName] = .some(plan)
            return plan
        }

        // MARK: - Names

        /// The kind of code an entity gets, or nil for none.
        func kind(of entity: EntityDescription) -> ClassPlan.Kind? {
            if options.generatesEveryEntity { return .definition }
            switch entity.codeGenerationType {
            case "class": return .definition
            case "category": return .category
            default: return nil
            }
        }

        /// The class name generated for an entity: its `representedClassName` without a module
        /// (`MyApp.Recipe`, `.Recipe`), or its name when it has none or names `NSManagedObject`.
        func generatedName(of entity: EntityDescription) -> String {
            let name = Self.unqualifiedClassName(entity.representedClassName) ?? entity.name
            return SwiftName.identifier(options.typeNamePrefix + name)
        }

        /// The Swift class of an entity's objects: the generated one, the developer's for an
        /// entity without code generation, or `ManagedObject`.
        func className(of entityName: String) -> String {
            guard let entity = model.entity(named: entityName) else { return "TernCore.ManagedObject" }
            if kind(of: entity) != nil {
                let name = generatedName(of: entity)
                return owners[name] == entity.name ? name : "TernCore.ManagedObject"
            }
            return Self.unqualifiedClassName(entity.representedClassName).map(SwiftName.identifier)
                ?? "TernCore.ManagedObject"
        }

        static func unqualifiedClassName(_ name: String?) -> String? {
            guard let name, let last = name.split(separator: ".").last.map(String.init), !last.isEmpty,
                last != "NSManagedObject"
            else { return nil }
            return last
        }

        /// The Swift names the generated classes above an entity declare.
        private mutating func inheritedMemberNames(of entity: EntityDescription) -> [String] {
            var names: [String] = []
            for ancestor in model.ancestors(of: entity.name) {
                if let plan = plan(of: ancestor.name) { names += plan.memberNames }
            }
            return names
        }

        /// A property's Swift name: a valid identifier, renamed when `ManagedObject` has a member
        /// of that name or an inherited generated property has it.
        private mutating func swiftName(for name: String, in entity: EntityDescription, taken: inout Set<String>)
            -> String
        {
            var swiftName = SwiftName.identifier(name)
            if Self.reservedMembers.contains(swiftName) {
                warnings.append(
                    "\(entity.name).\(name) is named \(swiftName)Property in Swift, since ManagedObject has a member \(swiftName)"
                )
                swiftName += "Property"
            } else if swiftName != name {
                warnings.append("\(entity.name).\(name) is named \(swiftName) in Swift")
            }
            let base = swiftName
            var number = 2
            while taken.contains(swiftName) {
                swiftName = base + String(number)
                number += 1
            }
            if swiftName != base {
                warnings.append(
                    "\(entity.name).\(name) is named \(swiftName) in Swift, since a class above it has a property \(base)"
                )
            }
            taken.insert(swiftName)
            return swiftName
        }

        /// `ManagedObject`'s properties and argument-less methods, which generated properties
        /// may not redeclare.
        static let reservedMembers: Set<String> = [
            "objectID", "entity", "isInserted", "isDeleted", "isInaccessible", "context", "isFault", "fireFault",
            "isUpdated", "hasChanges", "changedKeys", "description",
        ]

        // MARK: - Types

        /// The Swift type of an attribute's property, as Xcode picks it: object types are
        /// optional whatever the model says; numbers and Booleans are plain scalars when the
        /// attribute uses a scalar type (reading 0 or false for nil), optional otherwise.
        static func swiftType(
            of attribute: AttributeDescription, options: CodegenOptions
        ) -> (type: String, fallback: String?, isRaw: Bool) {
            let scalar = attribute.usesScalarValueType == true
            func number(_ type: String, _ zero: String) -> (String, String?, Bool) {
                scalar ? (type, zero, false) : (type + "?", nil, false)
            }
            switch attribute.type {
            case .integer16: return number("Swift.Int16", "0")
            case .integer32: return number("Swift.Int32", "0")
            case .integer64: return number("Swift.Int64", "0")
            case .double: return number("Swift.Double", "0")
            case .float: return number("Swift.Float", "0")
            case .boolean: return number("Swift.Bool", "false")
            case .decimal: return ("Foundation.Decimal?", nil, false)
            case .string: return ("Swift.String?", nil, false)
            case .date: return ("Foundation.Date?", nil, false)
            case .binary: return ("Foundation.Data?", nil, false)
            case .uuid: return ("Foundation.UUID?", nil, false)
            case .uri: return ("Foundation.URL?", nil, false)
            case .transformable:
                let registered = [attribute.attributeValueClassName, attribute.valueTransformerName].lazy
                    .compactMap { $0.flatMap { options.valueTypes[$0] } }.first
                return ((registered ?? "Foundation.Data") + "?", nil, false)
            case .undefined, .objectID, .composite: return ("TernCore.AttributeValue?", nil, true)
            }
        }
    }
}
