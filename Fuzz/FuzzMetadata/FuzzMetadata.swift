import Foundation
import FuzzSupport
import TernCore
import TernFormats

@testable import TernSQLite

/// libFuzzer entry point: reads the input as the binary property list of `Z_METADATA.Z_PLIST`.
///
/// Runs the same steps as ``SQLiteStore/metadata(at:)`` after the SQL: the binary plist
/// decoder, the mapping to property list values and to ``StoreMetadata``; metadata that reads
/// is encoded and decoded again. Thrown errors are expected; crashes are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMetadata(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    guard let decoded = try? BinaryPropertyList.decode(data),
        case .dictionary(let dictionary)? = PropertyListValue(decoded),
        let metadata = StoreMetadata(propertyList: dictionary, uuid: "fuzz")
    else { return 0 }
    let encoded = BinaryPropertyList.encode(PropertyListValue.dictionary(metadata.propertyList).binaryPropertyListValue)
    _ = try? BinaryPropertyList.decode(encoded)
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzMetadata_main`): runs libFuzzer.
@_cdecl("FuzzMetadata_main")
public func fuzzMetadataMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzMetadata)
}
