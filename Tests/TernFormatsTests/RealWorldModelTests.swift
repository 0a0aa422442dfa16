import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// Every model of the real-world corpus (`Tests/Fixtures/RealWorld`) reads, and hashes as Core
/// Data does wherever the corpus holds Core Data's own hashes: a store's metadata, its model
/// cache, a compiled model's `VersionInfo.plist`.
@Suite struct RealWorldModelTests {
    @Test func everyFolderSaysWhereItsFilesCameFromUnderWhichLicence() throws {
        let manifests = try RealWorldCorpus.manifests()
        #expect(manifests.count >= 12)
        for manifest in manifests {
            let folder = manifest.folder.lastPathComponent
            #expect(RealWorldCorpus.permittedLicences.contains(manifest.licence), "\(folder): \(manifest.licence)")
            #expect(!RealWorldCorpus.reservedRepositories.contains(manifest.repository), "\(folder) is reserved")
            #expect(folder == manifest.repository.replacingOccurrences(of: "/", with: "__"), "\(folder)")
            #expect(manifest.commit.count == 40 && manifest.commit.allSatisfy(\.isHexDigit), "\(folder)")
            let licence = manifest.folder.appendingPathComponent(manifest.licenceFile)
            #expect(FileManager.default.fileExists(atPath: licence.path), "\(folder) has no \(manifest.licenceFile)")
            for item in manifest.items {
                #expect(FileManager.default.fileExists(atPath: item.url.path), "\(item) is missing")
                if let model = item.modelURL {
                    #expect(FileManager.default.fileExists(atPath: model.path), "\(item)'s model")
                }
            }
            // Every file belongs to an item (or is the licence, the manifest or the replays of the
            // repository's migration tests, RealWorldMigrationReplayTests).
            let covered = manifest.items.map(\.path) + [manifest.licenceFile, "PROVENANCE.json", "REPLAY.json"]
            let files = FileManager.default.enumerator(atPath: manifest.folder.path)?.compactMap { $0 as? String } ?? []
            for file in files where !Self.isFolder(manifest.folder.appendingPathComponent(file)) {
                let owned = covered.contains { file == $0 || file.hasPrefix($0 + "/") || Self.isSideFile(file, of: $0) }
                #expect(owned, "\(folder)/\(file) is listed by no item of PROVENANCE.json")
            }
        }
    }

    /// Why a model of the corpus is refused, when it must be: a bundle that holds no version at
    /// all (a project kept the folder and its `.xccurrentversion` after its versions went) is
    /// meaningless. Every other model must read.
    static func expectedRefusal(of item: RealWorldCorpus.Item) -> String? {
        guard item.path.hasSuffix(".xcdatamodeld") else { return nil }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: item.url.path)) ?? []
        return names.contains { $0.hasSuffix(".xcdatamodel") } ? nil : "the bundle holds no .xcdatamodel version folder"
    }

    @Test func everyModelReadsWithNoVersionLeftOut() throws {
        var versions = 0
        var hashes = 0
        for item in try RealWorldCorpus.items(of: .model, .compiledModel) {
            var warnings: [ModelReadingWarning] = []
            let model: VersionedModel
            do {
                model = try XcodeModel.readVersionedModel(at: item.url, warnings: &warnings)
                #expect(Self.expectedRefusal(of: item) == nil, "\(item) was read")
            } catch {
                let expected = Self.expectedRefusal(of: item)
                #expect(expected.map(error.message.hasPrefix) == true, "\(item) is refused: \(error)")
                continue
            }
            let unread = warnings.filter { $0.code == .unreadableVersion }
            #expect(unread.isEmpty, "\(item): \(unread)")
            let mismatched = warnings.filter { $0.code == .versionHashMismatch }
            #expect(mismatched.isEmpty, "\(item): \(mismatched)")
            versions += model.versions.count
            hashes += model.versions.map(\.model.entityVersionHashes.count).reduce(0, +)
        }
        #expect(versions >= 150, "the corpus holds \(versions) model versions")
        #expect(hashes > versions)
    }

    /// A store's `NSStoreModelVersionHashes` are Core Data's hashes of the version that wrote it.
    @Test func storesMatchTheVersionThatWroteThem() throws {
        var checked = 0
        for item in try RealWorldCorpus.items(of: .store) {
            guard let modelURL = item.modelURL, let versionName = item.version else { continue }
            let model = try XcodeModel.readVersionedModel(at: modelURL)
            let version = try #require(model.version(named: versionName), "\(item): no version \(versionName)")
            let metadata = try Self.metadata(of: item)
            let own = version.model.entityVersionHashes
            if Set(metadata.versionHashes.keys).isStrictSuperset(of: own.keys) {
                // Written by a model merged from several (the item's notes say which): its entities
                // are some of the store's.
                #expect(own == metadata.versionHashes.filter { own[$0.key] != nil }, "\(item)")
            } else {
                #expect(own == metadata.versionHashes, "\(item) was not written by \(versionName)")
                #expect(model.versions(matching: metadata).contains { $0.name == versionName }, "\(item)")
            }
            checked += 1
        }
        #expect(checked >= 25)
    }

    /// Each store's model cache (Core Data's own compiled model) hashes to its metadata.
    @Test func everyStoresModelCacheHashesToItsMetadata() throws {
        var checked = 0
        for item in try RealWorldCorpus.items(of: .store) {
            let blobs = try FixtureStoreReader.blobs(ofFixture: item.fixturePath)
            guard !blobs.modelCache.isEmpty else { continue }
            let cached = try ModelCache.decode(blobs.modelCache)
            #expect(cached.entityVersionHashes == (try Self.metadata(of: item)).versionHashes, "\(item)")
            checked += 1
        }
        #expect(checked >= 25)
    }

    /// A compiled `.momd` beside its `.xcdatamodeld`: the hashes momc recorded are Tern's.
    @Test func compiledModelsRecordTheHashesOfTheirSourceVersions() throws {
        var checked = 0
        let manifests = try RealWorldCorpus.manifests()
        for item in manifests.flatMap(\.items) where item.kind == .compiledModel && item.path.hasSuffix(".momd") {
            let info = item.url.appendingPathComponent("VersionInfo.plist")
            let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: info), format: nil)
            let recorded = try #require(
                (plist as? [String: Any])?["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]], "\(item)"
            )
            // The source bundles of the same name (a repository may keep an older copy too): each
            // recorded version that a source has is hashed the same by one of them.
            let name = item.url.deletingPathExtension().lastPathComponent
            let sources =
                try manifests.first { $0.folder == item.folder }?.items
                .filter { $0.kind == .model && $0.url.deletingPathExtension().lastPathComponent == name }
                .map { try XcodeModel.readVersionedModel(at: $0.url) } ?? []
            for (versionName, hashes) in recorded {
                let candidates = sources.compactMap { $0.version(named: versionName) }
                guard !candidates.isEmpty else { continue }
                #expect(candidates.contains { $0.model.entityVersionHashes == hashes }, "\(item) \(versionName)")
                checked += 1
            }
        }
        #expect(checked >= 1)
    }

    // MARK: - Leniency rules on real models

    /// One attribute of a real model whose default momc read leniently: what Tern reads, and
    /// that a warning names it.
    struct LenientDefault: Sendable, CustomStringConvertible {
        var file: String
        var entity: String
        var attribute: String
        var expected: AttributeValue?
        /// Whether the reading changed the text's meaning, and so warns.
        var warns = true
        var description: String { "\(file) \(entity).\(attribute)" }
    }

    static let lenientDefaults: [LenientDefault] = [
        // NSString.integerValue of "YES" is 0: no digits.
        LenientDefault(
            file: "apptentive__apptentive-ios/ATDataModel.xcdatamodeld/ATDataModel 6.xcdatamodel",
            entity: "ATMessage", attribute: "pendingState", expected: .integer(0)),
        // integerValue of "0.0" reads the leading digits: 0, the number written, so no warning.
        LenientDefault(
            file: "LoopKit__LoopKit/Model.xcdatamodeld/Modelv4.xcdatamodel",
            entity: "CachedInsulinDeliveryObject", attribute: "insulinType", expected: .integer(0), warns: false),
        // A date default that is no date: none.
        LenientDefault(
            file: "infinitered__ruby-xcdm/Article.xcdatamodeld/Article.xcdatamodel",
            entity: "Article", attribute: "publishedAt", expected: nil),
    ]

    @Test(arguments: lenientDefaults)
    func realDefaultsReadAsMomcReadsThem(_ example: LenientDefault) throws {
        var warnings: [ModelReadingWarning] = []
        let url = RealWorldCorpus.root.appendingPathComponent(example.file)
        let model = try XcodeModel.readModel(contentsOf: url, warnings: &warnings)
        let attribute = try #require(model.entity(named: example.entity)?.attribute(named: example.attribute))
        #expect(attribute.defaultValue == example.expected)
        let named = warnings.filter {
            $0.code == .lenientValue && $0.entityName == example.entity && $0.propertyName == example.attribute
                && ($0.line ?? 0) > 0
        }
        #expect(named.isEmpty != example.warns, "\(warnings)")
    }

    /// A clean Boolean default ("0") reads as false with no warning (iNaturalist).
    @Test func aRealBooleanDefaultOfZeroIsFalse() throws {
        var warnings: [ModelReadingWarning] = []
        let url = RealWorldCorpus.root.appendingPathComponent(
            "inaturalist__INaturalistIOS/INaturalist.xcdatamodeld/INaturalist2.14.xcdatamodel")
        let model = try XcodeModel.readModel(contentsOf: url, warnings: &warnings)
        let attributes = model.entities.flatMap(\.attributes).filter { $0.name == "hasUnviewedActivity" }
        #expect(!attributes.isEmpty && attributes.allSatisfy { $0.defaultValue == .bool(false) })
        #expect(!warnings.contains { $0.propertyName == "hasUnviewedActivity" })
    }

    /// `optional="YES" minCount="1" maxCount="1"` on a to-one (iNaturalist's ListedTaxon) is an
    /// optional relationship; its counts are kept as written, for the hash.
    @Test func aRealOptionalToOneWithAMinimumCountIsOptional() throws {
        let url = RealWorldCorpus.root.appendingPathComponent(
            "inaturalist__INaturalistIOS/INaturalist.xcdatamodeld/INaturalist2.1.xcdatamodel")
        let model = try XcodeModel.readModel(contentsOf: url)
        for name in ["list", "taxon"] {
            let relationship = try #require(model.entity(named: "ListedTaxon")?.relationship(named: name))
            #expect(relationship.isOptional && relationship.minCount == 1 && relationship.maxCount == 1)
            #expect(!relationship.isRequired)
            #expect(relationship.allows(count: 0) && relationship.allows(count: 1))
        }
    }

    // MARK: - Helpers

    static func metadata(of item: RealWorldCorpus.Item) throws -> StoreMetadata {
        let blobs = try FixtureStoreReader.blobs(ofFixture: item.fixturePath)
        let dictionary = try FixtureStoreReader.metadata(blobs.metadata)
        var metadata = StoreMetadata(
            storeType: dictionary["NSStoreType"] as? String ?? "SQLite",
            uuid: dictionary["NSStoreUUID"] as? String ?? "")
        metadata.versionHashes = dictionary["NSStoreModelVersionHashes"] as? [String: Data] ?? [:]
        metadata.versionIdentifiers = dictionary["NSStoreModelVersionIdentifiers"] as? [String] ?? []
        return metadata
    }

    static func isFolder(_ url: URL) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) && isFolder.boolValue
    }

    /// A store's `-wal`, `-shm` and `.NAME_SUPPORT` files belong to it.
    static func isSideFile(_ file: String, of item: String) -> Bool {
        if file == item + "-wal" || file == item + "-shm" { return true }
        let url = URL(fileURLWithPath: item)
        let support = url.deletingLastPathComponent().appendingPathComponent(
            "." + url.deletingPathExtension().lastPathComponent + "_SUPPORT"
        ).relativePath
        return file.hasPrefix(support + "/")
            || file.hasPrefix(String(support.dropFirst(support.hasPrefix("./") ? 2 : 0)) + "/")
    }
}
