internal import CZlib
import Foundation
import TernCore
import Testing

@testable import TernFormats

@Suite struct DeflateTests {
    @Test func roundTripsBytes() throws {
        var bytes = Data()
        for index in 0..<200_000 { bytes.append(UInt8(truncatingIfNeeded: index &* 31 ^ index >> 7)) }
        let packed = try Deflate.deflateRaw(bytes)
        #expect(packed.count < bytes.count)
        #expect(try Deflate.inflateRaw(packed, maxOutputBytes: bytes.count) == bytes)
    }

    @Test func roundTripsEmptyData() throws {
        let packed = try Deflate.deflateRaw(Data())
        #expect(try Deflate.inflateRaw(packed, maxOutputBytes: 0) == Data())
    }

    @Test func rejectsTruncatedInput() throws {
        let packed = try Deflate.deflateRaw(
            Data(repeating: 7, count: 10_000) + Data((0..<5000).map { UInt8($0 % 251) }))
        for length in [0, 1, packed.count / 2, packed.count - 1] {
            #expect(throws: TernError.self) { try Deflate.inflateRaw(packed.prefix(length), maxOutputBytes: 1 << 20) }
            do {
                _ = try Deflate.inflateRaw(packed.prefix(length), maxOutputBytes: 1 << 20)
            } catch let error as TernError {
                #expect(error.code == .corruptArchive)
            }
        }
    }

    @Test func rejectsCorruptInput() throws {
        // 0b111 in the first three bits: a final block of the reserved type 3.
        #expect(throws: TernError.self) { try Deflate.inflateRaw(Data([0x07, 0x00, 0x00]), maxOutputBytes: 1024) }
        #expect(throws: TernError.self) {
            try Deflate.inflateRaw(Data(repeating: 0xFF, count: 64), maxOutputBytes: 1024)
        }
    }

    @Test func rejectsTrailingBytes() throws {
        let packed = try Deflate.deflateRaw(Data("hello".utf8)) + Data([1, 2, 3])
        #expect(throws: TernError.self) { try Deflate.inflateRaw(packed, maxOutputBytes: 1024) }
    }

    @Test func stopsABombAtTheCap() throws {
        // About 1 MB of compressed input that inflates to 1 GiB of zeros.
        let bomb = try Self.bomb(mebibytes: 1024)
        #expect(bomb.count < 2 << 20)
        do {
            _ = try Deflate.inflateRaw(bomb, maxOutputBytes: 8 << 20)
            Issue.record("a 1 GiB bomb inflated under an 8 MiB cap")
        } catch let error as TernError {
            #expect(error.code == .archiveTooLarge)
        }
    }

    @Test func bombConstructionInflatesToItsSize() throws {
        let small = try Self.bomb(mebibytes: 3)
        let inflated = try Deflate.inflateRaw(small, maxOutputBytes: 3 << 20)
        #expect(inflated.count == 3 << 20)
        #expect(inflated.allSatisfy { $0 == 0 })
    }

    @Test func respectsAnExactCap() throws {
        let bytes = Data(repeating: 1, count: 100_000)
        let packed = try Deflate.deflateRaw(bytes)
        #expect(try Deflate.inflateRaw(packed, maxOutputBytes: 100_000).count == 100_000)
        #expect(throws: TernError.self) { try Deflate.inflateRaw(packed, maxOutputBytes: 99_999) }
    }

    /// Raw DEFLATE of many zeros: one fully flushed chunk (1 MiB of zeros, no back-references
    /// across the flush) repeated, then an empty final block.
    static func bomb(mebibytes: Int) throws -> Data {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
                == Z_OK
        else {
            throw TernError(.ioFailure, "deflateInit2 failed")
        }
        defer { deflateEnd(&stream) }
        func run(_ input: [UInt8], flush: Int32) -> [UInt8] {
            var input = input
            var output = [UInt8](repeating: 0, count: 1 << 20)
            let produced = input.withUnsafeMutableBufferPointer { inBuffer in
                output.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_in = inBuffer.baseAddress
                    stream.avail_in = UInt32(inBuffer.count)
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = UInt32(outBuffer.count)
                    _ = deflate(&stream, flush)
                    return outBuffer.count - Int(stream.avail_out)
                }
            }
            return Array(output[0..<produced])
        }
        let chunk = run([UInt8](repeating: 0, count: 1 << 20), flush: Z_FULL_FLUSH)
        let ending = run([], flush: Z_FINISH)
        var bomb = [UInt8]()
        bomb.reserveCapacity(chunk.count * mebibytes + ending.count)
        for _ in 0..<mebibytes { bomb += chunk }
        return Data(bomb + ending)
    }
}
