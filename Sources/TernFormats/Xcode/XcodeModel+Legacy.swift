public import Foundation
public import TernCore

extension XcodeModel {
    // MARK: - Xcode 3 models

    /// Decodes the `elements` file of an Xcode 3 model version (a version folder that holds
    /// `elements` and `layout` instead of `contents`).
    ///
    /// The archive is read as the `contents` file Xcode writes when it converts the version, and
    /// that is decoded as ``model(fromContents:path:warnings:)`` decodes it, so an Xcode 3 version
    /// and its converted form give equal models and the version hashes Core Data computes for them.
    /// What Tern does not read in Xcode 3 models (fetched properties, fetch request templates) is
    /// left out with a warning of code ``ModelReadingWarning/Code/ignoredContent``; neither enters
    /// version hashes. `layout` (diagram geometry) is not read.
    ///
    /// ```swift
    /// let elements = try Data(contentsOf: URL(fileURLWithPath: "Recipes.xcdatamodel/elements"))
    /// var warnings: [ModelReadingWarning] = []
    /// let model = try XcodeModel.model(fromElements: elements, path: "Recipes.xcdatamodel/elements", warnings: &warnings)
    /// ```
    ///
    /// - Parameters:
    ///   - data: The `elements` bytes: an `NSKeyedArchiver` binary property list.
    ///   - path: The file the bytes come from, for error messages and warnings.
    ///   - warnings: Receives the read's warnings, in the order they were found.
    /// - Returns: The model.
    /// - Throws: ``/TernCore/TernError/Code/unreadableModelFile`` when the bytes are not a keyed archive of
    ///   an Xcode 3 model (truncated, corrupt, other classes) or lack names;
    ///   ``/TernCore/TernError/Code/invalidModel`` when a value does not fit its attribute's type.
    /// - Complexity: O(*n*) in the size of the archive.
    public static func model(
        fromElements data: Data, path: String? = nil, warnings: inout [ModelReadingWarning]
    ) throws(TernError) -> ManagedObjectModel {
        let log = ModelWarningLog()
        defer { warnings += log.warnings }
        let root = try LegacyModelDecoder(path: path, log: log).contentsTree(fromElements: data)
        return try ContentsDecoder(path: path, log: log).model(from: root)
    }
}
