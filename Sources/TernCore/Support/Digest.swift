internal import CCrypto
package import Foundation

/// The bytes fed to one hash, built the way Core Data builds its version-hash input:
/// strings as UTF-8 without terminator, integers little-endian.
struct DigestInput {
    /// The bytes appended so far.
    private(set) var bytes: [UInt8] = []

    /// Appends a string's UTF-8 bytes, without terminator.
    mutating func append(_ string: String) {
        bytes.append(contentsOf: string.utf8)
    }

    /// Appends raw bytes.
    mutating func append(_ data: Data) {
        bytes.append(contentsOf: data)
    }

    /// Appends an integer in little-endian byte order, using its full width.
    mutating func append<Integer: FixedWidthInteger>(littleEndian value: Integer) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// The SHA-256 of the bytes (32 bytes).
    var sha256: Data { Digest.sha256(bytes) }

    /// The SHA-512 of the bytes (64 bytes).
    var sha512: Data { Digest.sha512(bytes) }
}

/// One-shot SHA-2 digests over libcrypto.
package enum Digest {
    /// The SHA-256 of some bytes (32 bytes).
    package static func sha256(_ bytes: [UInt8]) -> Data {
        digest(bytes, length: Int(SHA256_DIGEST_LENGTH)) { input, count, output in
            SHA256(input, count, output)
        }
    }

    /// The SHA-512 of some bytes (64 bytes).
    static func sha512(_ bytes: [UInt8]) -> Data {
        digest(bytes, length: Int(SHA512_DIGEST_LENGTH)) { input, count, output in
            SHA512(input, count, output)
        }
    }

    // MARK: - Non public

    private static func digest(
        _ bytes: [UInt8], length: Int,
        _ function: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?
    ) -> Data {
        var output = [UInt8](repeating: 0, count: length)
        bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                _ = function(input.baseAddress, input.count, out.baseAddress)
            }
        }
        return Data(output)
    }
}
