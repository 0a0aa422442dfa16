import Foundation
import FuzzSupport
import TernCore
import TernFormats

/// libFuzzer entry point: reads the input as the `elements` keyed archive of an Xcode 3 model
/// version.
///
/// A model that reads is then hashed and written back as `contents` XML, which walks the code
/// that consumes what the reader accepted. Thrown errors are expected; crashes are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelElements(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    var warnings: [ModelReadingWarning] = []
    guard let model = try? XcodeModel.model(fromElements: data, path: "fuzz", warnings: &warnings) else { return 0 }
    _ = model.entityVersionHashes
    _ = try? XcodeModel.model(fromContents: Data(XcodeModel.contentsXML(for: model).utf8))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzModelElements_main`): runs libFuzzer.
@_cdecl("FuzzModelElements_main")
public func fuzzModelElementsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzModelElements)
}
