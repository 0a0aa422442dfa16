import CZlib
package import Foundation
package import TernCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a binary store file entity by entity and row by row, in memory bounded by its
/// buffer, instead of encoding a whole ``/TernCore/AtomicStoreContents`` as
/// ``BinaryStoreFormat/encode(_:)`` does: what conversions from a store on disk use. The file
/// reads back as ``BinaryStoreFormat/decode(_:path:)`` reads any other.
///
/// The file is written under a temporary name beside `url` and moved into place, flushed, by
/// ``finish()``: until then nothing exists at `url`, and a writer dropped unfinished removes
/// its temporary file. The counts of entities and rows are only known at the end, so each is
/// written as a placeholder and filled in; the body's checksum is combined from the checksums
/// of the stretches between them (zlib's `crc32_combine`), so nothing is read back.
///
/// ```swift
/// let writer = try BinaryStoreWriter(at: url, metadata: metadata, names: names, lastPrimaryKeys: keys)
/// try writer.beginEntity("Event")
/// for row in rows { try writer.append(row) }
/// try writer.finish()
/// ```
package final class BinaryStoreWriter {
    private let url: URL
    private let temporary: URL
    private let descriptor: Int32
    private var buffer = ByteWriter()
    /// The file offset of the first byte of `buffer`.
    private var bufferOffset = 0
    /// The file offset where the body starts.
    private let bodyStart: Int
    private let names: [String: UInt32]
    /// Each entity's attribute slots in the order of their names, by attribute keys.
    private var orders: [ObjectIdentifier: [(slot: Int, name: UInt32)]] = [:]
    /// The checksums and lengths of the body's stretches, each followed by a placeholder.
    private var stretches: [(checksum: UInt, length: Int)] = []
    private var checksum: UInt = crc32(0, nil, 0)
    private var checksumLength = 0
    /// Where `buffer`'s bytes not yet in `checksum` start.
    private var unchecked = 0
    /// The file offset and final value of each placeholder.
    private var placeholders: [(offset: Int, value: UInt32)] = []
    /// The placeholder of the current entity's row count.
    private var currentCount: Int?
    private var isFinished = false
    private let bufferSize: Int

    /// Creates the temporary file and writes the header, the string table and the key counters.
    ///
    /// - Parameters:
    ///   - url: Where the store goes once finished; nothing may be there by then.
    ///   - metadata: The store's metadata.
    ///   - names: Every entity, attribute and relationship name a row will use.
    ///   - lastPrimaryKeys: The last primary key handed out under each inheritance root.
    ///   - bufferSize: How many bytes are gathered before they are written to the file.
    /// - Throws: ``/TernCore/TernError/Code/ioFailure`` when the file cannot be written;
    ///   ``/TernCore/TernError/Code/unwritableStore`` when a list is larger than the format holds.
    package init(
        at url: URL, metadata: StoreMetadata, names: some Sequence<String>, lastPrimaryKeys: [String: Int64],
        bufferSize: Int = 1 << 20
    ) throws(TernError) {
        self.bufferSize = bufferSize
        let table = Set(names).union(lastPrimaryKeys.keys).sorted()
        var positions: [String: UInt32] = [:]
        for (position, name) in table.enumerated() { positions[name] = UInt32(truncatingIfNeeded: position) }
        self.names = positions
        self.url = url
        (descriptor, temporary) = try DurableFile.createTemporaryFile(for: url)
        var start = try BinaryStoreFormat.header(metadata)
        // The body's length and checksum, filled in by `finish`.
        start.append(UInt64(0))
        start.append(UInt32(0))
        bodyStart = start.count
        buffer = start
        unchecked = start.count
        try buffer.appendCount(table.count)
        for name in table { try buffer.appendString(name) }
        try buffer.appendCount(lastPrimaryKeys.count)
        for (root, last) in lastPrimaryKeys.sorted(by: { $0.key < $1.key }) {
            buffer.append(positions[root] ?? 0)
            buffer.append(last)
        }
        placeholder(0)
    }

    deinit {
        close(descriptor)
        if !isFinished { unlink(temporary.path) }
    }

    /// Starts the rows of an entity; its count is filled in when the next entity starts or the
    /// file is finished.
    ///
    /// - Parameter entity: The entity's name, one of the names the writer was made with.
    /// - Throws: ``/TernCore/TernError/Code/unwritableStore`` when the name is not among them.
    package func beginEntity(_ entity: String) throws(TernError) {
        try requireOpen()
        placeholders[0].value += 1
        buffer.append(try index(entity))
        currentCount = placeholder(0)
    }

    /// Appends a row of the current entity.
    ///
    /// - Parameter row: The row, with names among the writer's.
    /// - Throws: ``/TernCore/TernError/Code/unwritableStore`` when a name is unknown or a value is too
    ///   large; ``/TernCore/TernError/Code/ioFailure`` when writing fails.
    /// - Complexity: O(*v* log *v*) in the row's values.
    package func append(_ row: StoreRow) throws(TernError) {
        try countRow()
        try BinaryStoreFormat.appendRow(row, to: &buffer, index: index)
        try flushIfFull()
    }

    /// Appends a packed row of the current entity, written as the same row as a
    /// ``/TernCore/StoreRow`` would be.
    ///
    /// - Parameter row: The row, with names among the writer's.
    /// - Throws: As ``append(_:)-(StoreRow)``.
    /// - Complexity: O(*v*) in the row's values.
    package func append(_ row: PackedRow) throws(TernError) {
        try countRow()
        let keys = row.attributes.keys
        let order: [(slot: Int, name: UInt32)]
        if let known = orders[ObjectIdentifier(keys)] {
            order = known
        } else {
            var made: [(slot: Int, name: UInt32)] = []
            for (slot, name) in keys.names.enumerated().sorted(by: { $0.element < $1.element }) {
                made.append((slot, try index(name)))
            }
            orders[ObjectIdentifier(keys)] = made
            order = made
        }
        try BinaryStoreFormat.appendRow(row, order: order, to: &buffer, index: index)
        try flushIfFull()
    }

    /// Fills in the counts, the body's length and checksum, flushes the file and moves it to
    /// its place, flushing the folder.
    ///
    /// - Throws: ``/TernCore/TernError/Code/ioFailure`` when a step fails; the temporary file is
    ///   removed then, and nothing is at `url`.
    package func finish() throws(TernError) {
        try requireOpen()
        try flush()
        stretches.append((checksum, checksumLength))
        var total = stretches[0].checksum
        for (value, stretch) in zip(placeholders, stretches.dropFirst()) {
            var bytes = value.value.littleEndian
            let placeholderChecksum = withUnsafeBytes(of: &bytes) {
                crc32(0, $0.baseAddress?.assumingMemoryBound(to: Bytef.self), 4)
            }
            total = crc32_combine(total, placeholderChecksum, 4)
            total = crc32_combine(total, stretch.checksum, off_t(stretch.length))
        }
        for placeholder in placeholders {
            var bytes = placeholder.value.littleEndian
            try withUnsafeBytes(of: &bytes) { (raw) throws(TernError) in try write(raw, at: placeholder.offset) }
        }
        var prefix = ByteWriter()
        prefix.append(UInt64(bufferOffset - bodyStart))
        prefix.append(UInt32(truncatingIfNeeded: total))
        try prefix.withBytes { (raw) throws(TernError) in try write(raw, at: bodyStart - 12) }
        try DurableFile.synchronize(descriptor, temporary)
        try DurableFile.rename(temporary, to: url)
        isFinished = true
        try DurableFile.synchronizeDirectory(of: url)
    }

    // MARK: - Non public

    private func index(_ name: String) throws(TernError) -> UInt32 {
        guard let position = names[name] else {
            throw TernError(
                .unwritableStore, "the name '\(name)' was not given to the binary store writer", path: url.path)
        }
        return position
    }

    private func requireOpen() throws(TernError) {
        guard !isFinished else {
            throw TernError(.unsupported, "the binary store is already written", path: url.path)
        }
    }

    private func countRow() throws(TernError) {
        try requireOpen()
        guard let currentCount else {
            throw TernError(.unsupported, "a row comes before its entity; call beginEntity first", path: url.path)
        }
        guard placeholders[currentCount].value < UInt32.max else {
            throw TernError(
                .unwritableStore, "a binary store holds at most \(UInt32.max) rows per entity", path: url.path)
        }
        placeholders[currentCount].value += 1
    }

    /// Ends the current stretch of the checksum, leaves four bytes for a count that `finish`
    /// fills in, and returns the placeholder's position in `placeholders`.
    @discardableResult
    private func placeholder(_ value: UInt32) -> Int {
        checkBuffer()
        stretches.append((checksum, checksumLength))
        checksum = crc32(0, nil, 0)
        checksumLength = 0
        placeholders.append((bufferOffset + buffer.count, value))
        buffer.append(UInt32(0))
        unchecked = buffer.count
        return placeholders.count - 1
    }

    /// Adds the bytes of `buffer` not yet counted to the current stretch's checksum.
    private func checkBuffer() {
        guard buffer.count > unchecked else { return }
        buffer.bytes.withUnsafeBytes { raw in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[unchecked...])
            checksum = crc32(checksum, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
            checksumLength += bytes.count
        }
        unchecked = buffer.count
    }

    private func flushIfFull() throws(TernError) {
        if buffer.count >= bufferSize { try flush() }
    }

    private func flush() throws(TernError) {
        checkBuffer()
        try buffer.withBytes { (raw) throws(TernError) in
            try DurableFile.writeAll(raw, to: descriptor, temporary)
        }
        bufferOffset += buffer.count
        buffer.removeAll()
        unchecked = 0
    }

    /// Writes bytes at an offset of the file, once everything else is written.
    private func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws(TernError) {
        guard lseek(descriptor, off_t(offset), SEEK_SET) >= 0 else {
            throw TernError(
                .ioFailure, "could not seek in the temporary file (\(String(cString: strerror(errno))))",
                path: temporary.path)
        }
        try DurableFile.writeAll(bytes, to: descriptor, temporary)
    }
}
