import Foundation
import TernCore
import Testing

@Suite struct ObjectIDTests {
    @Test func permanentIDsRoundTripThroughURIs() throws {
        let id = ObjectID(entityName: "Recipe", storeIdentifier: "6A0B1C2D-0000-4000-8000-000000000001", primaryKey: 42)
        #expect(id.uriRepresentation.absoluteString == "x-coredata://6A0B1C2D-0000-4000-8000-000000000001/Recipe/p42")
        #expect(ObjectID(uriRepresentation: id.uriRepresentation) == id)
        #expect(!id.isTemporary)
        #expect(id.rowReference == RowReference(entityName: "Recipe", primaryKey: 42))
    }

    @Test func temporaryIDsRoundTripThroughURIs() throws {
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let id = ObjectID(temporaryFor: "Recipe", identifier: uuid)
        #expect(id.uriRepresentation.absoluteString == "x-coredata:///Recipe/tE621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(ObjectID(uriRepresentation: id.uriRepresentation) == id)
        #expect(id.isTemporary)
        #expect(id.rowReference == nil)
        #expect(ObjectID(temporaryFor: "Recipe") != ObjectID(temporaryFor: "Recipe"))
    }

    @Test(arguments: [
        "https://store/Recipe/p1", "x-coredata://store/Recipe", "x-coredata://store/Recipe/q1",
        "x-coredata://store/Recipe/pNaN", "x-coredata:///Recipe/tnot-a-uuid", "x-coredata:///Recipe/p1",
    ])
    func rejectsMalformedURIs(_ text: String) throws {
        #expect(ObjectID(uriRepresentation: try #require(URL(string: text))) == nil)
    }
}
