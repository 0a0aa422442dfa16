/// How ``ModelCodegen`` writes a model's classes.
///
/// ```swift
/// var options = CodegenOptions()
/// options.style = .machineHuman
/// options.valueTypes = ["ColorTransformer": "Color"]
/// let code = try ModelCodegen.generate(model, bundleName: "Kitchen", options: options)
/// ```
public struct CodegenOptions: Sendable, Hashable {
    /// How the code is split into classes and files.
    public enum Style: String, Sendable, Hashable, CaseIterable {
        /// As Xcode's code generation: one class per entity (`Recipe+CoreDataClass.swift`) and
        /// an extension with its properties (`Recipe+CoreDataProperties.swift`).
        case xcode
        /// As mogenerator: a regenerated machine class `_Recipe` (`_Recipe.swift`) with the
        /// properties, and a human class `Recipe` subclassing it (`Recipe.swift`), written only
        /// when missing, for the developer's own code.
        case machineHuman = "machine-human"
    }

    /// Where the generated declarations go.
    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// Everything generated in one file, as the build plugin writes it (human files of the
        /// machine-human style stay apart).
        case singleFile
        /// One file per class and extension, plus one for the model's enum.
        case filePerEntity
    }

    /// The access level of the generated declarations.
    public enum AccessLevel: String, Sendable, Hashable, CaseIterable {
        /// `public`, as Xcode writes them.
        case `public`
        /// `internal`: visible in the module only.
        case `internal`
    }

    /// The split into classes and files; ``Style/xcode`` by default.
    public var style: Style = .xcode
    /// Where the declarations go; ``Layout/filePerEntity`` by default.
    public var layout: Layout = .filePerEntity
    /// The access level; ``AccessLevel/public`` by default.
    public var accessLevel: AccessLevel = .public
    /// Whether every entity gets a class definition, whatever its codegen setting: for compiled
    /// models (`.momd`, `.mom`), which keep no codegen setting. False by default: entities whose
    /// codegen is `class` get a class, `category` an extension of the developer's class, and the
    /// others (Manual/None) nothing.
    public var generatesEveryEntity = false
    /// The Swift types of Transformable attributes, by the attribute's custom class name or
    /// value transformer name: each must conform to `AttributeValueConvertible`. Transformable
    /// attributes not named here are `Data?`.
    public var valueTypes: [String: String] = [:]
    /// A prefix put before every generated type name (none by default), so that the classes of
    /// several models with entities of the same names can share a module.
    public var typeNamePrefix = ""

    /// Creates the default options: Xcode's style, one file per entity, public declarations.
    public init() {}
}
