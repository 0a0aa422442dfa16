import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

/// Xcode 3 model versions: `.xcdatamodel` folders with `elements` and `layout`, no `contents`.
@Suite struct LegacyModelTests {
    static let dragApp = Fixtures.url("RealWorld/ronaldoussoren__pyobjc/DragApp_DataModel.xcdatamodel")
    static let outlineEdit = Fixtures.url("RealWorld/ronaldoussoren__pyobjc/MyDocument.xcdatamodel")

    /// Real Xcode 3 models with the store they wrote, from the corpus (present once the corpus
    /// helper's fixtures are merged): model, store.
    static let modelsWithStores: [(model: String, store: String)] = [
        (
            "RealWorld/magicalpanda__MagicalRecord/Recipes.xcdatamodeld",
            "RealWorld/magicalpanda__MagicalRecord/Recipes.sqlite"
        ),
        (
            "RealWorld/RestKit__RestKit/RKTwitterCoreData.xcdatamodel",
            "RealWorld/RestKit__RestKit/RKSeedDatabase.sqlite"
        ),
    ].filter { FileManager.default.fileExists(atPath: Fixtures.url($0.1).path) }

    @Test func readsAnXcode3Version() throws {
        var warnings: [ModelReadingWarning] = []
        let model = try XcodeModel.readModel(contentsOf: Self.dragApp, warnings: &warnings)
        #expect(warnings.isEmpty)
        #expect(model.entities.map(\.name) == ["Club", "Person"])
        let club = try #require(model.entity(named: "Club"))
        #expect(club.representedClassName == nil)
        let name = try #require(club.attribute(named: "name"))
        #expect(name.type == .string && name.isOptional && name.defaultValue == .string("Club Name"))
        let people = try #require(club.relationship(named: "people"))
        #expect(people.destinationEntityName == "Person" && people.inverseName == "clubs")
        #expect(people.isToMany && people.maxCount == 0 && people.deleteRule == .nullify)
        let person = try #require(model.entity(named: "Person"))
        #expect(person.relationship(named: "clubs")?.inverseName == "people")

        let notes = try XcodeModel.readModel(contentsOf: Self.outlineEdit)
        let note = try #require(notes.entity(named: "Note"))
        #expect(note.representedClassName == "Note")
        let parent = try #require(note.relationship(named: "parent"))
        #expect(!parent.isToMany && parent.maxCount == 1 && parent.destinationEntityName == "Note")
        let children = try #require(note.relationship(named: "children"))
        #expect(children.isToMany && children.deleteRule == .cascade && children.inverseName == "parent")
        #expect(notes.entity(named: "Priority")?.attribute(named: "value")?.type == .integer16)
    }

    @Test func theElementsFileAndItsFolderReadAlike() throws {
        let fromFolder = try XcodeModel.readModel(contentsOf: Self.dragApp)
        let fromFile = try XcodeModel.readModel(contentsOf: Self.dragApp.appendingPathComponent("elements"))
        #expect(fromFolder == fromFile)
        let single = try XcodeModel.readVersionedModel(at: Self.dragApp)
        #expect(single.versions.map(\.name) == ["DragApp_DataModel"])
    }

    /// An Xcode 3 version and the `contents` Xcode writes for it give the same model and hashes:
    /// write the model read from `elements` as `contents` and read that back.
    @Test func readsAsItsConvertedContents() throws {
        for folder in [Self.dragApp, Self.outlineEdit] {
            let legacy = try XcodeModel.readModel(contentsOf: folder)
            let converted = try XcodeModel.model(fromContents: Data(XcodeModel.contentsXML(for: legacy).utf8))
            #expect(converted.entityVersionHashes == legacy.entityVersionHashes)
            #expect(converted.entities.map(\.name) == legacy.entities.map(\.name))
        }
    }

    @Test(arguments: modelsWithStores.map(\.model))
    func hashesMatchTheStoreTheModelWrote(model: String) throws {
        let store = try #require(Self.modelsWithStores.first { $0.model == model }?.store)
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: Fixtures.url(model), warnings: &warnings)
        #expect(warnings.filter { $0.code == .unreadableVersion }.isEmpty)
        let metadata = try FixtureStoreReader.metadata(ofStoreAt: Fixtures.url(store))
        let expected = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        let hashes = versioned.currentVersion.model.entityVersionHashes
        #expect(Set(hashes.keys) == Set(expected.keys))
        for (entity, hash) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(hashes[entity] == hash, "version hash of \(entity) in \(store)")
        }
    }

    @Test func aBundleMayMixXcode3AndModernVersions() throws {
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Clubs.xcdatamodeld")
        let old = bundle.appendingPathComponent("Clubs.xcdatamodel")
        try FileManager.default.createDirectory(at: old, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.dragApp.appendingPathComponent("elements"), to: old.appendingPathComponent("elements"))
        let new = bundle.appendingPathComponent("Clubs 2.xcdatamodel")
        try FileManager.default.createDirectory(at: new, withIntermediateDirectories: true)
        let legacy = try XcodeModel.readModel(contentsOf: Self.dragApp)
        var changed = legacy
        changed.entities[0].attributes.append(AttributeDescription(name: "founded", type: .date))
        try Data(XcodeModel.contentsXML(for: changed).utf8).write(to: new.appendingPathComponent("contents"))

        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
        #expect(warnings.isEmpty)
        #expect(versioned.versions.map(\.name) == ["Clubs", "Clubs 2"])
        #expect(versioned.currentVersionName == "Clubs 2")
        #expect(versioned.version(named: "Clubs")?.model == legacy)
        #expect(versioned.currentVersion.model.entity(named: "Club")?.attribute(named: "founded") != nil)
    }

    // MARK: - Hostile input

    static func elementsBytes() throws -> Data {
        try Data(contentsOf: dragApp.appendingPathComponent("elements"))
    }

    @Test func truncatedOrForeignElementsAreClearErrors() throws {
        let bytes = try Self.elementsBytes()
        let mom = try ModelCache.encodeArchive(XcodeModel.readModel(contentsOf: Self.dragApp))
        let cases: [(Data, String)] = [
            (bytes.prefix(bytes.count / 2), "cannot be read"),
            (Data(), "cannot be read"),
            (Data("bplist00".utf8), "cannot be read"),
            (Data("<?xml version=\"1.0\"?><model/>".utf8), "cannot be read"),
            (mom, "not an XDPMModel"),
        ]
        for (data, phrase) in cases {
            var warnings: [ModelReadingWarning] = []
            let error = #expect(throws: TernError.self) {
                try XcodeModel.model(fromElements: data, path: "elements", warnings: &warnings)
            }
            #expect(error?.code == .unreadableModelFile)
            #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "")")
            #expect(error?.path == "elements")
        }
    }

    /// Every one-byte corruption of a real `elements` file is read or refused with a TernError.
    @Test func corruptedBytesNeverCrash() throws {
        let bytes = try Self.elementsBytes()
        var generator = SplitMix64(state: 0xE1E)
        for _ in 0..<300 {
            var data = bytes
            let index = Int(generator.next() % UInt64(data.count))
            data[index] = UInt8(truncatingIfNeeded: generator.next())
            var warnings: [ModelReadingWarning] = []
            do {
                _ = try XcodeModel.model(fromElements: data, warnings: &warnings)
            } catch {
                #expect([.unreadableModelFile, .invalidModel].contains(error.code))
            }
        }
    }
}
