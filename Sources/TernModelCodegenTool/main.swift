import Foundation
import TernCodegen
import TernCore
import TernFormats

// `tern-model-codegen MODEL OUTPUT`: the tool the TernModelCodegen build plugin runs. Reads the
// model (a bundle, a version folder or a compiled model) and writes its classes and enum to
// OUTPUT, in one file, as the plugin declared it. Compiled models keep no codegen setting, so
// every entity of one gets a class. The file is left untouched when its contents are the same,
// so that an unchanged model compiles nothing again.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let modelPath = arguments.first, let outputPath = arguments.last else {
    FileHandle.standardError.write(Data("usage: tern-model-codegen MODEL OUTPUT\n".utf8))
    exit(2)
}
let modelURL = URL(fileURLWithPath: modelPath)
do {
    var warnings: [ModelReadingWarning] = []
    let model = try XcodeModel.readVersionedModel(at: modelURL, warnings: &warnings)
    var options = CodegenOptions()
    options.layout = .singleFile
    options.generatesEveryEntity = [XcodeModel.compiledBundleExtension, XcodeModel.compiledModelExtension]
        .contains(modelURL.pathExtension)
    let code = try ModelCodegen.generate(
        model, bundleName: modelURL.deletingPathExtension().lastPathComponent, options: options)
    for warning in warnings.map(\.description) + code.warnings {
        FileHandle.standardError.write(Data("\(modelPath): warning: \(warning)\n".utf8))
    }
    let contents = Data((code.files.first?.contents ?? "").utf8)
    let outputURL = URL(fileURLWithPath: outputPath)
    if (try? Data(contentsOf: outputURL)) != contents {
        try contents.write(to: outputURL, options: .atomic)
    }
} catch {
    FileHandle.standardError.write(Data("\(modelPath): error: \(error)\n".utf8))
    exit(1)
}
