import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

/// Compiled models: `.mom` files and `.momd` folders written by `momc`, and `.omo` files.
@Suite struct CompiledModelTests {
    static let sampleModel = Fixtures.url("RealWorld/alemar11__CoreDataPlus/SampleModel.momd")
    static let sampleModel3 = Fixtures.url("RealWorld/alemar11__CoreDataPlus/SampleModel3.momd")
    static let swiftGen = Fixtures.url("RealWorld/SwiftGen__SwiftGen/Model.momd")

    /// The real `.momd` folders with the `.xcdatamodeld` they were compiled from, if known.
    static let compiled: [(momd: URL, source: URL?)] = [
        (sampleModel, Fixtures.sampleModel), (sampleModel3, Fixtures.sampleModel3), (swiftGen, nil),
    ]

    @Test(arguments: compiled.map(\.momd))
    func realCompiledModelsReadWithTheirRecordedHashes(momd: URL) throws {
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: momd, warnings: &warnings)
        #expect(warnings.isEmpty, "\(warnings)")
        let info = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: momd.appendingPathComponent("VersionInfo.plist")), format: nil) as? [String: Any]
        )
        let hashes = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        #expect(Set(versioned.versions.map(\.name)) == Set(hashes.keys))
        #expect(versioned.currentVersionName == info["NSManagedObjectModel_CurrentVersionName"] as? String)
        #expect(versioned.name == momd.deletingPathExtension().lastPathComponent)
        for version in versioned.versions {
            #expect(version.model.entityVersionHashes == hashes[version.name], "\(version.name)")
        }
    }

    /// A `.momd` reads to the same schema as the `.xcdatamodeld` it was compiled from.
    @Test(arguments: compiled.compactMap { $0.source == nil ? nil : $0.momd })
    func compiledVersionsMatchTheirSource(momd: URL) throws {
        let source = try #require(Self.compiled.first { $0.momd == momd }?.source)
        let compiled = try XcodeModel.readVersionedModel(at: momd)
        let original = try XcodeModel.readVersionedModel(at: source)
        #expect(compiled.versions.map(\.name) == original.versions.map(\.name))
        for version in compiled.versions {
            let model = try #require(original.version(named: version.name)?.model)
            #expect(version.model.entities.map(\.name) == model.entities.map(\.name))
            for entity in version.model.entities {
                let other = try #require(model.entity(named: entity.name))
                #expect(entity.parentName == other.parentName)
                #expect(Set(entity.attributes.map(\.name)) == Set(other.attributes.map(\.name)), "\(entity.name)")
                #expect(Set(entity.relationships.map(\.name)) == Set(other.relationships.map(\.name)), "\(entity.name)")
            }
            #expect(version.model.entityVersionHashes == model.entityVersionHashes)
        }
    }

    @Test func aSingleMomIsAModelWithOneVersion() throws {
        let mom = Self.sampleModel3.appendingPathComponent("SampleModel3_v2.mom")
        let versioned = try XcodeModel.readVersionedModel(at: mom)
        #expect(versioned.versions.map(\.name) == ["SampleModel3_v2"])
        #expect(versioned.currentVersion.model.entities.map(\.name) == ["Pet", "User"])
        #expect(try XcodeModel.readModel(contentsOf: mom) == versioned.currentVersion.model)
    }

    /// `.mom` files written by Tern's own encoder (the model cache's archive) read back equal.
    @Test func aMomEncodedFromARealModelReadsBack() throws {
        let tmp = try TemporaryDirectory()
        let source = try XcodeModel.readVersionedModel(at: Fixtures.sampleModel)
        let momd = tmp.path("SampleModel.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        for version in source.versions {
            try ModelCache.encodeArchive(version.model).write(to: momd.appendingPathComponent("\(version.name).mom"))
        }
        let compiled = try XcodeModel.readVersionedModel(at: momd, order: source.versions.map(\.name))
        for version in source.versions {
            #expect(compiled.version(named: version.name)?.model == version.model)
        }
    }

    // MARK: - VersionInfo.plist

    static func copyOfSampleModel3(in tmp: TemporaryDirectory, versionInfo: String?) throws -> URL {
        let momd = try tmp.copy(sampleModel3)
        let file = momd.appendingPathComponent("VersionInfo.plist")
        try FileManager.default.removeItem(at: file)
        if let versionInfo { try Data(versionInfo.utf8).write(to: file) }
        return momd
    }

    static func plist(current: String, hashes: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>NSManagedObjectModel_CurrentVersionName</key>
        \t<string>\(current)</string>
        \t<key>NSManagedObjectModel_VersionHashes</key>
        \t<dict>\(hashes)</dict>
        </dict>
        </plist>
        """
    }

    @Test func aRecordedHashThatDiffersIsAWarning() throws {
        let tmp = try TemporaryDirectory()
        let real = try XcodeModel.readVersionedModel(at: Self.sampleModel3)
        let petHash = try #require(real.version(named: "SampleModel3_v2")?.model.versionHash(ofEntity: "Pet"))
        let zero = Data(count: 32).base64EncodedString()
        let hashes = """
            <key>SampleModel3_v2</key><dict>
              <key>User</key><data>\(zero)</data>
              <key>Pet</key><data>\(petHash.base64EncodedString())</data>
              <key>Ghost</key><data>\(zero)</data>
            </dict>
            """
        let momd = try Self.copyOfSampleModel3(
            in: tmp, versionInfo: Self.plist(current: "SampleModel3_v3", hashes: hashes))
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: momd, warnings: &warnings)
        #expect(versioned.currentVersionName == "SampleModel3_v3")
        #expect(warnings.map(\.code) == [.versionHashMismatch, .versionHashMismatch])
        #expect(warnings.map(\.entityName) == ["Ghost", "User"])
        #expect(warnings.allSatisfy { $0.versionName == "SampleModel3_v2" })
        #expect(warnings.last?.message.contains("differs") == true)
        #expect(warnings.first?.message.contains("does not hold") == true)
        #expect(warnings.first?.path?.hasSuffix("VersionInfo.plist") == true)
    }

    @Test func versionInfoIsOptionalAndLenient() throws {
        let tmp = try TemporaryDirectory()
        let missing = try Self.copyOfSampleModel3(in: tmp, versionInfo: nil)
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: missing, warnings: &warnings)
        #expect(warnings.isEmpty)
        #expect(versioned.currentVersionName == "SampleModel3_v3")  // the last in natural order

        let other = try TemporaryDirectory()
        let corrupt = try Self.copyOfSampleModel3(in: other, versionInfo: "bplist00 not really")
        warnings = []
        let read = try XcodeModel.readVersionedModel(at: corrupt, warnings: &warnings)
        #expect(read.versions.count == 3)
        #expect(warnings.map(\.code) == [.ignoredContent])
        #expect(warnings.first?.message.contains("VersionInfo.plist") == true)
    }

    @Test func aCurrentVersionThatIsMissingIsAnError() throws {
        let tmp = try TemporaryDirectory()
        let momd = try Self.copyOfSampleModel3(in: tmp, versionInfo: Self.plist(current: "Gone", hashes: ""))
        let error = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: momd) }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.message.contains("Gone") == true)
    }

    // MARK: - .omo

    @Test func optimisedModelsAreRefusedAndTheMomBesideThemIsUsed() throws {
        let omo = Self.sampleModel.appendingPathComponent("SampleModel.omo")
        let error = #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: omo) }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.message.contains(".omo") == true && error?.message.contains(".mom file") == true)
        #expect(error?.path == omo.path)
        #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: omo) }

        // The .momd holds SampleModel.omo and SampleModel.mom: the .mom is read.
        let versioned = try XcodeModel.readVersionedModel(at: Self.sampleModel)
        #expect(versioned.currentVersionName == "SampleModel")
        #expect(versioned.versions.count == 3)

        // An .omo renamed .mom is refused the same way.
        let tmp = try TemporaryDirectory()
        let renamed = try tmp.copy(omo, as: "Renamed.mom")
        let renamedError = #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: renamed) }
        #expect(renamedError?.message.contains("momv2") == true)
    }

    @Test func aVersionWithOnlyAnOmoIsUnreadable() throws {
        let tmp = try TemporaryDirectory()
        let momd = try tmp.copy(Self.sampleModel)
        try FileManager.default.removeItem(at: momd.appendingPathComponent("SampleModel.mom"))
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: momd, warnings: &warnings)
        #expect(versioned.versions.map(\.name) == ["SampleModel2", "SampleModel3"])
        #expect(versioned.currentVersionName == "SampleModel3")
        let warning = try #require(warnings.first)
        #expect(warnings.count == 1)
        #expect(warning.code == .unreadableVersion && warning.versionName == "SampleModel")
        #expect(warning.message.contains("current version") && warning.message.contains("SampleModel3"))
        #expect(warning.message.contains(".omo"))
    }

    // MARK: - Hostile input

    @Test func brokenMomFilesAreClearErrors() throws {
        let bytes = try Data(contentsOf: Self.sampleModel3.appendingPathComponent("SampleModel3_v2.mom"))
        let elements = try Data(
            contentsOf: Fixtures.url("RealWorld/ronaldoussoren__pyobjc/DragApp_DataModel.xcdatamodel/elements"))
        let cases: [(String, Data)] = [
            ("truncated", bytes.prefix(bytes.count - 40)), ("empty", Data()), ("text", Data("<model/>".utf8)),
            ("elements", elements),
        ]
        let tmp = try TemporaryDirectory()
        for (name, data) in cases {
            let file = tmp.path("\(name).mom")
            try data.write(to: file)
            let error = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: file) }
            #expect(error?.code == .unreadableModelFile, "\(name)")
            #expect(
                error?.message.contains("compiled model cannot be read") == true, "\(name): \(error?.message ?? "")")
            #expect(error?.path == file.path)
        }
    }

    @Test func corruptedMomBytesNeverCrash() throws {
        let bytes = try Data(contentsOf: Self.sampleModel.appendingPathComponent("SampleModel2.mom"))
        var generator = SplitMix64(state: 0x30D)
        for _ in 0..<300 {
            var data = bytes
            let index = Int(generator.next() % UInt64(data.count))
            data[index] = UInt8(truncatingIfNeeded: generator.next())
            do {
                _ = try XcodeModel.compiledModel(fromArchive: data)
            } catch {
                #expect(error.code == .unreadableModelFile)
            }
        }
    }

    @Test func aMomdWithoutModelsIsAnError() throws {
        let tmp = try TemporaryDirectory()
        let momd = tmp.path("Empty.momd")
        try FileManager.default.createDirectory(at: momd, withIntermediateDirectories: true)
        let error = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: momd) }
        #expect(error?.message.contains("no .mom file") == true)
    }
}
