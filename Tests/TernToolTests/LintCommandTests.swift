import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// `tern lint` on models built to break, and on a git repository the test creates, in which a
/// released version is edited.
@Suite struct LintCommandTests {
    static func recipes(editedV1: Bool, withV3: Bool) throws -> VersionedModel {
        try VersionedModel("Recipes", current: withV3 ? "v3" : "v2") {
            ModelVersion("v1") {
                Entity("Recipe") {
                    Attribute("title", .string)
                    if editedV1 { Attribute("rating", .integer16) }
                }
            }
            ModelVersion("v2") {
                Entity("Recipe") {
                    Attribute("title", .string)
                    Attribute("minutes", .integer32)
                }
            }
            if withV3 {
                ModelVersion("v3") {
                    Entity("Recipe") {
                        Attribute("title", .string)
                        Attribute("minutes", .string)
                        Attribute("uid", .string).required()
                    }
                }
            }
        }
    }

    /// Runs git in a folder.
    static func git(_ arguments: [String], in folder: URL) throws {
        let result = try ToolRunner.runProgram(
            "/usr/bin/env", ["git", "-c", "user.name=Tern", "-c", "user.email=tern@example.com"] + arguments,
            currentDirectory: folder)
        #expect(result.status == 0, "git \(arguments): \(result.standardError)")
    }

    @Test func findsAReleasedVersionEditedSinceItsTag() async throws {
        let tmp = try TemporaryDirectory()
        let repository = tmp.path("App")
        try FileManager.default.createDirectory(at: repository, withIntermediateDirectories: true)
        let bundle = repository.appendingPathComponent("Recipes.xcdatamodeld")
        try XcodeModel.write(try Self.recipes(editedV1: false, withV3: false), to: bundle)
        try Self.git(["init", "-q"], in: repository)
        try Self.git(["add", "."], in: repository)
        try Self.git(["commit", "-q", "-m", "1.0"], in: repository)
        try Self.git(["tag", "1.0"], in: repository)
        try FileManager.default.removeItem(at: bundle)
        try XcodeModel.write(try Self.recipes(editedV1: true, withV3: true), to: bundle)

        let clean = await ToolRunner.run(["lint", bundle.path, "--against", "HEAD", "--order", "v1,v2,v3"])
        #expect(!clean.standardError.contains("editedReleasedVersion"))
        let result = await ToolRunner.run(["lint", bundle.path, "--against", "1.0", "--order", "v1,v2,v3", "--json"])
        #expect(!result.standardOutput.isEmpty, "status \(result.status) err \(result.standardError)")
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("error: "), "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let findings = try #require(document["findings"] as? [[String: Any]])
        let edited = try #require(findings.first { $0["rule"] as? String == "editedReleasedVersion" })
        #expect(edited["severity"] as? String == "error" && edited["version"] as? String == "v1")
        #expect(edited["entity"] as? String == "Recipe" && edited["property"] as? String == "rating")
        #expect((edited["message"] as? String)?.contains("make the change in a new version") == true)
        // v2 → v3 turns minutes into text: no inference does that, and no mapping is given.
        let step = try #require(findings.first { $0["rule"] as? String == "unmigratableStep" })
        #expect(step["property"] as? String == "minutes" && step["severity"] as? String == "error")
        let required = try #require(findings.first { $0["rule"] as? String == "requiredWithoutDefault" })
        #expect(required["property"] as? String == "uid" && required["severity"] as? String == "warning")

        let text = await ToolRunner.run(["lint", bundle.path, "--against", "1.0", "--order", "v1,v2,v3"])
        let lines = text.standardError.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("error: v1, Recipe.rating: Recipe.rating changed after the version was released")
            }, "\(lines)")
        #expect(lines.last?.hasPrefix("error: ") == true && lines.last?.contains("error(s) in the model") == true)

        let unknown = await ToolRunner.run(["lint", bundle.path, "--against", "no-such-tag"])
        #expect(unknown.status == 1 && unknown.standardError.contains("git could not find the revision no-such-tag"))
    }

    @Test func findsIdenticalVersionsACurrentVersionThatIsNotNewestAndCloudKitRules() async throws {
        let model = try VersionedModel("Notes", current: "v1") {
            ModelVersion("v1") {
                Entity("Note") {
                    Attribute("text", .string).required()
                    Relationship("folder", to: "Folder", inverse: "notes")
                    Unique("text")
                }
                Entity("Folder") {
                    Relationship("notes", to: "Note", inverse: "folder").toMany(ordered: true).onDelete(.deny)
                }
            }
            ModelVersion("v2") {
                Entity("Note") {
                    Attribute("text", .string).required()
                    Relationship("folder", to: "Folder", inverse: "notes")
                    Unique("text")
                }
                Entity("Folder") {
                    Relationship("notes", to: "Note", inverse: "folder").toMany(ordered: true).onDelete(.deny)
                }
            }
        }
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Notes.xcdatamodeld")
        try XcodeModel.write(model, to: bundle)
        let plain = await ToolRunner.run(["lint", bundle.path, "--order", "v1,v2", "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any])
        let rules = try #require(document["findings"] as? [[String: Any]]).compactMap { $0["rule"] as? String }
        #expect(Set(rules) == ["identicalHashes", "currentNotNewest"])
        #expect(plain.status == 1)  // with an explicit order, a current version that is not the newest is an error
        let cloud = await ToolRunner.run(["lint", bundle.path, "--cloudkit", "--json"])
        let cloudDocument = try #require(
            try JSONSerialization.jsonObject(with: Data(cloud.standardOutput.utf8)) as? [String: Any])
        let messages = try #require(cloudDocument["findings"] as? [[String: Any]]).filter {
            $0["rule"] as? String == "cloudKit"
        }
        .map { "\($0["entity"] as? String ?? "").\($0["property"] as? String ?? "")" }
        #expect(Set(messages) == ["Note.", "Note.text", "Folder.notes"], "\(messages)")
        #expect(cloud.status == 1)
    }
}
