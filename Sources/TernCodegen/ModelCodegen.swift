public import TernCore

/// Writes Swift classes for a model's entities, as Xcode's code generation does, for Tern's
/// object layer: what the `TernModelCodegen` build plugin and `tern generate` run.
///
/// The classes are written for the model's current version: one class per entity whose codegen
/// is `class` (named by its `representedClassName`, subclassing its parent entity's class), an
/// extension of the developer's own class for `category`, nothing for Manual/None. Properties
/// follow Xcode's types (see `docs/Codegen.md`): `String?`, `Date?`, scalars such as `Int64` when
/// the attribute uses a scalar type, `Int64?` when it does not, to-one relationships as the
/// destination's class, to-many ones as arrays with add and remove helpers. One enum per model,
/// named after the bundle (`Kitchen.xcdatamodeld` gives `KitchenModel`), embeds every version.
///
/// ```swift
/// let model = try XcodeModel.readVersionedModel(at: URL(fileURLWithPath: "Kitchen.xcdatamodeld"))
/// let code = try ModelCodegen.generate(model, bundleName: "Kitchen")
/// for file in code.files { print(file.name) }   // Recipe+CoreDataClass.swift, …, KitchenModel.swift
/// ```
public enum ModelCodegen {
    // MARK: - Generating

    /// Generates the code of a model.
    ///
    /// - Parameters:
    ///   - model: Every version of the model; classes are written for its current version.
    ///   - bundleName: The name of the model file without its extension (`Kitchen` for
    ///     `Kitchen.xcdatamodeld`), which names the model's enum.
    ///   - options: The style, layout and access level.
    /// - Returns: The files, and warnings for what was renamed or left out.
    /// - Throws: ``CodegenError/Code/emptyModel`` for a model without versions.
    /// - Complexity: O(*n*) in the size of the model.
    public static func generate(
        _ model: VersionedModel, bundleName: String, options: CodegenOptions = CodegenOptions()
    ) throws(CodegenError) -> GeneratedCode {
        guard !model.versions.isEmpty else {
            throw CodegenError(.emptyModel, "the model \(bundleName) has no version to generate code for")
        }
        let plan = ModelPlan(model: model, bundleName: bundleName, options: options)
        let writer = CodeWriter(plan: plan, model: model, options: options)
        return GeneratedCode(
            files: writer.files(), warnings: plan.warnings, modelTypeName: plan.modelTypeName,
            classNames: Dictionary(uniqueKeysWithValues: plan.classes.map { ($0.entity.name, $0.className) }))
    }

    /// The name of a model's enum: the bundle's name in UpperCamelCase, followed by `Model`
    /// unless it ends with it already. (When an entity's class has that name, the enum gets one
    /// more `Model`, and a warning says so.)
    ///
    /// ```swift
    /// ModelCodegen.modelTypeName(forBundleName: "Kitchen")         // "KitchenModel"
    /// ModelCodegen.modelTypeName(forBundleName: "CoreDataModel")   // "CoreDataModel"
    /// ```
    ///
    /// - Parameters:
    ///   - bundleName: The model file's name without its extension.
    ///   - prefix: ``CodegenOptions/typeNamePrefix``.
    /// - Returns: The enum's name.
    public static func modelTypeName(forBundleName bundleName: String, prefix: String = "") -> String {
        let base = SwiftName.typeName(fromFileName: bundleName)
        return SwiftName.identifier(prefix + (base.hasSuffix("Model") ? base : base + "Model"))
    }
}
