import Foundation
import TernCodegen
import TernCore
import TernFormats

/// `tern generate MODEL [--version V] [--output DIR] [--style xcode|machine-human]
/// [--access public|internal] [--value-type NAME=TYPE]…`: writes the Swift classes of a model's
/// entities and the model's enum to files, as the `TernModelCodegen` build plugin generates them
/// at build time (see `docs/Codegen.md`).
struct GenerateCommand: Command {
    /// The model to generate code for.
    static let model = ArgumentDefinition.positional("MODEL", help: ModelSelection.modelHelp)
    /// Where the files go.
    static let output = ArgumentDefinition.option(
        "output", short: "o", value: "DIR",
        help: "Writes the files into DIR, created if missing (default: the current folder).")
    /// How the code is split into files.
    static let style = ArgumentDefinition.option(
        "style", value: "xcode|machine-human",
        help:
            "xcode (the default): CLASS+CoreDataClass.swift and CLASS+CoreDataProperties.swift; machine-human: _CLASS.swift, and CLASS.swift only when missing."
    )
    /// The access level of the declarations.
    static let access = ArgumentDefinition.option(
        "access", value: "public|internal", help: "The access level of the generated declarations (default: public).")
    /// A Swift type for Transformable attributes.
    static let valueType = ArgumentDefinition.option(
        "value-type", value: "NAME=TYPE", isRepeatable: true,
        help:
            "Types Transformable attributes whose custom class or value transformer is NAME as TYPE? (an AttributeValueConvertible type) instead of Data?."
    )

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "generate",
        abstract: "Writes typed Swift classes for a model's entities, as Xcode's code generation writes them.",
        discussion: """
            The classes are written for the current version (or --version): one class per entity
            whose codegen is Class Definition, named by its class name (a module prefix such as
            MyApp. dropped) and subclassing its parent entity's class; for Category/Extension, an
            extension of the class you write; nothing for Manual/None. A compiled model (.momd,
            .mom) keeps no codegen setting, so every entity of one gets a class. Properties have
            Xcode's types: String?, Date?, Data?, UUID?, URL?, Decimal?, scalars (Int16, Int64,
            Double, Bool…) when the attribute uses a scalar type and optionals (Int64?) when not,
            Transformable as Data? unless --value-type names a type, to-one relationships as the
            destination's class, to-many ones as arrays, in order when ordered, with Xcode's add
            and remove helpers. A property named like a member of ManagedObject (context,
            entity, …) gets Property after its name, with a warning.

            One more file holds the model's enum, named after the model file (Kitchen.xcdatamodeld
            gives KitchenModel): every version's XML embedded (versioned, current), each version's
            entity hashes (versionHashes), the classes (classes, register(in:)) and the key path
            table that typed fetches use (Recipe.fetchRequest(predicate: #Predicate { ... })).
            The code imports TernCore and TernFormats.

            --style xcode writes CLASS+CoreDataClass.swift (the class) and
            CLASS+CoreDataProperties.swift (its properties), as Xcode's "Create NSManagedObject
            Subclass" does. --style machine-human follows mogenerator: _CLASS.swift holds the
            machine class _CLASS with the properties and is written every time; CLASS.swift holds
            CLASS, a subclass of _CLASS for your own code, and is written only when it is missing.
            Each file written is listed on stdout (kept human files are listed as kept); warnings
            go to stderr.
            """,
        arguments: [model, ModelSelection.version, output, style, access, valueType],
        examples: [
            "tern generate Kitchen.xcdatamodeld --output Sources/Kitchen/Generated",
            "tern generate Kitchen.xcdatamodeld --style machine-human -o Sources/Kitchen/Model",
            "tern generate Kitchen.momd --version \"Kitchen 2\" --access internal --value-type ColorTransformer=Color",
        ])

    /// The model, and the version to generate for.
    var selection: ModelSelection
    /// The output folder as typed.
    var outputPath: String
    /// The options of the generator.
    var options: CodegenOptions

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing argument \(Self.model.valueName)")
        }
        self.selection = selection
        outputPath = arguments.value(of: Self.output) ?? "."
        options = CodegenOptions()
        if let style = arguments.value(of: Self.style) {
            guard let value = CodegenOptions.Style(rawValue: style) else {
                throw ValidationError("--style takes xcode or machine-human, not '\(style)'")
            }
            options.style = value
        }
        if let access = arguments.value(of: Self.access) {
            guard let value = CodegenOptions.AccessLevel(rawValue: access) else {
                throw ValidationError("--access takes public or internal, not '\(access)'")
            }
            options.accessLevel = value
        }
        for pair in arguments.values(of: Self.valueType) {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--value-type takes NAME=TYPE, such as ColorTransformer=Color, not '\(pair)'")
            }
            options.valueTypes[parts[0]] = parts[1]
        }
    }

    /// Reads the model and writes the files.
    func run(in context: CommandContext) async throws {
        let model = try selection.read(in: context)
        let modelURL = context.environment.url(forPath: selection.path)
        var options = self.options
        options.generatesEveryEntity = [XcodeModel.compiledBundleExtension, XcodeModel.compiledModelExtension]
            .contains(modelURL.pathExtension)
        let code: GeneratedCode
        do {
            code = try ModelCodegen.generate(model, bundleName: Self.bundleName(of: modelURL), options: options)
        } catch {
            throw CommandFailure("cannot generate code for \(selection.path): \(error.message)")
        }
        for warning in code.warnings { context.warn(warning) }
        let folder = context.environment.url(forPath: outputPath)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure("cannot create the folder \(outputPath); check its path and permissions")
        }
        var lines: [String] = []
        for file in code.files {
            let url = folder.appendingPathComponent(file.name)
            if file.isWrittenOnce, FileManager.default.fileExists(atPath: url.path) {
                lines.append("kept \(url.path)")
                continue
            }
            do {
                try Data(file.contents.utf8).write(to: url, options: .atomic)
            } catch {
                throw CommandFailure("cannot write \(url.path); check the folder's permissions")
            }
            lines.append("wrote \(url.path)")
        }
        for line in lines { context.print(line) }
    }

    // MARK: - Non public

    /// The model file's name without its extension (the folder's for a `contents` file).
    static func bundleName(of url: URL) -> String {
        let file =
            [XcodeModel.contentsFileName, "elements"].contains(url.lastPathComponent)
            ? url.deletingLastPathComponent() : url
        return file.deletingPathExtension().lastPathComponent
    }
}
