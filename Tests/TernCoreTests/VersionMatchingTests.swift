import Foundation
import TernCore
import Testing

@Suite struct VersionMatchingTests {
    private func metadata(_ model: ManagedObjectModel) -> StoreMetadata {
        StoreMetadata(storeType: "SQLite", uuid: UUID().uuidString, versionHashes: model.entityVersionHashes)
    }

    @Test func findsTheVersionThatWroteTheStore() throws {
        let bundle = FixtureModels.sampleModel
        for version in bundle.versions {
            #expect(bundle.version(matching: metadata(version.model))?.name == version.name)
            #expect(bundle.version(matchingHashes: version.model.entityVersionHashes)?.name == version.name)
        }
        // EXPECTED.md: SampleModel_V2.sqlite was written by SampleModel2.
        let hashes = try [
            "Car": "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=",
            "LuxuryCar": "qHPFWQAQ5Oo/e9+EZ4bfv1ywlVJrhqoN4sVpxLsSGIY=",
            "Person": "BnrmLhvRAUy2VZ2ZCAOuWPNU3Rt7p7dyKjYcDDnyE04=",
            "SportCar": "cipVtbvNUddIdqTdj497veV93GHLZaV37FsPvpeNe4w=",
        ].mapValues { try #require(Data(base64Encoded: $0)) }
        #expect(bundle.version(matchingHashes: hashes)?.name == "SampleModel2")
    }

    @Test func noVersionMatchesForeignHashes() {
        let foreign = metadata(FixtureModels.testModel)
        #expect(FixtureModels.sampleModel3.version(matching: foreign) == nil)
    }

    @Test func compatibilityNeedsTheSameEntitySet() {
        let model = FixtureModels.sampleModel3V2
        var store = metadata(model)
        #expect(model.isCompatible(with: store))
        store.versionHashes["Extra"] = Data(repeating: 0, count: 32)
        #expect(!model.isCompatible(with: store))
        store = metadata(model)
        store.versionHashes.removeValue(forKey: "Pet")
        #expect(!model.isCompatible(with: store))
        #expect(!FixtureModels.sampleModel3V3.isCompatible(with: metadata(model)))
    }

    @Test func closestVersionNamesTheDifferingEntities() {
        let bundle = FixtureModels.sampleModel3
        // v3 with an extra attribute on Pet: nearest is v3, differing in Pet only.
        var edited = FixtureModels.sampleModel3V3
        edited.entities[0].attributes.append(AttributeDescription(name: "species", type: .string))
        let match = bundle.closestVersion(to: metadata(edited))
        #expect(match.version.name == "SampleModel3_v3")
        #expect(match.differingEntities == ["Pet"])
        #expect(!match.isExact)

        let exact = bundle.closestVersion(toHashes: FixtureModels.sampleModel3V1.entityVersionHashes)
        #expect(exact.version.name == "SampleModel3")
        #expect(exact.isExact)
    }

    @Test func identicalVersionsResolveToTheNewest() {
        let model = FixtureModels.testModel
        let bundle = VersionedModel(
            name: "Same", versions: [ModelVersion(name: "a", model: model), ModelVersion(name: "b", model: model)])
        #expect(bundle.version(matching: metadata(model))?.name == "b")
        #expect(bundle.closestVersion(to: metadata(model)).version.name == "b")
    }

    /// Three versions with the same schema: "a" and "c" carry the identifiers "1" and "3",
    /// "b" carries none.
    private var sameSchemaBundle: VersionedModel {
        var a = FixtureModels.testModel
        a.versionIdentifiers = ["1"]
        var b = FixtureModels.testModel
        b.versionIdentifiers = []
        var c = FixtureModels.testModel
        c.versionIdentifiers = ["3"]
        return VersionedModel(
            name: "Same",
            versions: [
                ModelVersion(name: "a", model: a), ModelVersion(name: "b", model: b), ModelVersion(name: "c", model: c),
            ])
    }

    @Test func versionIdentifiersChooseAmongIdenticalHashes() {
        let bundle = sameSchemaBundle
        for (identifiers, expected) in [(["1"], "a"), ([], "b"), (["3"], "c")] {
            var store = metadata(FixtureModels.testModel)
            store.versionIdentifiers = identifiers
            #expect(bundle.versions(matching: store).map(\.name) == [expected])
            #expect(bundle.version(matching: store)?.name == expected)
        }
    }

    @Test func identifiersNoVersionHasLeaveEveryCandidate() {
        var store = metadata(FixtureModels.testModel)
        store.versionIdentifiers = ["2"]
        #expect(sameSchemaBundle.versions(matching: store).map(\.name) == ["a", "b", "c"])
        #expect(sameSchemaBundle.version(matching: store)?.name == "c")
    }

    @Test func identifiersDoNotOverrideHashes() {
        var store = metadata(FixtureModels.sampleModel3V1)
        store.versionIdentifiers = ["1"]
        #expect(sameSchemaBundle.versions(matching: store).isEmpty)
        #expect(sameSchemaBundle.version(matching: store) == nil)
    }
}
