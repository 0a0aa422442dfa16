import Foundation
import TernBinaryStore
import TernCore
import TernTestSupport
import TernXMLStore

/// One atomic store format under test, with what tests need to open stores of it.
struct AtomicFormat: Sendable, CustomStringConvertible {
    var name: String
    var fileExtension: String
    var open: @Sendable (URL, ManagedObjectModel, Bool) throws -> any PersistentStore
    var metadata: @Sendable (URL) throws -> StoreMetadata
    var setMetadata: @Sendable (StoreMetadata, URL) throws -> Void
    var decode: @Sendable (Data, String, ManagedObjectModel) throws -> AtomicStoreContents

    var description: String { name }

    static let binary = AtomicFormat(
        name: "binary", fileExtension: "ternbin",
        open: { try BinaryStore(at: $0, model: $1, isReadOnly: $2) },
        metadata: { try BinaryStore.metadata(at: $0) }, setMetadata: { try BinaryStore.setMetadata($0, at: $1) },
        decode: { try BinaryStoreFormat.decode($0, path: $1, model: $2) })
    static let xml = AtomicFormat(
        name: "XML", fileExtension: "xml",
        open: { try XMLStore(at: $0, model: $1, isReadOnly: $2) },
        metadata: { try XMLStore.metadata(at: $0) }, setMetadata: { try XMLStore.setMetadata($0, at: $1) },
        decode: { try XMLStoreFormat.decode($0, path: $1, model: $2) })
    static let all = [binary, xml]

    /// A new store file in a new folder, holding ``AwkwardRows/sampleRows()``.
    func savedStore() async throws -> StoreFile {
        let folder = try TemporaryDirectory()
        let url = folder.path("store.\(fileExtension)")
        let store = try open(url)
        _ = try await store.save(StoreChangeSet(inserted: AwkwardRows.sampleRows()))
        return StoreFile(folder: folder, url: url, store: store)
    }

    /// Opens (or creates) a writable store.
    func open(_ url: URL, model: ManagedObjectModel = ConformanceModel.model) throws -> any PersistentStore {
        try open(url, model, false)
    }
}

/// A store, its file and the folder that holds it (removed when the value is released).
struct StoreFile {
    let folder: TemporaryDirectory
    let url: URL
    let store: any PersistentStore
}

/// Rows holding awkward values of every kind, and a store saved with them.
enum AwkwardRows {
    /// Strings XML cannot hold as is, and ones it easily mangles.
    static let strings = [
        "", "plain", "nul \u{0} inside", "controls \u{1}\u{8}\u{B}\u{C}\u{1F}", "cr \r crlf \r\n lf \n tab \t",
        "  leading and trailing  ", "<tag attr=\"x\">&amp; ' \"</tag>", "]]> <![CDATA[", "emoji 👩‍👩‍👧 é\u{301}",
        "\u{FFFE}\u{FFFF} nonchars", "<!ENTITY x \"y\">",
    ]

    static func sampleRows() -> [StoreRow] {
        var rows: [StoreRow] = []
        let values: [[String: AttributeValue]] =
            [
                StoreConformance.sampleValues,
                [
                    "integer16": .integer(Int64(Int16.min)), "integer32": .integer(Int64(Int32.max)),
                    "integer64": .integer(.min), "double": .double(.infinity), "float": .double(-.infinity),
                    "decimal": .decimal(Decimal(string: "-123456789012345678901234567.000001") ?? 0),
                    "date": .date(Date(timeIntervalSinceReferenceDate: -1e10 + 0.123456789)),
                    "binary": .data(Data()), "boolean": .bool(false),
                    "uri": .uri(URL(string: "file:///tmp/a%20b?x=%3C&y=%00#frag") ?? URL(fileURLWithPath: "/")),
                ],
                [
                    "double": .double(.leastNonzeroMagnitude), "integer64": .integer(.max),
                    "date": .date(Date(timeIntervalSinceReferenceDate: .greatestFiniteMagnitude)),
                    "decimal": .decimal(Decimal.greatestFiniteMagnitude),
                    "binary": .data(Data((0...255).map { UInt8($0) })),
                ],
            ] + strings.map { ["string": .string($0)] }
        for (index, attributes) in values.enumerated() {
            rows.append(
                StoreRow(
                    reference: RowReference(entityName: "Sample", primaryKey: Int64(index + 1)), attributes: attributes)
            )
        }
        return rows
    }
}

extension PersistentStore {
    /// Every row of every entity of the store's model.
    func allRows() async throws -> [StoreRow] {
        var rows: [StoreRow] = []
        for entity in model.entities where entity.parentName == nil {
            rows += try await fetch(StoreFetchRequest(entityName: entity.name))
        }
        return rows.sorted { $0.reference < $1.reference }
    }
}

/// The names of the files in a folder.
func fileNames(in folder: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
}
