public import Foundation

/// Type-checks Swift files with `swiftc -typecheck` against the modules this package built
/// (TernCore, TernFormats, …), as one module: how tests check generated code without building
/// a package for it.
///
/// ```swift
/// let result = try SwiftTypechecker.typecheck([folder.path("Kitchen.swift")])
/// #expect(result.succeeded, "\(result.output)")
/// ```
public enum SwiftTypechecker {
    /// What the compiler said.
    public struct Result: Sendable {
        /// Whether the files type-check.
        public var succeeded: Bool
        /// The compiler's output (its diagnostics).
        public var output: String
    }

    /// Type-checks the files as one module.
    ///
    /// - Parameters:
    ///   - files: The Swift files.
    ///   - moduleName: The module's name.
    /// - Returns: Whether they type-check, and the diagnostics.
    /// - Throws: When the built modules are not beside the test binary, or `swiftc` cannot start
    ///   or runs for more than 15 minutes.
    public static func typecheck(_ files: [URL], moduleName: String = "Generated") throws -> Result {
        let folders =
            [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
            + CommandLine.arguments.prefix(1).map { URL(fileURLWithPath: $0).deletingLastPathComponent() }
        guard
            let modules = folders.map({ $0.appendingPathComponent("Modules") })
                .first(where: {
                    FileManager.default.fileExists(atPath: $0.appendingPathComponent("TernCore.swiftmodule").path)
                })
        else {
            throw ChildProcess.Failure(
                description: "TernCore.swiftmodule is not beside the test binary; build the package first")
        }
        let sources = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(
            "Sources")
        var arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-module-name", moduleName, "-I", modules.path]
        for library in ["CCrypto", "CZlib", "CSQLite"] {
            arguments += [
                "-Xcc", "-fmodule-map-file=\(sources.appendingPathComponent("\(library)/module.modulemap").path)",
            ]
        }
        arguments += files.map(\.path)
        let folder = try TemporaryDirectory()
        let log = folder.path("swiftc.txt")
        let child = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), arguments, standardOutput: log.path, standardError: log.path)
        try child.waitUntilExit(timeout: .seconds(900))
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return Result(succeeded: child.terminationReason == .exit && child.terminationStatus == 0, output: output)
    }
}
