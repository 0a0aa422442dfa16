public import Foundation

/// A fresh folder under the system's temporary directory, removed when the value is released.
///
/// ```swift
/// let tmp = try TemporaryDirectory()
/// let store = try tmp.copy(Fixtures.url("CoreDataStack/TestModel.sqlite"))
/// ```
public final class TemporaryDirectory: Sendable {
    /// The folder.
    public let url: URL

    /// Creates an empty folder.
    ///
    /// - Throws: When the folder cannot be created.
    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("tern-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the folder.
    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Copies a file or folder into this folder, making the copy writable.
    ///
    /// - Parameters:
    ///   - source: What to copy.
    ///   - name: The copy's name; the source's name when nil.
    /// - Returns: The copy's location.
    /// - Throws: When the copy fails.
    @discardableResult
    public func copy(_ source: URL, as name: String? = nil) throws -> URL {
        let destination = url.appendingPathComponent(name ?? source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: destination)
        try makeWritable(destination)
        return destination
    }

    private func makeWritable(_ target: URL) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: target.path, isDirectory: &isDirectory) else { return }
        try manager.setAttributes([.posixPermissions: isDirectory.boolValue ? 0o755 : 0o644], ofItemAtPath: target.path)
        if isDirectory.boolValue {
            for child in try manager.contentsOfDirectory(atPath: target.path) {
                try makeWritable(target.appendingPathComponent(child))
            }
        }
    }
}
