import Foundation
import TernMigration
import TernTestSupport
import Testing

/// Hostile mapping files (`Tests/Fixtures/Hostile/Mappings/`) handed to `tern migrate`.
///
/// Each file is meant for the v2 → v3 step of the crash cases' `Items` model (``CrashScenario``)
/// and is wrong in one way: a name the models do not have, a value of the wrong type, a bad
/// filter, an unknown function, versions that are not the step's, nesting past the limit, bytes
/// that are not JSON. The library must refuse it with a typed error, and `tern migrate` must exit
/// 1 with one `error:` line (the lines after it list the problems), before writing anything: the
/// store, its folder and the mapping file stay as they were.
extension HostileInputTests {
    /// One store for every case: written once, checked byte for byte after each.
    static let mappingStore = MappingStore()

    /// A v2 store of the `Items` model, made on first use.
    actor MappingStore {
        private var made: (scenario: CrashScenario, store: URL, bytes: Data)?

        /// The scenario, the store and its bytes.
        func get() async throws -> (scenario: CrashScenario, store: URL, bytes: Data) {
            if let made { return made }
            let scenario = try CrashScenario(rowCount: 50)
            let store = try await scenario.makeStore("Items.sqlite", version: "v2")
            let value = (scenario, store, try Data(contentsOf: store))
            made = value
            return value
        }
    }

    @Test(arguments: files("Mappings"))
    func mappingFileIsRefusedBeforeTheStoreIsTouched(_ file: String) async throws {
        let source = Self.root.appendingPathComponent("Mappings/\(file)")
        let original = try Data(contentsOf: source)
        do {
            _ = try StepMapping(jsonData: original)
        } catch {
            Self.expectClear(error, file)
        }

        let (scenario, store, bytes) = try await Self.mappingStore.get()
        let folderBefore = try FileManager.default.contentsOfDirectory(atPath: scenario.directory.url.path).sorted()
        let result = await ToolRunner.run([
            "migrate", store.path, "--model", scenario.modelURL.path, "--order", CrashScenario.order,
            "--to", "v3", "--mapping", source.path, "--quiet",
        ])
        #expect(result.status == 1, "\(file): tern migrate exited with \(result.status): \(result.standardError)")
        #expect(result.errorLines.first?.hasPrefix("error: ") == true, "\(file): \(result.standardError)")
        #expect(result.errorLines.filter { $0.hasPrefix("error:") }.count == 1, "\(file): \(result.standardError)")
        #expect(result.standardOutput.isEmpty, "\(file): \(result.standardOutput)")
        #expect(try Data(contentsOf: store) == bytes, "\(file): the store was changed")
        let folderAfter = try FileManager.default.contentsOfDirectory(atPath: scenario.directory.url.path).sorted()
        #expect(folderAfter == folderBefore, "\(file): files were left beside the store")
        #expect(try Data(contentsOf: source) == original, "\(file) was changed")
    }

    @Test func mappingCorpusCoversEachKindOfMistake() {
        let mappings = Self.files("Mappings")
        for kind in [
            "unknown-source-attribute", "unknown-destination-entity", "text-into-integer", "wrong-argument-type",
            "unknown-function", "unknown-version", "filter-syntax-error", "nested-too-deep", "invalid-utf8",
        ] {
            #expect(mappings.contains("\(kind).json"), "no \(kind) case; run Scripts/make-hostile-corpus")
        }
    }
}
