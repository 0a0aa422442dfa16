public import Foundation
public import TernCore
import TernFormats

/// A store kept in Tern's binary file format: Core Data's `NSBinaryStoreType`, with a format of
/// Tern's own (described in `docs/BinaryStore.md`).
///
/// The whole store is read when opened and rewritten, durably, on each save (see
/// ``/TernCore/AtomicStore``). The metadata sits in a header of its own, so ``/TernCore/AtomicStore/metadata(at:)``
/// reads it without reading the rows; checksums catch damaged files.
///
/// ```swift
/// let store = try BinaryStore(at: url, model: model)
/// try await coordinator.addStore(store)
/// let metadata = try BinaryStore.metadata(at: url)
/// ```
public typealias BinaryStore = AtomicStore<BinaryStoreFormat>

/// Tern's binary store format: a header with the metadata as a binary property list, then the
/// rows of every entity, each part with its length and CRC-32.
///
/// Use it through ``BinaryStore``. Decoding is safe on hostile input: every length is checked
/// against the bytes that remain before anything is allocated.
///
/// ```swift
/// let contents = try BinaryStoreFormat.decode(Data(contentsOf: url), path: url.path)
/// ```
public enum BinaryStoreFormat: AtomicStoreFormat {
    /// ``/TernCore/StoreKind/binary``.
    public static var kind: StoreKind { .binary }

    /// The first eight bytes of every binary store file.
    public static let magic: [UInt8] = Array("TERNBIN1".utf8)
    /// The version of the layout this code writes and reads.
    public static let formatVersion: UInt32 = 1
    /// The largest metadata header accepted, in bytes.
    public static let maximumHeaderSize = 16 << 20

    /// Encodes a whole store.
    ///
    /// - Parameter contents: The metadata, rows and key counters.
    /// - Returns: The file's bytes.
    /// - Throws: ``/TernCore/TernError/Code/unwritableStore`` when a list or value is larger than 4 GiB.
    /// - Complexity: O(*n*) in the size of the store.
    public static func encode(_ contents: AtomicStoreContents) throws -> Data {
        let body = try encodeBody(contents)
        var file = try header(contents.metadata).bytes
        var bodyPrefix = ByteWriter()
        bodyPrefix.append(UInt64(body.count))
        bodyPrefix.append(body.withUnsafeBytes(crc32Checksum))
        file.append(contentsOf: bodyPrefix.bytes)
        file.append(contentsOf: body)
        return Data(file)
    }

    /// Decodes a whole store, checking both checksums.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    /// - Returns: The metadata, rows and key counters.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is not a binary store, is of a
    ///   newer format version, is truncated or damaged.
    /// - Complexity: O(*n*) in the size of the file.
    public static func decode(_ data: Data, path: String) throws -> AtomicStoreContents {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws(TernError) -> AtomicStoreContents in
            var reader = ByteReader(buffer, path: path)
            let metadata = try readHeader(&reader)
            let length = try reader.readUInt64()
            let checksum = try reader.readUInt32()
            guard length == UInt64(reader.remaining) else {
                throw reader.corrupt(
                    "the rows should take \(length) bytes but \(reader.remaining) remain; the file is truncated or damaged"
                )
            }
            let body = try reader.readBytes(count: Int(length))
            guard crc32Checksum(body) == checksum else { throw reader.corrupt("the rows' checksum does not match") }
            var bodyReader = ByteReader(body, path: path)
            return try decodeBody(&bodyReader, metadata: metadata)
        }
    }

    /// Reads a binary store's metadata from its header, without reading the rows.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file is missing, not a binary store
    ///   or its header is damaged.
    /// - Complexity: O(*m*) in the size of the metadata.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw TernError(
                .unreadableStore, "could not open the binary store; check that the file exists and is readable",
                path: url.path, underlyingError: error)
        }
        defer { try? handle.close() }
        let fixedSize = magic.count + 12
        do {
            var prefix = try handle.read(upToCount: fixedSize) ?? Data()
            let headerSize =
                prefix.count == fixedSize
                ? Int(
                    prefix.withUnsafeBytes {
                        UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
                    })
                : 0
            if headerSize > 0, headerSize <= maximumHeaderSize {
                prefix.append(try handle.read(upToCount: headerSize) ?? Data())
            }
            return try prefix.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws(TernError) -> StoreMetadata in
                var reader = ByteReader(buffer, path: url.path)
                return try readHeader(&reader)
            }
        } catch let error as TernError {
            throw error
        } catch {
            throw TernError(
                .unreadableStore, "could not read the binary store's header; check the file", path: url.path,
                underlyingError: error)
        }
    }

    // MARK: - Non public

    /// The magic, version and metadata header that start a file.
    static func header(_ metadata: StoreMetadata) throws(TernError) -> ByteWriter {
        var dictionary = metadata.propertyList
        dictionary[StoreMetadata.Key.storeUUID] = .string(metadata.uuid)
        let header = BinaryPropertyList.encode(PropertyListValue.dictionary(dictionary).binaryPropertyListValue)
        var writer = ByteWriter()
        for byte in magic { writer.append(byte) }
        writer.append(formatVersion)
        try writer.appendCount(header.count)
        writer.append(header.withUnsafeBytes(crc32Checksum))
        writer.append(contentsOf: header)
        return writer
    }

    /// Reads and checks the magic, version and metadata header.
    static func readHeader(_ reader: inout some BinaryInput) throws(TernError) -> StoreMetadata {
        guard reader.remaining >= magic.count,
            try Array(reader.readBytes(count: magic.count)) == magic
        else {
            throw TernError(
                .unreadableStore,
                "the file is not a Tern binary store (it does not start with TERNBIN1); open it with the right store type",
                path: reader.path)
        }
        let version = try reader.readUInt32()
        guard version == formatVersion else {
            throw TernError(
                .unreadableStore,
                "the binary store uses format version \(version), which this version of Tern cannot read; update Tern",
                path: reader.path)
        }
        let size = Int(try reader.readUInt32())
        let checksum = try reader.readUInt32()
        guard size <= maximumHeaderSize else {
            throw reader.corrupt("the metadata header claims \(size) bytes, more than the \(maximumHeaderSize) allowed")
        }
        let header = try reader.readBytes(count: size)
        guard crc32Checksum(header) == checksum else { throw reader.corrupt("the metadata's checksum does not match") }
        let decoded = try? BinaryPropertyList.decode(Data(header))
        guard let decoded, case .dictionary(var dictionary)? = PropertyListValue(decoded),
            case .string(let uuid)? = dictionary.removeValue(forKey: StoreMetadata.Key.storeUUID),
            let metadata = StoreMetadata(propertyList: dictionary, uuid: uuid)
        else {
            throw reader.corrupt("the metadata is not a property-list dictionary with a store UUID and typed keys")
        }
        return metadata
    }
}
