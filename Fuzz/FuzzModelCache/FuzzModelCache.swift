import Foundation
import FuzzSupport
import TernCore
import TernFormats

/// libFuzzer entry point: decodes the input as a model cache.
///
/// The first byte picks the layer: even values decode the rest as an uncompressed keyed archive
/// (binary plist, `NSKeyedArchiver` graph, `NSManagedObjectModel`), which lets the fuzzer mutate
/// the archive directly; odd values run the whole decoder, raw DEFLATE first. A model that
/// decodes is hashed and encoded again. Thrown errors are expected; crashes are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelCache(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    guard let start, count > 0 else { return 0 }
    let payload = Data(bytes: start + 1, count: count - 1)
    let model: ManagedObjectModel?
    if start[0] % 2 == 0 {
        model = try? ModelCache.decodeArchive(payload)
    } else {
        model = try? ModelCache.decode(payload, maxInflatedBytes: 4 << 20)
    }
    guard let model else { return 0 }
    _ = model.entityVersionHashes
    _ = try? ModelCache.encode(model)
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzModelCache_main`): runs libFuzzer.
@_cdecl("FuzzModelCache_main")
public func fuzzModelCacheMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzModelCache)
}
