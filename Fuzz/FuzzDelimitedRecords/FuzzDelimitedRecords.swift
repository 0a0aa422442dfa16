import Foundation
import FuzzSupport
import TernFormats

/// The file each input is written to: the reader streams from a file, in 64 KiB chunks.
private let inputURL = FileManager.default.temporaryDirectory
    .appendingPathComponent("tern-fuzz-delimited-\(ProcessInfo.processInfo.processIdentifier)")

/// libFuzzer entry point: the first byte picks the dialect (even: TSV, odd: CSV), the rest is
/// the file, read to the end in batches of 7 records by `DelimitedRecordReader`.
///
/// Thrown errors are expected; crashes, hangs and sanitizer reports are findings.
///
/// - Parameters:
///   - start: The input bytes.
///   - count: Their number.
/// - Returns: 0, as libFuzzer requires.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDelimitedRecords(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = start.map { Data(bytes: $0, count: count) } ?? Data()
    let dialect: DelimitedRecordReader.Dialect = (data.first ?? 0) % 2 == 0 ? .tsv : .csv
    guard (try? data.dropFirst().write(to: inputURL)) != nil else { return 0 }
    do {
        let reader = try DelimitedRecordReader(contentsOf: inputURL, dialect: dialect)
        var total = 0
        while true {
            let batch = try reader.nextBatch(maxCount: 7)
            if batch.isEmpty { break }
            total += batch.reduce(0) { $0 + $1.fields.count }
        }
        _ = (total, reader.header, reader.bytesRead)
    } catch {
        _ = error.message
    }
    return 0
}

/// The executable's entry point (SwiftPM links `main` to `FuzzDelimitedRecords_main`): runs libFuzzer.
@_cdecl("FuzzDelimitedRecords_main")
public func fuzzDelimitedRecordsMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32
{
    runFuzzer(fuzzDelimitedRecords)
}
