import Foundation
import FuzzSupport
import TernMigration

/// libFuzzer entry point: reads the input as a JSON mapping file (`StepMapping`).
///
/// Thrown errors are expected; crashes, hangs and sanitizer reports are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMappingFile(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    _ = try? StepMapping(jsonData: data)
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzMappingFile_main`): runs libFuzzer.
@_cdecl("FuzzMappingFile_main")
public func fuzzMappingFileMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzMappingFile)
}
