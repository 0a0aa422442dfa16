public import Foundation
public import TernCore

extension XcodeModel {
    // MARK: - Reading a versioned model

    /// Reads every version of a model: an `.xcdatamodeld` bundle or a compiled `.momd`, or a
    /// single `.xcdatamodel` folder or `.mom` file as a model with one version.
    ///
    /// Xcode stores no version order. Without `order`, versions are sorted by name in natural
    /// order (`Model 9` before `Model 10`, `Model` before `Model 2`) and the current version is
    /// moved last, and the model's ``/TernCore/VersionedModel/hasExplicitOrder`` is false (with
    /// `order`, it is true): migrations then infer one step straight from a store's version to
    /// the target, and never walk this guessed order. The current version is the one `.xccurrentversion` (in a `.momd`,
    /// `VersionInfo.plist`) names; when that file is missing or names none, it is the only
    /// version, or else the last in order.
    ///
    /// Version folders may hold `contents` or, for Xcode 3 versions, `elements`; a bundle may mix
    /// both. A `.momd` holds one `.mom` per version, named after the version; an `.omo` beside a
    /// `.mom` is ignored.
    ///
    /// A version that cannot be read does not stop the others: it is left out of the result
    /// (so stores it wrote are not identified) and named by a warning of code
    /// ``ModelReadingWarning/Code/unreadableVersion``, which ``readVersionedModel(at:order:warnings:)``
    /// reports. When the current version is the unreadable one, the newest readable version (the
    /// last in order) becomes current, and the warning says so. Only when no version can be read
    /// does reading throw.
    ///
    /// ```swift
    /// let bundle = URL(fileURLWithPath: "Recipes.xcdatamodeld")
    /// let recipes = try XcodeModel.readVersionedModel(at: bundle, order: ["Recipes", "Recipes 2"])
    /// recipes.versions.map(\.name)     // ["Recipes", "Recipes 2"]
    /// ```
    ///
    /// - Parameters:
    ///   - url: An `.xcdatamodeld` bundle, an `.xcdatamodel` folder, a `contents` or `elements`
    ///     file, a `.momd` folder or a `.mom` file.
    ///   - order: The version names (folder or file names without their extension), oldest first.
    ///     It must name every version of the bundle exactly once.
    /// - Returns: The versioned model, named after the bundle.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` when the path holds no model, no version
    ///   can be read (see ``readModel(contentsOf:)``), or `.xccurrentversion` or
    ///   `VersionInfo.plist` names a version the bundle does not hold;
    ///   ``/TernCore/TernError/Code/invalidModel`` when `order` names unknown versions, repeats or omits some.
    /// - Complexity: O(*n*) in the total size of the version files.
    public static func readVersionedModel(at url: URL, order: [String]? = nil) throws(TernError) -> VersionedModel {
        var warnings: [ModelReadingWarning] = []
        return try readVersionedModel(at: url, order: order, warnings: &warnings)
    }

    /// Reads every version of a model, collecting what was read leniently.
    ///
    /// The same as ``readVersionedModel(at:order:)``, and every warning of the read is appended
    /// to `warnings`, with the version it concerns: values read as `momc` reads them, versions
    /// that could not be read (``ModelReadingWarning/Code/unreadableVersion``), and entity hashes
    /// a `.momd`'s `VersionInfo.plist` records that differ from the computed ones
    /// (``ModelReadingWarning/Code/versionHashMismatch``).
    ///
    /// ```swift
    /// var warnings: [ModelReadingWarning] = []
    /// let recipes = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
    /// warnings.forEach { print("warning: \($0)") }
    /// ```
    ///
    /// - Parameters:
    ///   - url: A model bundle, version folder or file, as for ``readVersionedModel(at:order:)``.
    ///   - order: The version names, oldest first, or nil for the natural order.
    ///   - warnings: Receives the read's warnings, in the order they were found.
    /// - Returns: The versioned model, named after the bundle.
    /// - Throws: As ``readVersionedModel(at:order:)``.
    /// - Complexity: O(*n*) in the total size of the version files.
    public static func readVersionedModel(
        at url: URL, order: [String]? = nil, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> VersionedModel {
        let kind = itemKind(at: url)
        guard kind.exists else {
            throw TernError(.unreadableModelFile, "no model exists at this path", path: url.path)
        }
        if kind.isDirectory && isCompiledBundle(url) {
            return try readCompiledBundle(at: url, order: order, warnings: &warnings)
        }
        let versionFolders = kind.isDirectory ? try self.versionFolders(in: url) : []
        let isBundle =
            url.pathExtension == bundleExtension
            || (kind.isDirectory && url.pathExtension != versionExtension && !versionFolders.isEmpty
                && !itemKind(at: url.appendingPathComponent(contentsFileName)).exists)
        guard isBundle else {
            let isCompiled = [compiledModelExtension, optimizedModelExtension].contains(url.pathExtension)
            let folder = kind.isDirectory || isCompiled ? url : url.deletingLastPathComponent()
            let name = folder.deletingPathExtension().lastPathComponent
            let version = ModelVersion(name: name, model: try readModel(contentsOf: url, warnings: &warnings))
            let ordered = try arrange([version], current: name, order: order, path: url.path)
            return VersionedModel(name: name, versions: ordered, current: name, hasExplicitOrder: order != nil)
        }
        guard !versionFolders.isEmpty else {
            throw TernError(
                .unreadableModelFile, "the bundle holds no .\(versionExtension) version folder", path: url.path)
        }
        let sources = versionFolders.map { (name: $0.deletingPathExtension().lastPathComponent, url: $0) }
        let current = try currentVersionName(ofBundle: url, versions: sources.map(\.name))
        return try assemble(
            name: url.deletingPathExtension().lastPathComponent, sources: sources, current: current, order: order,
            path: url.path, warnings: &warnings)
    }

    // MARK: - Version order

    /// Whether `lhs` comes before `rhs` in natural order: runs of digits compare as numbers,
    /// other text compares as text, and a name comes before the longer names it begins.
    ///
    /// ```swift
    /// ["Model 10", "Model 2", "Model"].sorted(by: XcodeModel.naturalOrder)
    /// // ["Model", "Model 2", "Model 10"]
    /// ```
    ///
    /// - Complexity: O(*n*) in the length of the names.
    public static func naturalOrder(_ lhs: String, _ rhs: String) -> Bool {
        let left = naturalRuns(of: lhs)
        let right = naturalRuns(of: rhs)
        for (a, b) in zip(left, right) where a != b {
            if a.isNumber && b.isNumber {
                let (x, y) = (a.text.drop { $0 == "0" }, b.text.drop { $0 == "0" })
                if x.count != y.count { return x.count < y.count }
                if x != y { return x < y }
                return a.text.count < b.text.count
            }
            return a.text < b.text
        }
        if left.count != right.count { return left.count < right.count }
        return lhs < rhs
    }

    // MARK: - Non public

    /// A run of digits or of other characters in a name.
    private struct NaturalRun: Equatable {
        var text: Substring
        var isNumber: Bool
    }

    private static func naturalRuns(of name: String) -> [NaturalRun] {
        var runs: [NaturalRun] = []
        var index = name.startIndex
        while index < name.endIndex {
            let isNumber = isDigit(name[index])
            var end = name.index(after: index)
            while end < name.endIndex, isDigit(name[end]) == isNumber { end = name.index(after: end) }
            runs.append(NaturalRun(text: name[index..<end], isNumber: isNumber))
            index = end
        }
        return runs
    }

    private static func isDigit(_ character: Character) -> Bool {
        character.isASCII && character.isNumber
    }

    /// Reads a `.momd`: its `.mom` files as versions, the current version from
    /// `VersionInfo.plist`, whose recorded hashes are checked against the computed ones.
    private static func readCompiledBundle(
        at url: URL, order: [String]?, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> VersionedModel {
        let log = ModelWarningLog()
        let info = compiledVersionInfo(in: url, log: log)
        warnings += log.warnings
        let sources = try compiledVersionFiles(in: url)
        guard !sources.isEmpty else {
            throw TernError(
                .unreadableModelFile, "the compiled model holds no .\(compiledModelExtension) file", path: url.path)
        }
        var current = info?.currentVersionName
        if let named = current, !sources.contains(where: { $0.name == named }) {
            throw TernError(
                .unreadableModelFile,
                "\(versionInfoFileName) names the current version \(named), which the compiled model does not hold; "
                    + "compile the model again",
                path: url.appendingPathComponent(versionInfoFileName).path)
        }
        if current == nil, sources.count == 1 { current = sources[0].name }
        let versioned = try assemble(
            name: url.deletingPathExtension().lastPathComponent, sources: sources, current: current, order: order,
            path: url.path, warnings: &warnings)
        warnings += versionHashWarnings(
            for: versioned.versions, recorded: info?.versionHashes ?? [:],
            path: url.appendingPathComponent(versionInfoFileName).path)
        return versioned
    }

    /// Reads each version of a bundle, leaving out (with a warning) those that cannot be read.
    ///
    /// - Throws: The version's own error when the bundle has one version and it cannot be
    ///   read; ``TernError/Code/unreadableModelFile`` when none of several can.
    private static func assemble(
        name: String, sources: [(name: String, url: URL)], current: String?, order: [String]?, path: String,
        warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> VersionedModel {
        var versions: [ModelVersion] = []
        var failures: [(name: String, error: TernError)] = []
        for source in sources {
            var versionWarnings: [ModelReadingWarning] = []
            do {
                versions.append(
                    ModelVersion(
                        name: source.name, model: try readModel(contentsOf: source.url, warnings: &versionWarnings)))
            } catch {
                failures.append((source.name, error))
                continue
            }
            warnings += versionWarnings.map { warning in
                var warning = warning
                warning.versionName = warning.versionName ?? source.name
                return warning
            }
        }
        failures.sort { naturalOrder($0.name, $1.name) }
        guard !versions.isEmpty else {
            if failures.count == 1 { throw failures[0].error }
            throw TernError(
                .unreadableModelFile,
                "none of the \(failures.count) versions can be read: "
                    + failures.map { "\($0.name): \($0.error.message)" }.joined(separator: "; "),
                path: path)
        }
        let unreadable = Set(failures.map(\.name))
        let readableCurrent = current.flatMap { unreadable.contains($0) ? nil : $0 }
        let ordered = try arrange(
            versions, current: readableCurrent, order: order?.filter { !unreadable.contains($0) }, path: path)
        let currentName = readableCurrent ?? ordered[ordered.count - 1].name
        for failure in failures {
            let message =
                failure.name == current
                ? "the current version cannot be read, so \(currentName), the newest readable version, is taken as "
                    + "current and stores this version wrote cannot be identified: \(failure.error.message)"
                : "the version cannot be read and is left out, so stores it wrote cannot be identified: "
                    + failure.error.message
            warnings.append(
                ModelReadingWarning(
                    .unreadableVersion, message, versionName: failure.name, entityName: failure.error.entityName,
                    propertyName: failure.error.propertyName, path: failure.error.path ?? path))
        }
        return VersionedModel(name: name, versions: ordered, current: currentName, hasExplicitOrder: order != nil)
    }

    /// The `.xcdatamodel` folders of a bundle, in no particular order.
    static func versionFolders(in bundle: URL) throws(TernError) -> [URL] {
        try folderContents(at: bundle).filter { $0.hasSuffix("." + versionExtension) }
            .map { bundle.appendingPathComponent($0, isDirectory: true) }
            .filter { itemKind(at: $0).isDirectory }
    }

    /// The version `.xccurrentversion` names, the only version when it names none, or nil.
    private static func currentVersionName(ofBundle bundle: URL, versions: [String]) throws(TernError) -> String? {
        let file = bundle.appendingPathComponent(currentVersionFileName)
        var named: String?
        if itemKind(at: file).exists {
            named = try currentVersionFolderName(in: readData(at: file), path: file.path)
        }
        guard let named, !named.isEmpty else {
            return versions.count == 1 ? versions[0] : nil
        }
        let name = named.hasSuffix("." + versionExtension) ? String(named.dropLast(versionExtension.count + 1)) : named
        guard versions.contains(name) else {
            throw TernError(
                .unreadableModelFile,
                "\(currentVersionFileName) names the version \(named), which the bundle does not hold; "
                    + "choose the current version again in Xcode",
                path: file.path)
        }
        return name
    }

    /// The `_XCCurrentVersionName` of an `.xccurrentversion` property list, if it has one.
    static func currentVersionFolderName(in data: Data, path: String) throws(TernError) -> String? {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        if data.starts(with: Data("bplist".utf8)) {
            let list = try? PropertyListSerialization.propertyList(from: data, format: nil)
            return (list as? [String: Any])?[currentVersionKey] as? String
        }
        let root = try XMLElementTree.parse(data, path: path)
        guard root.name == "plist", let dictionary = root.child(named: "dict") else {
            throw TernError(
                .unreadableModelFile, "the file is not a property list with a dictionary", path: path)
        }
        let items = dictionary.children
        for (offset, item) in items.enumerated()
        where item.name == "key" && item.text == currentVersionKey && offset + 1 < items.count {
            let value = items[offset + 1]
            return value.name == "string" ? value.text : nil
        }
        return nil
    }

    /// Puts versions in the requested order, or in natural order with the current version last.
    private static func arrange(
        _ versions: [ModelVersion], current: String?, order: [String]?, path: String
    ) throws(TernError) -> [ModelVersion] {
        guard let order else {
            var sorted = versions.sorted { naturalOrder($0.name, $1.name) }
            if let current, let index = sorted.firstIndex(where: { $0.name == current }) {
                sorted.append(sorted.remove(at: index))
            }
            return sorted
        }
        let byName = Dictionary(versions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let unknown = order.filter { byName[$0] == nil }
        guard unknown.isEmpty else {
            throw TernError(
                .invalidModel,
                "the version order names \(unknown.joined(separator: ", ")), which the model does not hold; "
                    + "its versions are \(versions.map(\.name).sorted(by: naturalOrder).joined(separator: ", "))",
                path: path)
        }
        let repeated = Set(order.filter { name in order.filter { $0 == name }.count > 1 })
        guard repeated.isEmpty else {
            throw TernError(
                .invalidModel,
                "the version order names \(repeated.sorted().joined(separator: ", ")) more than once",
                path: path)
        }
        let missing = versions.map(\.name).filter { !order.contains($0) }
        guard missing.isEmpty else {
            throw TernError(
                .invalidModel,
                "the version order leaves out \(missing.sorted(by: naturalOrder).joined(separator: ", ")); "
                    + "name every version of the model",
                path: path)
        }
        return order.compactMap { byName[$0] }
    }
}
