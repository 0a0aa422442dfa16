import Foundation
import FuzzSupport
import TernFormats

/// The file each input is written to, so that bytes that are not UTF-8 reach the parser as they are.
private let inputURL = FileManager.default.temporaryDirectory
    .appendingPathComponent("tern-fuzz-json-\(ProcessInfo.processInfo.processIdentifier).json")

/// libFuzzer entry point: reads the input as a JSON records file (`JSONRecordReader`), then
/// every record in batches of 7.
///
/// Thrown errors are expected; crashes, hangs and sanitizer reports are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONRecords(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    guard (try? data.write(to: inputURL)) != nil else { return 0 }
    do {
        let reader = try JSONRecordReader(contentsOf: inputURL)
        var total = 0
        while true {
            let batch = reader.nextBatch(maxCount: 7)
            if batch.isEmpty { break }
            total += batch.reduce(0) { $0 + $1.fields.count + ($1.entityName?.count ?? 0) }
        }
        _ = total
    } catch {
        _ = error.message
    }
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzJSONRecords_main`): runs libFuzzer.
@_cdecl("FuzzJSONRecords_main")
public func fuzzJSONRecordsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    runFuzzer(fuzzJSONRecords)
}
