/// The body libFuzzer calls with each input: bytes and count, returning 0.
public typealias FuzzBody = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

/// libFuzzer's driver (`compiler-rt`'s `FuzzerDriver.cpp`), linked in by `-sanitize=fuzzer`.
@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ body: FuzzBody
) -> Int32

/// Runs libFuzzer with the process's command line, calling `body` for every input.
///
/// SwiftPM links an executable with its module's entry point standing in for `main`, so a fuzz
/// target defines that entry point (`@_cdecl("<Target>_main")`) and calls this, instead of
/// relying on libFuzzer's own `main`.
///
/// - Parameter body: The target's test function.
/// - Returns: libFuzzer's exit status.
public func runFuzzer(_ body: FuzzBody) -> Int32 {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    return llvmFuzzerRunDriver(&argc, &argv, body)
}
