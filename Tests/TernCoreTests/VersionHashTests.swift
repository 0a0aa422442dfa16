import Foundation
import TernCore
import TernTestSupport
import Testing

/// Version hashes of fixture models built in Swift, against the values Core Data recorded.
@Suite struct VersionHashTests {
    /// The `NSManagedObjectModel_VersionHashes` of a compiled model, by version then entity.
    private func compiledHashes(_ relativePath: String) throws -> [String: [String: Data]] {
        let data = try Data(contentsOf: Fixtures.url(relativePath))
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        return try #require(plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
    }

    /// The `NSManagedObjectModel_VersionChecksums` of a compiled model, by version.
    private func compiledChecksums(_ relativePath: String) throws -> [String: String] {
        let data = try Data(contentsOf: Fixtures.url(relativePath))
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
        return try #require(plist["NSManagedObjectModel_VersionChecksums"] as? [String: String])
    }

    private func base64(_ text: String) throws -> Data { try #require(Data(base64Encoded: text)) }

    @Test(arguments: [
        (FixtureModels.sampleModel, "CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"),
        (FixtureModels.sampleModel3, "CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist"),
    ])
    func entityHashesMatchCompiledModel(model: VersionedModel, plist: String) throws {
        let expected = try compiledHashes(plist)
        #expect(Set(expected.keys) == Set(model.versions.map(\.name)))
        for version in model.versions {
            let hashes = version.model.entityVersionHashes
            #expect(hashes == expected[version.name], "version \(version.name)")
            for (entity, hash) in expected[version.name] ?? [:] {
                #expect(version.model.versionHash(ofEntity: entity) == hash, "\(version.name).\(entity)")
                #expect(hash.count == 32)
            }
        }
    }

    @Test func checksumsMatchCompiledModel() throws {
        let expected = try compiledChecksums("CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist")
        #expect(expected.count == 3)
        for version in FixtureModels.sampleModel3.versions {
            #expect(version.model.versionChecksum == expected[version.name], "version \(version.name)")
        }
    }

    @Test func storeMetadataValuesMatch() throws {
        // Tests/Fixtures/EXPECTED.md: CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite
        let sample3 = FixtureModels.sampleModel3V1
        #expect(sample3.versionHash(ofEntity: "User") == (try base64("azH06XtpHRbEyCC65V+JQI1HATvUIVHs/eHqx/5L55g=")))
        #expect(sample3.versionChecksum == "u970QgYhRHEJGIt0zQr1UhuZL2ZJ1KxBS+B7rkAx0ik=")
        #expect(
            sample3.versionHashesDigest
                == "0KLB/FnL8roMcgeszeCxnPnvYqnn4VzB2DpFP6csqrDKzLB6fyG5rrVfjY5DtnQxx4355oWuKFublPf2Jo1UWg==")

        // CoreDataStack/TestModel.sqlite, written by TestModel.xcdatamodel.
        let testModel = FixtureModels.testModel
        #expect(
            testModel.versionHash(ofEntity: "Author") == (try base64("y8H1wnTr9BRHTE41D3OxSx3TVsIngq50iIENWXGIxG0=")))
        #expect(testModel.versionHash(ofEntity: "Book") == (try base64("KSySPkjCy+6loRO7doX7xjq4AMC7wkKtF6Dy4qHgj1w=")))

        // SampleModel_V1.sqlite and SampleModel_V2.sqlite digests.
        #expect(
            FixtureModels.sampleModelV1.versionHashesDigest
                == "fACvwxty0QWritKFX3/LTtXZvI64UnFcRtP6qcjW1Yl0owr+rH+SpCvzy/uDYRpknMXbgacd3srn9wmE2KkL8Q==")
        #expect(
            FixtureModels.sampleModelV2.versionHashesDigest
                == "gA/GyOCh8sMDKPJBWGZpv2usq+rU1r4MjgwPc9tbafDh4RTvoBOjSnmanNvWopksmy/criJNqsnPcAZkTmEa7Q==")
    }

    @Test func unknownEntityHasNoHash() {
        #expect(FixtureModels.testModel.versionHash(ofEntity: "Publisher") == nil)
    }

    @Test func layoutNeutralChangesKeepTheHash() {
        var model = FixtureModels.sampleModelV1
        let before = model.entityVersionHashes
        model.entities[0].representedClassName = "Automobile"
        model.entities[0].relationships[0].deleteRule = .cascade
        model.entities[0].attributes[2].defaultValue = .string("Fiat")
        model.entities[0].fetchIndexes = [FetchIndex(name: "byMaker", elements: [.init(property: "maker")])]
        model.entities[0].userInfo = ["key": "value"]
        #expect(model.entityVersionHashes == before)
    }

    @Test func storedChangesChangeTheHash() {
        let base = FixtureModels.testModel
        var modified = base
        modified.entities[1].versionHashModifier = "2"
        #expect(modified.versionHash(ofEntity: "Book") != base.versionHash(ofEntity: "Book"))
        #expect(modified.versionHash(ofEntity: "Author") == base.versionHash(ofEntity: "Author"))

        modified = base
        modified.entities[1].attributes[0].isOptional = false
        #expect(modified.versionHash(ofEntity: "Book") != base.versionHash(ofEntity: "Book"))

        modified = base
        modified.entities[1].relationships[0].isOrdered = true
        #expect(modified.versionHash(ofEntity: "Book") != base.versionHash(ofEntity: "Book"))
        #expect(modified.versionChecksum != base.versionChecksum)
    }

    @Test func parentChangesPropagateToSubentities() {
        var model = FixtureModels.sampleModelV1
        let before = model.entityVersionHashes
        model.entities[0].isAbstract = true  // Car
        let after = model.entityVersionHashes
        #expect(after["Car"] != before["Car"])
        #expect(after["SportCar"] != before["SportCar"])
        #expect(after["ExpensiveSportCar"] != before["ExpensiveSportCar"])
        #expect(after["Person"] == before["Person"])
    }

    @Test func propertyHashesExcludeTransientAndCoverInherited() {
        let hashes = FixtureModels.sampleModelV1.propertyVersionHashes(ofEntity: "ExpensiveSportCar")
        #expect(
            hashes.keys.sorted()
                == ["color", "isLimitedEdition", "maker", "markedForDeletionAsOf", "model", "numberPlate", "owner"])
        let car = FixtureModels.sampleModelV1.propertyVersionHashes(ofEntity: "Car")
        #expect(hashes["owner"] == car["owner"])
    }

    @Test func brokenInheritanceStillHashes() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A"),
            EntityDescription(name: "C", parent: "Missing"),
        ])
        let hashes = model.entityVersionHashes
        #expect(hashes.count == 3)
        #expect(hashes["C"] == ManagedObjectModel(entities: [EntityDescription(name: "C")]).versionHash(ofEntity: "C"))
    }

    @Test func derivedAttributesHashOnlyTheirExpression() {
        func hash(_ attribute: AttributeDescription) -> Data? {
            ManagedObjectModel(entities: [EntityDescription(name: "List", attributes: [attribute])])
                .propertyVersionHashes(ofEntity: "List")[attribute.name]
        }
        let count = Attribute("itemCount", .integer64).derived(from: "count:(items)")
        let renamed = Attribute("total", .integer32).required().derived(from: "count:(items)")
        #expect(hash(count) == hash(renamed))
        #expect(hash(count) != hash(Attribute("itemCount", .integer64)))
        #expect(hash(count) != hash(Attribute("itemCount", .integer64).derived(from: "now()")))
        // Xcode's `items.@count` is Core Data's function `count:(items)`, and hashes as it
        // (SwiftGen's Model.momd, in the real-world corpus, records the hash of `oneToMany.@count`).
        #expect(hash(count) == hash(Attribute("itemCount", .integer64).derived(from: "items.@count")))
        #expect(hash(count) == hash(Attribute("itemCount", .integer64).derived(from: " items.@count ")))
        let nested = Attribute("n", .integer64).derived(from: "list.items.@count")
        #expect(hash(nested) == hash(Attribute("n", .integer64).derived(from: "count:(list.items)")))
        #expect(hash(Attribute("n", .integer64).derived(from: "items.@sum.price")) != hash(count))
    }

    @Test func selfInverseLeavesTheInverseNameOut() {
        func hash(_ relationship: RelationshipDescription) -> Data? {
            ManagedObjectModel(entities: [EntityDescription(name: "Person", relationships: [relationship])])
                .propertyVersionHashes(ofEntity: "Person")["spouse"]
        }
        let spouse = Relationship("spouse", to: "Person", inverse: "spouse")
        #expect(hash(spouse) == hash(Relationship("spouse", to: "Person")))
        #expect(
            hash(Relationship("spouse", to: "Person", inverse: "partner")) != hash(Relationship("spouse", to: "Person"))
        )
    }
}
