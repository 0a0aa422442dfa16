import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

@Suite struct ModelCacheFixtureTests {
    static let storePaths = Fixtures.stores.map(\.path)

    @Test(arguments: storePaths)
    func decodedHashesMatchStoreMetadata(store: String) throws {
        let blobs = try FixtureStoreReader.blobs(ofFixture: store)
        let model = try ModelCache.decode(blobs.modelCache)
        let metadata = try FixtureStoreReader.metadata(blobs.metadata)
        let expected = try #require(metadata["NSStoreModelVersionHashes"] as? [String: Data])
        #expect(Set(model.entities.map(\.name)) == Set(expected.keys))
        let hashes = model.entityVersionHashes
        for (entity, hash) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(hashes[entity] == hash, "version hash of \(entity) in \(store)")
        }
    }

    @Test func decodesSampleModel2WithoutAModelFile() throws {
        let blobs = try FixtureStoreReader.blobs(ofFixture: "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        let model = try ModelCache.decode(blobs.modelCache)
        #expect(model.entities.map(\.name) == ["Author", "Book", "Feedback", "GraphicNovel", "Page", "Writer"])

        let writer = try #require(model.entity(named: "Writer"))
        #expect(writer.isAbstract)
        #expect(writer.attributes.map(\.name) == ["age"])

        // Subentities keep only their own properties; the archive repeats the inherited ones.
        let author = try #require(model.entity(named: "Author"))
        #expect(author.parentName == "Writer")
        #expect(author.attributes.map(\.name) == ["alias", "siteURL"])
        #expect(author.uniquenessConstraints == [["alias"]])
        #expect(author.attribute(named: "siteURL")?.type == .uri)
        let books = try #require(author.relationship(named: "books"))
        #expect(books.destinationEntityName == "Book" && books.inverseName == "author")
        #expect(books.isToMany && books.deleteRule == .cascade)
        #expect(author.fetchedProperties.map(\.name) == ["favFeedbacks", "feedbacks"])
        let feedbacks = try #require(author.fetchedProperties.last)
        #expect(feedbacks.entityName == "Feedback")
        #expect(feedbacks.predicate == "authorAlias == $FETCH_SOURCE.alias")
        #expect(author.fetchedProperties.first?.userInfo == ["search": "great"])

        let book = try #require(model.entity(named: "Book"))
        let pagesCount = try #require(book.attribute(named: "pagesCount"))
        #expect(pagesCount.derivationExpression == "count:(pages)")
        #expect(pagesCount.type == .integer64)
        let cover = try #require(book.attribute(named: "cover"))
        #expect(cover.type == .transformable && cover.valueTransformerName == "CoverTransformer")
        let pages = try #require(book.relationship(named: "pages"))
        #expect(pages.minCount == 1 && pages.maxCount == 10000 && !pages.isOptional)

        let novel = try #require(model.entity(named: "GraphicNovel"))
        #expect(novel.parentName == "Book")
        #expect(novel.attributes.map(\.name) == ["isBlackAndWhite"])
        #expect(novel.attribute(named: "isBlackAndWhite")?.defaultValue == .bool(false))
        #expect(model.configurations.map(\.name) == ["SampleConfigurationV1"])
        #expect(model.configurations.first?.entityNames.count == 6)
    }

    @Test func decodesAttributeFlags() throws {
        let blobs = try FixtureStoreReader.blobs(ofFixture: "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")
        let model = try ModelCache.decode(blobs.modelCache)
        let person = try #require(model.entity(named: "Person"))
        #expect(person.attribute(named: "id")?.preservesValueInHistoryOnDeletion == true)
        #expect(person.attribute(named: "firstName")?.preservesValueInHistoryOnDeletion == false)
        let isDriving = try #require(person.attribute(named: "isDriving"))
        #expect(isDriving.isTransient && !isDriving.isOptional && isDriving.defaultValue == .bool(false))
        #expect(person.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(model.versionIdentifiers == ["1"])
    }

    @Test func decodesFetchIndexesAndRenamingIdentifiers() throws {
        let blobs = try FixtureStoreReader.blobs(ofFixture: "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite")
        let model = try ModelCache.decode(blobs.modelCache)
        let car = try #require(model.entity(named: "Car"))
        #expect(car.fetchIndexes.map(\.name) == ["byMakerAndNumberPlate"])
        #expect(car.fetchIndexes.first?.elements.map(\.property) == ["maker", "numberPlate"])
        #expect(model.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
        #expect(model.entity(named: "Car")?.renamingIdentifier == nil)
    }
}

/// The decoded cache against the Xcode model version that wrote each store.
@Suite struct ModelCacheVersusXcodeModelTests {
    static let storesWithModels = Fixtures.stores.filter { $0.model != nil }.map {
        "\($0.path)|\($0.model ?? "")|\($0.version ?? "")"
    }

    @Test(arguments: storesWithModels)
    func decodedCacheMatchesTheModelFile(fixture: String) throws {
        let parts = fixture.split(separator: "|").map(String.init)
        let blobs = try FixtureStoreReader.blobs(ofFixture: parts[0])
        let decoded = try ModelCache.decode(blobs.modelCache)
        let bundle = try XcodeModel.readVersionedModel(at: Fixtures.url(parts[1]))
        let expected = try #require(bundle.version(named: parts[2])).model

        #expect(decoded.entities.map(\.name) == expected.entities.map(\.name))
        for entity in expected.entities {
            let other = try #require(decoded.entity(named: entity.name))
            #expect(other.parentName == entity.parentName, "\(entity.name)")
            #expect(other.isAbstract == entity.isAbstract, "\(entity.name)")
            #expect(other.uniquenessConstraints == entity.uniquenessConstraints, "\(entity.name)")
            #expect(other.fetchIndexes == entity.fetchIndexes, "\(entity.name)")
            #expect(other.attributes.map(\.name) == entity.attributes.map(\.name), "\(entity.name)")
            for attribute in entity.attributes {
                let match = try #require(other.attribute(named: attribute.name))
                let place = "\(entity.name).\(attribute.name)"
                #expect(match.type == attribute.type, "\(place)")
                #expect(match.isOptional == attribute.isOptional, "\(place)")
                #expect(match.isTransient == attribute.isTransient, "\(place)")
                #expect(match.defaultValue == attribute.defaultValue, "\(place)")
                #expect(match.valueTransformerName == attribute.valueTransformerName, "\(place)")
                #expect(match.derivationExpression == attribute.derivationExpression, "\(place)")
                #expect(match.allowsExternalBinaryDataStorage == attribute.allowsExternalBinaryDataStorage, "\(place)")
                #expect(
                    match.preservesValueInHistoryOnDeletion == attribute.preservesValueInHistoryOnDeletion, "\(place)")
            }
            #expect(other.relationships.map(\.name) == entity.relationships.map(\.name), "\(entity.name)")
            for relationship in entity.relationships {
                let match = try #require(other.relationship(named: relationship.name))
                let place = "\(entity.name).\(relationship.name)"
                #expect(match.destinationEntityName == relationship.destinationEntityName, "\(place)")
                #expect(match.inverseName == relationship.inverseName, "\(place)")
                #expect(match.isToMany == relationship.isToMany, "\(place)")
                #expect(match.isOrdered == relationship.isOrdered, "\(place)")
                #expect(match.isOptional == relationship.isOptional, "\(place)")
                #expect(match.deleteRule == relationship.deleteRule, "\(place)")
                #expect(match.minCount == relationship.minCount && match.maxCount == relationship.maxCount, "\(place)")
            }
        }
        #expect(decoded.entityVersionHashes == expected.entityVersionHashes)
    }
}
