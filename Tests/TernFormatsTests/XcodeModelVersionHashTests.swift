import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// Version hashes of models read from the fixtures' `.xcdatamodeld` bundles, compared with what
/// Core Data computed: the compiled `VersionInfo.plist` files and the stores' metadata.
@Suite struct XcodeModelVersionHashTests {
    /// The bundles with a compiled `VersionInfo.plist` beside them.
    static let compiledBundles: [(bundle: String, versionInfo: String)] = [
        (
            "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld",
            "CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"
        ),
        (
            "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld",
            "CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist"
        ),
    ]

    @Test(arguments: zip(compiledBundles.map(\.bundle), compiledBundles.map(\.versionInfo)))
    func everyEntityOfEveryVersionMatchesVersionInfo(bundle: String, versionInfo: String) throws {
        let versioned = try XcodeModel.readVersionedModel(at: Fixtures.url(bundle))
        let info = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: Fixtures.url(versionInfo)), format: nil)
                as? [String: Any])
        let hashes = try #require(info["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
        let checksums = info["NSManagedObjectModel_VersionChecksums"] as? [String: String] ?? [:]
        #expect(Set(hashes.keys) == Set(versioned.versions.map(\.name)))
        #expect(info["NSManagedObjectModel_CurrentVersionName"] as? String == versioned.currentVersionName)
        var compared = 0
        for version in versioned.versions {
            let expected = try #require(hashes[version.name])
            let computed = version.model.entityVersionHashes
            #expect(Set(computed.keys) == Set(expected.keys), "entities of \(version.name)")
            for (entity, hash) in expected {
                #expect(computed[entity] == hash, "\(version.name).\(entity)")
                compared += 1
            }
            if let checksum = checksums[version.name] {
                #expect(version.model.versionChecksum == checksum, "checksum of \(version.name)")
            }
        }
        #expect(compared == expectedHashCount[bundle])
    }

    /// Entity hashes in the stores' metadata (`Tests/Fixtures/EXPECTED.md`).
    @Test func storeMetadataHashesMatch() throws {
        let expected: [(bundle: URL, version: String, hashes: [String: String])] = [
            (
                Fixtures.coreDataStackModel, "TestModel",
                [
                    "Author": "y8H1wnTr9BRHTE41D3OxSx3TVsIngq50iIENWXGIxG0=",
                    "Book": "KSySPkjCy+6loRO7doX7xjq4AMC7wkKtF6Dy4qHgj1w=",
                ]
            ),
            (
                Fixtures.sampleModel, "SampleModel",
                [
                    "Car": "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=",
                    "ExpensiveSportCar": "PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=",
                    "Person": "FkJoVRtFEIrnY6orph/zLTLTIyOFCYfD4hYHyNpEtys=",
                    "SportCar": "UU7BkHpWgpn5+2hREGUWE28HVfRfpTqCOg5NRAE9UxM=",
                ]
            ),
            (
                Fixtures.sampleModel, "SampleModel2",
                [
                    "Car": "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=",
                    "LuxuryCar": "qHPFWQAQ5Oo/e9+EZ4bfv1ywlVJrhqoN4sVpxLsSGIY=",
                    "Person": "BnrmLhvRAUy2VZ2ZCAOuWPNU3Rt7p7dyKjYcDDnyE04=",
                    "SportCar": "cipVtbvNUddIdqTdj497veV93GHLZaV37FsPvpeNe4w=",
                ]
            ),
            (
                Fixtures.sampleModel3, "SampleModel3",
                [
                    "User": "azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g="
                ]
            ),
        ]
        for (bundle, versionName, hashes) in expected {
            let version = try #require(try XcodeModel.readVersionedModel(at: bundle).version(named: versionName))
            let computed = version.model.entityVersionHashes.mapValues { $0.base64EncodedString() }
            #expect(computed == hashes, "\(versionName)")
        }
        let sampleModel3 = try #require(
            try XcodeModel.readVersionedModel(at: Fixtures.sampleModel3).version(named: "SampleModel3"))
        #expect(sampleModel3.model.versionChecksum == "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=")
        #expect(
            sampleModel3.model.versionHashesDigest
                == "0KLB/FnL8roMcgeszeCxnPnvYqnn4VzB2DpFP6csqrDKzLB6fyG5rrVfjY5DtnQxx4355oWuKFublPf2Jo1UWg==")
    }

    /// How many entity hashes each `VersionInfo.plist` lists, so that no version is skipped.
    private let expectedHashCount: [String: Int] = [
        "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld": 13,
        "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld": 5,
    ]
}
