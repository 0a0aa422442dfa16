public import Foundation

/// The real-world corpus in `Tests/Fixtures/RealWorld`: models, compiled models, stores and
/// mapping models from public repositories, one folder per repository, each with its licence and
/// a `PROVENANCE.json` that lists every item (see `Tests/Fixtures/RealWorld/README.md`).
///
/// ```swift
/// for item in try RealWorldCorpus.items(of: .model) {
///     _ = try XcodeModel.readVersionedModel(at: item.url)
/// }
/// ```
public enum RealWorldCorpus {
    /// The corpus folder.
    public static var root: URL { Fixtures.url("RealWorld") }

    /// The licences a corpus folder may have.
    public static let permittedLicences: Set<String> = ["MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0"]

    /// Repositories kept aside as an independent check: nothing of theirs may be in the corpus.
    public static let reservedRepositories: Set<String> = [
        "wireapp/wire-ios-data-model", "artsy/energy-legacy", "kiwix/kiwix-apple", "Automattic/simplenote-ios",
        "mastodon/mastodon-ios", "rileytestut/Delta", "rileytestut/AltStore",
    ]

    /// What an item is.
    public enum Kind: String, Sendable, Decodable, CaseIterable {
        /// An `.xcdatamodeld` bundle or an `.xcdatamodel` folder.
        case model
        /// A `.mom` file or a `.momd` folder.
        case compiledModel
        /// A store Core Data wrote, with its `-wal`/`-shm` and external data beside it.
        case store
        /// An `.xcmappingmodel` bundle or a `.cdm` file.
        case mappingModel
    }

    /// One folder's `PROVENANCE.json`.
    public struct Manifest: Sendable, Decodable {
        /// `owner/name`.
        public var repository: String
        /// The commit the items were taken from.
        public var commit: String
        /// The licence's SPDX name.
        public var licence: String
        /// The licence file's name in the folder.
        public var licenceFile: String
        /// The items.
        public var items: [Item]
        /// Where the repository uses the items, and what its own tests expect of them.
        public var notes: String?
        /// The folder, set after decoding.
        public var folder: URL = RealWorldCorpus.root

        private enum CodingKeys: String, CodingKey {
            case repository, commit, licence, licenceFile, items, notes
        }
    }

    /// One item of a folder.
    public struct Item: Sendable, Decodable, CustomStringConvertible {
        /// What the item is.
        public var kind: Kind
        /// The item's path inside its folder.
        public var path: String
        /// The item's path in its repository.
        public var source: String
        /// The path of the model item it belongs to, for stores and mapping models.
        public var model: String?
        /// The model version that wrote it, for stores, when known.
        public var version: String?
        /// The folder, set after decoding.
        public var folder: URL = RealWorldCorpus.root

        private enum CodingKeys: String, CodingKey {
            case kind, path, source, model, version
        }

        /// The item on disk.
        public var url: URL { folder.appendingPathComponent(path) }
        /// The model item it belongs to, on disk.
        public var modelURL: URL? { model.map { folder.appendingPathComponent($0) } }
        /// The item's path from `Tests/Fixtures`, as ``Fixtures/url(_:)`` takes it.
        public var fixturePath: String { "RealWorld/\(folder.lastPathComponent)/\(path)" }
        /// `folder/path`, for messages.
        public var description: String { "\(folder.lastPathComponent)/\(path)" }
    }

    /// Every folder's manifest, in folder-name order.
    ///
    /// - Throws: When a folder has no readable `PROVENANCE.json`.
    public static func manifests() throws -> [Manifest] {
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        return try names.compactMap { name -> Manifest? in
            let folder = root.appendingPathComponent(name, isDirectory: true)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue else {
                return nil
            }
            let data = try Data(contentsOf: folder.appendingPathComponent("PROVENANCE.json"))
            var manifest = try JSONDecoder().decode(Manifest.self, from: data)
            manifest.folder = folder
            manifest.items = manifest.items.map { item in
                var item = item
                item.folder = folder
                return item
            }
            return manifest
        }
    }

    /// Every item of some kinds, folder by folder.
    ///
    /// - Parameter kinds: The kinds wanted; all when empty.
    public static func items(of kinds: Kind...) throws -> [Item] {
        try manifests().flatMap(\.items).filter { kinds.isEmpty || kinds.contains($0.kind) }
    }
}
