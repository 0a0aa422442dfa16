import Foundation
import TernCodegen
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// `tern generate`: the files of both styles, kept human files, compiled models, options.
@Suite struct GenerateCommandTests {
    static let chefsBook = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/ChefsBook/ChefsBook.xcdatamodeld")
    static let kitchen = Fixtures.root.deletingLastPathComponent().appendingPathComponent(
        "TernCodegenTests/Kitchen.xcdatamodeld")

    /// The files in a folder, by name.
    static func contents(of folder: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    @Test func xcodeStyleWritesAClassAndAPropertiesFilePerEntityThatCompile() async throws {
        let folder = try TemporaryDirectory()
        let output = folder.path("Generated")
        let result = await ToolRunner.run(["generate", Self.chefsBook.path, "--output", output.path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        let files = try Self.contents(of: output)
        let names = ["Ingredient", "Recipe", "Step"].flatMap {
            ["\($0)+CoreDataClass.swift", "\($0)+CoreDataProperties.swift"]
        }
        #expect(Set(files.keys) == Set(names + ["ChefsBookModel.swift"]))
        #expect(
            result.standardOutput.split(separator: "\n").sorted()
                == files.keys.sorted().map { "wrote \(output.path)/\($0)" })
        let code = try ModelCodegen.generate(
            try XcodeModel.readVersionedModel(at: Self.chefsBook), bundleName: "ChefsBook")
        #expect(Dictionary(uniqueKeysWithValues: code.files.map { ($0.name, $0.contents) }) == files)
        #expect(
            files["Recipe+CoreDataClass.swift"]?.contains("public final class Recipe: TernCore.ManagedObject {}")
                == true)
        #expect(files["Recipe+CoreDataProperties.swift"]?.contains("public var steps: [Step] {") == true)
        let typechecked = try SwiftTypechecker.typecheck(files.keys.map { output.appendingPathComponent($0) })
        #expect(typechecked.succeeded, "\(typechecked.output)")
    }

    @Test func machineHumanStyleWritesTheHumanFilesOnlyWhenMissing() async throws {
        let folder = try TemporaryDirectory()
        let output = folder.path("Model")
        let arguments = ["generate", Self.chefsBook.path, "--style", "machine-human", "-o", output.path]
        #expect(await ToolRunner.run(arguments).status == 0)
        var files = try Self.contents(of: output)
        let names = ["Ingredient", "Recipe", "Step"].flatMap { ["_\($0).swift", "\($0).swift"] }
        #expect(Set(files.keys) == Set(names + ["ChefsBookModel.swift"]))
        #expect(files["_Recipe.swift"]?.contains("public class _Recipe: TernCore.ManagedObject {}") == true)
        #expect(files["Recipe.swift"]?.contains("public class Recipe: _Recipe {}") == true)
        // The developer's code in the human file survives; the machine file is written again.
        let human = output.appendingPathComponent("Recipe.swift")
        let edited =
            try #require(files["Recipe.swift"])
            + "\nextension Recipe {\n    var isQuick: Bool { preparationTime + cookingTime < 30 }\n}\n"
        try Data(edited.utf8).write(to: human)
        try FileManager.default.removeItem(at: output.appendingPathComponent("_Recipe.swift"))
        let again = await ToolRunner.run(arguments)
        #expect(again.status == 0)
        #expect(again.standardOutput.contains("kept \(human.path)\n"))
        #expect(again.standardOutput.contains("wrote \(output.path)/_Recipe.swift\n"))
        files = try Self.contents(of: output)
        #expect(files["Recipe.swift"] == edited)
        let typechecked = try SwiftTypechecker.typecheck(files.keys.map { output.appendingPathComponent($0) })
        #expect(typechecked.succeeded, "\(typechecked.output)")
    }

    @Test func everyEntityOfACompiledModelGetsAClass() async throws {
        let folder = try TemporaryDirectory()
        let momd = Fixtures.url("RealWorld/alemar11__CoreDataPlus/SampleModel3.momd")
        let result = await ToolRunner.run(["generate", momd.path, "-o", folder.url.path])
        #expect(result.status == 0, "\(result.standardError)")
        let model = try XcodeModel.readVersionedModel(at: momd).currentVersion.model
        let classes = try Self.contents(of: folder.url).keys.filter { $0.hasSuffix("+CoreDataClass.swift") }
        #expect(classes.count == model.entities.count && !classes.isEmpty)
        #expect(try Self.contents(of: folder.url)["SampleModel3Model.swift"] != nil)
    }

    @Test func accessLevelValueTypesAndVersion() async throws {
        let folder = try TemporaryDirectory()
        let result = await ToolRunner.run([
            "generate", Self.kitchen.path, "-o", folder.url.path, "--access", "internal",
            "--value-type", "NSSecureUnarchiveFromData=Tag", "--version", "Kitchen 2",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        // A warning for the renamed property, on stderr.
        #expect(
            result.errorLines == [
                "warning: Dish.context is named contextProperty in Swift, since ManagedObject has a member context"
            ])
        let properties = try #require(try Self.contents(of: folder.url)["Dish+CoreDataProperties.swift"])
        #expect(properties.contains("\n    var notes: Tag? {"))
        #expect(!properties.contains("public "))
        #expect(properties.contains("internal import TernCore"))
        // Chef's codegen is category: only its properties, for the developer's class.
        let files = try Self.contents(of: folder.url)
        #expect(files["Chef+CoreDataProperties.swift"] != nil && files["Chef+CoreDataClass.swift"] == nil)
        let first = await ToolRunner.run([
            "generate", Self.kitchen.path, "-o", folder.path("v1").path, "--version", "Kitchen",
        ])
        #expect(first.status == 0)
        #expect(
            Set(try Self.contents(of: folder.path("v1")).keys) == [
                "Dish+CoreDataClass.swift", "Dish+CoreDataProperties.swift", "KitchenModel.swift",
            ])
    }

    @Test(arguments: [
        (["generate"], "error: missing argument MODEL"),
        (
            ["generate", "Kitchen.xcdatamodeld", "--style", "fancy"],
            "error: --style takes xcode or machine-human, not 'fancy'"
        ),
        (
            ["generate", "Kitchen.xcdatamodeld", "--access", "open"],
            "error: --access takes public or internal, not 'open'"
        ),
        (
            ["generate", "Kitchen.xcdatamodeld", "--value-type", "Color"],
            "error: --value-type takes NAME=TYPE, such as ColorTransformer=Color, not 'Color'"
        ),
    ])
    func usageErrorsExitWithTwo(arguments: [String], message: String) async {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 2)
        #expect(result.errorLines.first == message)
        #expect(result.standardOutput.isEmpty)
    }

    @Test func aMissingModelFails() async throws {
        let folder = try TemporaryDirectory()
        let result = await ToolRunner.run(["generate", folder.path("None.xcdatamodeld").path, "-o", folder.url.path])
        #expect(result.status == 1)
        #expect(result.errorLines.first?.hasPrefix("error: no model exists at") == true)
        #expect(result.standardOutput.isEmpty)
    }

    @Test func theBinaryWritesTheFilesAndFailsCleanly() throws {
        let folder = try TemporaryDirectory()
        let result = try Binary.succeed([
            "generate", Binary.chefsBook, "--output=\(folder.url.path)", "--style=machine-human",
        ])
        #expect(result.standardOutput.split(separator: "\n").count == 7)
        #expect(FileManager.default.fileExists(atPath: folder.path("_Step.swift").path))
        try Binary.fail(["generate", folder.path("Missing.xcdatamodeld").path], status: 1)
        try Binary.fail(["generate", Binary.chefsBook, "--style", "mogenerator"], status: 2)
    }
}
