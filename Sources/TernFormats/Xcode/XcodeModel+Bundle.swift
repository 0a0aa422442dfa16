public import Foundation
public import TernCore

extension XcodeModel {
    // MARK: - Reading a versioned model

    /// Reads every version of an `.xcdatamodeld` bundle, or a single `.xcdatamodel` folder as a
    /// model with one version.
    ///
    /// Xcode stores no version order. Without `order`, versions are sorted by name in natural
    /// order (`Model 9` before `Model 10`, `Model` before `Model 2`) and the current version is
    /// moved last. The current version is the one `.xccurrentversion` names; when that file is
    /// missing or names none, it is the only version, or else the last in order.
    ///
    /// ```swift
    /// let bundle = URL(fileURLWithPath: "Recipes.xcdatamodeld")
    /// let recipes = try XcodeModel.readVersionedModel(at: bundle, order: ["Recipes", "Recipes 2"])
    /// recipes.versions.map(\.name)     // ["Recipes", "Recipes 2"]
    /// ```
    ///
    /// - Parameters:
    ///   - url: An `.xcdatamodeld` bundle, an `.xcdatamodel` folder, or a `contents` file.
    ///   - order: The version names (folder names without `.xcdatamodel`), oldest first. It must
    ///     name every version of the bundle exactly once.
    /// - Returns: The versioned model, named after the bundle.
    /// - Throws: ``TernError/Code/unreadableModelFile`` when the bundle or a version cannot be
    ///   read (see ``readModel(contentsOf:)``) or `.xccurrentversion` names a missing version;
    ///   ``TernError/Code/invalidModel`` when `order` names unknown versions, repeats or omits some.
    /// - Complexity: O(*n*) in the total size of the version files.
    public static func readVersionedModel(at url: URL, order: [String]? = nil) throws(TernError) -> VersionedModel {
        var warnings: [ModelReadingWarning] = []
        return try readVersionedModel(at: url, order: order, warnings: &warnings)
    }

    /// Reads every version of a model, collecting what was read leniently.
    ///
    /// The same as ``readVersionedModel(at:order:)``, and every warning of the read (a value
    /// read as `momc` reads it, for example) is appended to `warnings`, with the version it
    /// concerns.
    ///
    /// ```swift
    /// var warnings: [ModelReadingWarning] = []
    /// let recipes = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
    /// warnings.forEach { print("warning: \($0)") }
    /// ```
    ///
    /// - Parameters:
    ///   - url: An `.xcdatamodeld` bundle, an `.xcdatamodel` folder, or a `contents` file.
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
        let versionFolders = kind.isDirectory ? try self.versionFolders(in: url) : []
        let isBundle =
            url.pathExtension == bundleExtension
            || (kind.isDirectory && url.pathExtension != versionExtension && !versionFolders.isEmpty
                && !itemKind(at: url.appendingPathComponent(contentsFileName)).exists)
        guard isBundle else {
            let folder = kind.isDirectory ? url : url.deletingLastPathComponent()
            let name = folder.deletingPathExtension().lastPathComponent
            let version = ModelVersion(name: name, model: try readModel(contentsOf: url, warnings: &warnings))
            let ordered = try arrange([version], current: name, order: order, path: url.path)
            return VersionedModel(name: name, versions: ordered, current: name)
        }
        guard !versionFolders.isEmpty else {
            throw TernError(
                .unreadableModelFile, "the bundle holds no .\(versionExtension) version folder", path: url.path)
        }
        var versions: [ModelVersion] = []
        for folder in versionFolders {
            let name = folder.deletingPathExtension().lastPathComponent
            var versionWarnings: [ModelReadingWarning] = []
            versions.append(ModelVersion(name: name, model: try readModel(contentsOf: folder, warnings: &versionWarnings)))
            warnings += versionWarnings.map { warning in
                var warning = warning
                warning.versionName = warning.versionName ?? name
                return warning
            }
        }
        let current = try currentVersionName(ofBundle: url, versions: versions.map(\.name))
        let ordered = try arrange(versions, current: current, order: order, path: url.path)
        return VersionedModel(
            name: url.deletingPathExtension().lastPathComponent, versions: ordered, current: current)
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

    /// The `.xcdatamodel` folders of a bundle, in no particular order.
    static func versionFolders(in bundle: URL) throws(TernError) -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: bundle.path)
        } catch {
            throw TernError(
                .unreadableModelFile, "the folder cannot be listed: \(describe(error))", path: bundle.path)
        }
        return names.filter { $0.hasSuffix("." + versionExtension) }
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
