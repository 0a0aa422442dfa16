import TernCore
import Testing

@Suite struct ModelTests {
    @Test func entitiesAreSortedByName() {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "B"), EntityDescription(name: "A")])
        #expect(model.entities.map(\.name) == ["A", "B"])
        #expect(model.entity(named: "B")?.name == "B")
        #expect(model.entity(named: "C") == nil)
    }
}
