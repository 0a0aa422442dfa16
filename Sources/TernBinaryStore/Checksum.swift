internal import CZlib
import Foundation

/// CRC-32 (zlib's, the one of zip and PNG) of some bytes.
///
/// - Complexity: O(*n*) in the number of bytes.
func crc32Checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc = crc32(0, nil, 0)
    var offset = 0
    while offset < bytes.count {
        let count = min(bytes.count - offset, 1 << 30)
        if let base = bytes.baseAddress {
            crc = crc32(crc, base.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(count))
        }
        offset += count
    }
    return UInt32(truncatingIfNeeded: crc)
}
