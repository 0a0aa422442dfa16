import Foundation
import TernCore
import TernRelational

/// The files of binary values stored outside the store, as Core Data keeps them:
/// `<store folder>/.<store name>_SUPPORT/_EXTERNAL_DATA/<UUID>`.
///
/// In the column, a value is `0x01` followed by the bytes (inline), or `0x02` followed by the
/// file's UUID in ASCII and a NUL (external).
struct ExternalDataStore {
    /// The `_EXTERNAL_DATA` folder.
    let folder: URL
    /// The size from which values are written to a file.
    let threshold: Int
    /// Whether new files and their folder entries are synced to disk.
    let isDurable: Bool

    /// The marker of an inline value.
    static let inlineMarker = ExternalValueMarker.inline
    /// The marker of a value in a file.
    static let externalMarker = ExternalValueMarker.external

    /// The external data folder of a store.
    init(storeURL: URL, threshold: Int, isDurable: Bool) {
        let name = storeURL.deletingPathExtension().lastPathComponent
        folder = storeURL.deletingLastPathComponent()
            .appendingPathComponent(".\(name)_SUPPORT", isDirectory: true)
            .appendingPathComponent("_EXTERNAL_DATA", isDirectory: true)
        self.threshold = threshold
        self.isDurable = isDurable
    }

    // MARK: - Reading

    /// The bytes a column of an external-storage attribute stands for.
    ///
    /// - Parameter column: The column's bytes.
    /// - Returns: The value's bytes, read from its file when the column references one.
    /// - Throws: ``/TernCore/TernError`` with code `invalidExternalData` when the reference is not a UUID
    ///   (so no path can be smuggled in) or its file is missing.
    func resolve(_ column: Data) throws(TernError) -> Data {
        guard let marker = column.first else { return column }
        switch marker {
        case Self.inlineMarker:
            return column.dropFirst()
        case Self.externalMarker:
            guard let text = Self.fileName(in: column) else {
                throw TernError(
                    .invalidExternalData,
                    "A column references external data by a name that is not a UUID; the store is damaged.")
            }
            let file = folder.appendingPathComponent(text)
            do {
                return try Data(contentsOf: file)
            } catch {
                throw TernError(
                    .invalidExternalData,
                    "The external data file is missing or unreadable; copy the store with its _SUPPORT folder.",
                    path: file.path, underlyingError: error)
            }
        default:
            // Stores written before the marker convention keep raw bytes.
            return column
        }
    }

    /// The file name (a UUID) an external reference names, or nil when the column is not a
    /// well-formed external reference (so no path can be smuggled in).
    static func fileName(in column: Data) -> String? {
        guard column.first == externalMarker else { return nil }
        let text = String(decoding: column.dropFirst().prefix { $0 != 0 }, as: UTF8.self)
        guard text.utf8.count == 36, let uuid = UUID(uuidString: text), uuid.uuidString == text.uppercased() else {
            return nil
        }
        return text
    }

    /// Removes files no row references any more; failures are ignored (a leftover file is harmless).
    func removeFiles(named names: some Sequence<String>) {
        for name in names { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
    }

    // MARK: - Writing

    /// The column value for bytes: inline below the threshold, else in a new file written durably.
    ///
    /// - Parameter bytes: The value.
    /// - Returns: The column's bytes.
    /// - Throws: ``/TernCore/TernError`` with code `ioFailure` when the file cannot be written.
    func store(_ bytes: Data) throws(TernError) -> Data {
        guard bytes.count >= threshold else { return Data([Self.inlineMarker]) + bytes }
        let name = UUID().uuidString
        let file = folder.appendingPathComponent(name)
        let temporary = folder.appendingPathComponent(".\(name).tmp")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try bytes.write(to: temporary)
            if isDurable { try FileSystem.synchronizeFile(atPath: temporary.path) }
            try FileManager.default.moveItem(at: temporary, to: file)
            if isDurable { try FileSystem.synchronizeDirectory(atPath: folder.path) }
        } catch let error as TernError {
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw TernError(
                .ioFailure, "Cannot write external data (\(error.localizedDescription)); check the disk.",
                path: file.path,
                underlyingError: error)
        }
        return Data([Self.externalMarker]) + Data(name.utf8) + Data([0])
    }
}
