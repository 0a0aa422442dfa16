import FuzzSupport
import TernCore

/// libFuzzer entry point: parses the input as `NSPredicate` format text.
///
/// A parsed predicate is printed back and parsed again, which walks the description code too.
/// Only crashes, hangs and sanitizer reports count as findings; thrown errors are expected.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicate(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: start == nil ? 0 : count), as: UTF8.self)
    // Arguments for any %@ / %K placeholders the input happens to use.
    let arguments: [FetchPredicate.Argument] = Array(repeating: "name", count: 4)
    for count in [0, arguments.count] {
        guard let predicate = try? FetchPredicate(text, arguments: Array(arguments.prefix(count))) else { continue }
        _ = try? FetchPredicate(predicate.description)
    }
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzPredicate_main`): runs libFuzzer.
@_cdecl("FuzzPredicate_main")
public func fuzzPredicateMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzPredicate)
}
