import Foundation
import FuzzSupport
import TernCore
import TernFormats

/// libFuzzer entry point: reads the input as the `contents` XML of an Xcode model version.
///
/// A model that reads is then validated, hashed and written back as XML, which walks the code
/// that consumes what the reader accepted. Thrown errors are expected; crashes are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelXML(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    guard let model = try? XcodeModel.model(fromContents: data, path: "fuzz") else { return 0 }
    _ = model.validationIssues
    _ = model.entityVersionHashes
    _ = try? XcodeModel.model(fromContents: Data(XcodeModel.contentsXML(for: model).utf8))
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzModelXML_main`): runs libFuzzer.
@_cdecl("FuzzModelXML_main")
public func fuzzModelXMLMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzModelXML)
}
