import Foundation
import TernCore

/// Reads and writes Xcode's Core Data model files: `.xcdatamodeld` bundles, `.xcdatamodel`
/// folders and their `contents` XML; reads Xcode 3 versions (`elements`) and compiled models
/// (`.momd`, `.mom`) too.
///
/// Reading turns every element and attribute Xcode writes into Tern's model types; unknown
/// attributes and elements (diagram layout, editor extras) are ignored. Writing produces the XML
/// Xcode itself writes, so that reading it back gives an equal model.
///
/// ```swift
/// let recipes = try XcodeModel.readVersionedModel(at: URL(fileURLWithPath: "Recipes.xcdatamodeld"))
/// let model = recipes.currentVersion.model
/// let xml = XcodeModel.contentsXML(for: model)
/// try XcodeModel.write(recipes, to: URL(fileURLWithPath: "Copy.xcdatamodeld"))
/// ```
///
/// ## Topics
/// ### Reading
/// - ``readVersionedModel(at:order:)``
/// - ``readModel(contentsOf:)``
/// - ``model(fromContents:path:)``
/// - ``model(fromElements:path:warnings:)``
/// - ``readCompiledModel(at:warnings:)``
/// - ``compiledModel(fromArchive:path:)``
/// ### Writing
/// - ``contentsXML(for:)``
/// - ``write(_:to:)``
/// - ``writeModel(_:to:)``
/// ### Version order
/// - ``naturalOrder(_:_:)``
public enum XcodeModel {
    /// The extension of a versioned model bundle.
    public static let bundleExtension = "xcdatamodeld"
    /// The extension of one model version's folder.
    public static let versionExtension = "xcdatamodel"
    /// The name of the XML file inside a version folder.
    public static let contentsFileName = "contents"
    /// The name of the property list that names a bundle's current version.
    public static let currentVersionFileName = ".xccurrentversion"

    // MARK: - Non public

    /// The name of an Xcode 3 model file, which has no `contents`.
    static let legacyElementsFileName = "elements"
    /// The `.xccurrentversion` key that names the current version folder.
    static let currentVersionKey = "_XCCurrentVersionName"

    /// Reads a whole file, turning failures into ``TernError``.
    static func readData(at url: URL) throws(TernError) -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw TernError(
                .unreadableModelFile, "the file cannot be read: \(describe(error))", path: url.path,
                underlyingError: error)
        }
    }

    /// The names of the items in a folder, turning failures into ``TernError``.
    static func folderContents(at folder: URL) throws(TernError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw TernError(
                .unreadableModelFile, "the folder cannot be listed: \(describe(error))", path: folder.path,
                underlyingError: error)
        }
    }

    /// Whether a file system item exists, and whether it is a folder.
    static func itemKind(at url: URL) -> (exists: Bool, isDirectory: Bool) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
        return (exists, isDirectory.boolValue)
    }

    /// A short description of a Foundation error, without user data.
    static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError {
            return "\(nsError.domain) \(nsError.code) (\(underlying.domain) \(underlying.code))"
        }
        return "\(nsError.domain) \(nsError.code)"
    }
}
