import FuzzSupport
import TernMigration

/// libFuzzer entry point: parses the input as a mapping's value expression.
///
/// A parsed expression is printed back and parsed again, and its source key paths listed.
/// Thrown errors are expected; crashes, hangs and sanitizer reports are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzValueExpression(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: start == nil ? 0 : count), as: UTF8.self)
    guard let expression = try? ValueExpression(text) else { return 0 }
    _ = expression.sourceKeyPaths
    _ = try? ValueExpression(expression.description)
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzValueExpression_main`): runs libFuzzer.
@_cdecl("FuzzValueExpression_main")
public func fuzzValueExpressionMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32
{
    runFuzzer(fuzzValueExpression)
}
