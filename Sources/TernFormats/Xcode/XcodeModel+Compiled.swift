public import Foundation
public import TernCore

extension XcodeModel {
    // MARK: - Compiled models

    /// The extension of a compiled model version, written by `momc`.
    public static let compiledModelExtension = "mom"
    /// The extension of a compiled versioned model: a folder of `.mom` files.
    public static let compiledBundleExtension = "momd"
    /// The extension of an optimised compiled model, which newer `momc` writes beside a `.mom`.
    public static let optimizedModelExtension = "omo"
    /// The property list of a `.momd` that names its current version and records entity hashes.
    public static let versionInfoFileName = "VersionInfo.plist"

    /// Reads a compiled model version: a `.mom` file, the keyed archive of an
    /// `NSManagedObjectModel` that `momc` writes and apps ship.
    ///
    /// The archive is decoded as a store's model cache is (``ModelCache/decodeArchive(_:)``):
    /// the same classes and keys, read as leniently. Optimised `.omo` files (`momc`'s binary
    /// `momv2` format, not a keyed archive) are refused; read the `.mom` beside them.
    ///
    /// ```swift
    /// var warnings: [ModelReadingWarning] = []
    /// let model = try XcodeModel.readCompiledModel(at: URL(fileURLWithPath: "Recipes.momd/Recipes 2.mom"), warnings: &warnings)
    /// ```
    ///
    /// - Parameters:
    ///   - url: A `.mom` file.
    ///   - warnings: Receives the read's warnings (none today; kept for symmetry with the other readers).
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` when the file is missing, is an `.omo`,
    ///   or is not the keyed archive of a model (truncated, corrupt, other classes).
    /// - Complexity: O(*n*) in the size of the file.
    public static func readCompiledModel(
        at url: URL, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> ManagedObjectModel {
        if url.pathExtension == optimizedModelExtension { throw optimizedModelRefusal(url) }
        let data = try readData(at: url)
        if data.starts(with: optimizedModelMagic) { throw optimizedModelRefusal(url) }
        return try compiledModel(fromArchive: data, path: url.path)
    }

    /// Decodes the bytes of a `.mom` file.
    ///
    /// - Parameters:
    ///   - data: The keyed archive of an `NSManagedObjectModel`.
    ///   - path: The file the bytes come from, for error messages.
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` when the bytes are not a model archive.
    /// - Complexity: O(*n*) in the size of the archive.
    public static func compiledModel(fromArchive data: Data, path: String? = nil) throws(TernError)
        -> ManagedObjectModel
    {
        do {
            return try ModelCache.decodeArchive(data)
        } catch let error as TernError {
            throw TernError(
                .unreadableModelFile, "the compiled model cannot be read: \(error.message)",
                entity: error.entityName, property: error.propertyName, path: path, underlyingError: error)
        } catch {
            throw TernError(
                .unreadableModelFile, "the compiled model cannot be read", path: path, underlyingError: error)
        }
    }

    // MARK: - Non public

    /// The first bytes of an `.omo` file.
    static let optimizedModelMagic = Data("momv2".utf8)
    /// The `VersionInfo.plist` key naming the current version.
    static let versionInfoCurrentKey = "NSManagedObjectModel_CurrentVersionName"
    /// The `VersionInfo.plist` key of the entity hashes, by version and entity.
    static let versionInfoHashesKey = "NSManagedObjectModel_VersionHashes"

    /// What a `.momd`'s `VersionInfo.plist` says.
    struct CompiledVersionInfo {
        /// The current version's name, if recorded.
        var currentVersionName: String?
        /// The recorded entity hashes: version name → entity name → hash.
        var versionHashes: [String: [String: Data]] = [:]
    }

    static func optimizedModelRefusal(_ url: URL) -> TernError {
        TernError(
            .unreadableModelFile,
            "\(url.lastPathComponent) is an optimised compiled model (.omo, momc's binary momv2 format), "
                + "which Tern does not read; use the .mom file of the same name beside it, or the "
                + ".xcdatamodeld it was compiled from",
            path: url.path)
    }

    /// Whether a folder is a compiled bundle: a `.momd`, or a folder with `VersionInfo.plist`.
    static func isCompiledBundle(_ url: URL) -> Bool {
        url.pathExtension == compiledBundleExtension
            || (url.pathExtension != bundleExtension && url.pathExtension != versionExtension
                && itemKind(at: url.appendingPathComponent(versionInfoFileName)).exists)
    }

    /// The versions of a `.momd`: each `.mom`, and each `.omo` without a `.mom` of its name
    /// (which then cannot be read), by version name.
    static func compiledVersionFiles(in bundle: URL) throws(TernError) -> [(name: String, url: URL)] {
        let names = try folderContents(at: bundle)
        var files: [String: URL] = [:]
        for name in names.sorted() {
            let file = bundle.appendingPathComponent(name)
            guard !itemKind(at: file).isDirectory else { continue }
            switch file.pathExtension {
            case compiledModelExtension:
                files[file.deletingPathExtension().lastPathComponent] = file
            case optimizedModelExtension:
                let version = file.deletingPathExtension().lastPathComponent
                if files[version] == nil, !names.contains(version + "." + compiledModelExtension) {
                    files[version] = file
                }
            default:
                continue
            }
        }
        return files.map { (name: $0.key, url: $0.value) }.sorted { $0.name < $1.name }
    }

    /// Reads a `.momd`'s `VersionInfo.plist`; nil when there is none. A file that cannot be read
    /// is reported in `log` and treated as absent.
    static func compiledVersionInfo(in bundle: URL, log: ModelWarningLog) -> CompiledVersionInfo? {
        let file = bundle.appendingPathComponent(versionInfoFileName)
        guard itemKind(at: file).exists else { return nil }
        let root: BinaryPropertyList.Value?
        do {
            let data = try readData(at: file)
            if data.starts(with: Data("bplist".utf8)) {
                root = try BinaryPropertyList.decode(data)
            } else {
                root = propertyListValue(of: try XMLElementTree.parse(data, path: file.path).child(named: "dict"))
            }
        } catch {
            root = nil
        }
        guard case .dictionary(let top)? = root else {
            log.add(
                ModelReadingWarning(
                    .ignoredContent,
                    "\(versionInfoFileName) is not a readable property list with a dictionary: the current version "
                        + "is taken to be the last in order and no recorded hashes are checked",
                    path: file.path))
            return nil
        }
        var info = CompiledVersionInfo()
        if case .string(let name)? = top[versionInfoCurrentKey], !name.isEmpty {
            info.currentVersionName =
                name.hasSuffix("." + compiledModelExtension)
                ? String(name.dropLast(compiledModelExtension.count + 1)) : name
        }
        if case .dictionary(let versions)? = top[versionInfoHashesKey] {
            for case (let version, .dictionary(let entities)) in versions {
                var hashes: [String: Data] = [:]
                for case (let entity, .data(let hash)) in entities { hashes[entity] = hash }
                info.versionHashes[version] = hashes
            }
        }
        return info
    }

    /// A warning for every entity whose computed hash differs from the one recorded for its
    /// version (or that only one side has), in version and entity name order.
    ///
    /// - Complexity: O(*n*) in the size of the models.
    static func versionHashWarnings(
        for versions: [ModelVersion], recorded: [String: [String: Data]], path: String
    ) -> [ModelReadingWarning] {
        var warnings: [ModelReadingWarning] = []
        for version in versions.sorted(by: { naturalOrder($0.name, $1.name) }) {
            guard let expected = recorded[version.name] else { continue }
            let computed = version.model.entityVersionHashes
            for entity in Set(expected.keys).union(computed.keys).sorted() where expected[entity] != computed[entity] {
                let message: String
                switch (expected[entity], computed[entity]) {
                case (nil, _):
                    message = "\(versionInfoFileName) records no hash for this entity of the compiled model"
                case (_, nil):
                    message =
                        "\(versionInfoFileName) records a hash for this entity, which the compiled model does not hold"
                default:
                    message =
                        "the entity's version hash computed from the compiled model differs from the one "
                        + "\(versionInfoFileName) records; stores this version wrote may not be recognised"
                }
                warnings.append(
                    ModelReadingWarning(
                        .versionHashMismatch, message, versionName: version.name, entityName: entity, path: path))
            }
        }
        return warnings
    }

    /// A property list value from the element tree of an XML property list (`dict`, `array`,
    /// `string`, `data`, `integer`, `real`, `true`, `false`); nil for anything else.
    private static func propertyListValue(of element: XMLElementTree?) -> BinaryPropertyList.Value? {
        guard let element else { return nil }
        let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch element.name {
        case "string": return .string(element.text)
        case "data": return Data(base64Encoded: text, options: .ignoreUnknownCharacters).map { .data($0) }
        case "integer": return Int64(text).map { .integer($0) }
        case "real": return Double(text).map { .real($0) }
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "array": return .array(element.children.compactMap { propertyListValue(of: $0) })
        case "dict":
            var entries: [String: BinaryPropertyList.Value] = [:]
            var key: String?
            for child in element.children {
                if child.name == "key" {
                    key = child.text
                } else if let name = key {
                    entries[name] = propertyListValue(of: child)
                    key = nil
                }
            }
            return .dictionary(entries)
        default: return nil
        }
    }
}
