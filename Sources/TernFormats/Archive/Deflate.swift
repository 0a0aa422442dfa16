internal import CZlib
public import Foundation
import TernCore

/// Raw DEFLATE (RFC 1951, no zlib or gzip header) through zlib: the compression of Core Data's
/// model cache (`Z_MODELCACHE.Z_CONTENT`).
///
/// Inflating streams into a buffer capped at `maxOutputBytes`, so a small hostile input that
/// expands without end (a decompression bomb) fails as soon as it passes the cap.
///
/// ```swift
/// let packed = try Deflate.deflateRaw(Data("hello".utf8))
/// let bytes = try Deflate.inflateRaw(packed, maxOutputBytes: 1 << 20)
/// ```
public enum Deflate {
    /// The default output cap of ``inflateRaw(_:maxOutputBytes:)``: 64 MiB, far above any model.
    public static let defaultMaxOutputBytes = 64 << 20

    /// Inflates raw DEFLATE data.
    ///
    /// - Parameters:
    ///   - data: Raw DEFLATE bytes (zlib `windowBits = -15`).
    ///   - maxOutputBytes: The most bytes the output may hold; inflating stops with an error
    ///     as soon as more would be produced.
    /// - Returns: The inflated bytes.
    /// - Throws: ``/TernCore/TernError`` with code `corruptArchive` for truncated or corrupt input (or
    ///   trailing bytes after the end of the stream), and `archiveTooLarge` when the output
    ///   would exceed `maxOutputBytes` (or the input is over 4 GiB).
    /// - Complexity: O(*n*) in the size of the output.
    public static func inflateRaw(_ data: Data, maxOutputBytes: Int = defaultMaxOutputBytes) throws -> Data {
        precondition(maxOutputBytes >= 0, "maxOutputBytes must not be negative")
        guard data.count <= Int(UInt32.max) else {
            throw TernError(
                .archiveTooLarge, "The compressed data is \(data.count) bytes, more than zlib takes in one call.")
        }
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TernError(.ioFailure, "zlib could not start inflating: out of memory?")
        }
        defer { inflateEnd(&stream) }

        var output = Data()
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        let input = [UInt8](data)
        var status: Int32 = Z_OK
        try input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = UInt32(inputBuffer.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress
                    stream.avail_out = UInt32(chunkSize)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return chunkSize - Int(stream.avail_out)
                }
                switch status {
                case Z_OK, Z_STREAM_END, Z_BUF_ERROR:
                    break
                case Z_NEED_DICT, Z_DATA_ERROR:
                    throw TernError.corrupt(
                        "The compressed data is corrupt (\(zlibMessage(stream) ?? "invalid deflate stream")).")
                default:
                    throw TernError(.ioFailure, "zlib failed while inflating (code \(status)).")
                }
                if produced > maxOutputBytes - output.count {
                    throw TernError(
                        .archiveTooLarge,
                        "The compressed data inflates past the limit of \(maxOutputBytes) bytes; "
                            + "it is not a plausible model cache (possibly a decompression bomb).")
                }
                output.append(contentsOf: chunk[0..<produced])
                if status == Z_BUF_ERROR && produced == 0 { break }
            } while status != Z_STREAM_END
        }
        guard status == Z_STREAM_END else {
            throw TernError.corrupt("The compressed data is truncated: the deflate stream does not end.")
        }
        guard stream.avail_in == 0 else {
            throw TernError.corrupt("The compressed data has \(stream.avail_in) unexpected bytes after its end.")
        }
        return output
    }

    /// Compresses data as raw DEFLATE at zlib's default level.
    ///
    /// - Parameter data: The bytes to compress.
    /// - Returns: Raw DEFLATE bytes that ``inflateRaw(_:maxOutputBytes:)`` (and Core Data) can read.
    /// - Throws: ``/TernCore/TernError`` with code `ioFailure` when zlib fails, `archiveTooLarge` for
    ///   data of 2 GiB or more.
    /// - Complexity: O(*n*) in the size of `data`.
    public static func deflateRaw(_ data: Data) throws -> Data {
        guard data.count < Int(UInt32.max / 2) else {
            throw TernError(.archiveTooLarge, "The data is \(data.count) bytes, more than Tern compresses in one call.")
        }
        var stream = z_stream()
        let initStatus = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard initStatus == Z_OK else {
            throw TernError(.ioFailure, "zlib could not start deflating (code \(initStatus)).")
        }
        defer { deflateEnd(&stream) }

        let input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 16)
        let status: Int32 = input.withUnsafeBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw TernError(.ioFailure, "zlib failed while deflating (code \(status)).")
        }
        return Data(output[0..<Int(stream.total_out)])
    }

    // MARK: - Non public

    private static func zlibMessage(_ stream: z_stream) -> String? {
        stream.msg.map { String(cString: $0) }
    }
}
