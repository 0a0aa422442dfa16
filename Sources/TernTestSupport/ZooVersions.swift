public import TernCore

/// A zoo whose `Dog` leaves the `Animal` tree that relationships point into: v1 has `Dog` and
/// `Cat` as animals; v2 moves `Dog` out, as a root of its own or under `Pet`, so the links to
/// dogs must be dropped while the dogs stay.
///
/// ```swift
/// let model = try ZooVersions.model(dogUnderPet: false)
/// _ = try await store.save(StoreChangeSet(inserted: ZooVersions.rows))
/// ```
public enum ZooVersions {
    /// The two versions.
    ///
    /// - Parameter dogUnderPet: Whether v2 puts `Dog` under `Pet` (else it is a root of its own).
    /// - Returns: The versioned model.
    /// - Throws: `TernError` if the model is invalid (it is not).
    public static func model(dogUnderPet: Bool) throws -> VersionedModel {
        try VersionedModel("Zoo") {
            for (version, moved) in [("v1", false), ("v2", true)] {
                ModelVersion(version) {
                    Entity("Animal") {
                        Attribute("name", .string)
                        Relationship("zoos", to: "Zoo", inverse: "animals").toMany()
                        Relationship("home", to: "Zoo", inverse: "residents")
                        Relationship("fans", to: "Keeper", inverse: "favourite").toMany()
                    }
                    Entity("Cat", parent: "Animal") { Attribute("lives", .integer16) }
                    Entity("Dog", parent: moved ? (dogUnderPet ? "Pet" : nil) : "Animal") {
                        if moved && !dogUnderPet { Attribute("name", .string) }
                        Attribute("bark", .string)
                    }
                    Entity("Pet") { Attribute("name", .string) }
                    Entity("Keeper") {
                        Attribute("name", .string)
                        Relationship("favourite", to: "Animal", inverse: "fans")
                    }
                    Entity("Zoo") {
                        Attribute("name", .string)
                        Attribute("residentCount", .integer64).derived(from: "residents.@count")
                        Relationship("animals", to: "Animal", inverse: "zoos").toMany()
                        Relationship("residents", to: "Animal", inverse: "home").toMany(ordered: true)
                    }
                }
            }
        }
    }

    /// The v1 rows: dogs 3 and 4 are in both zoos' animals and residents, and a keeper's favourite.
    public static let rows: [StoreRow] = {
        let animals: [(entity: String, key: Int, name: String, zoos: [Int], home: Int?, fans: [Int])] = [
            ("Animal", 1, "gnu", [1], 1, []), ("Cat", 2, "tom", [1], 1, [2]), ("Dog", 3, "rex", [1, 2], 1, [1]),
            ("Dog", 4, "fido", [1], 1, []), ("Cat", 5, "kit", [2], 2, []),
        ]
        var rows = animals.map { animal in
            StoreRow(
                reference: Self.ref(animal.entity, animal.key), attributes: ["name": .string(animal.name)],
                toOne: animal.home.map { ["home": Self.ref("Zoo", $0)] } ?? [:],
                toMany: [
                    "zoos": animal.zoos.map { Self.ref("Zoo", $0) }, "fans": animal.fans.map { Self.ref("Keeper", $0) },
                ])
        }
        let members = { (keys: [Int]) in
            keys.map { key in Self.ref(animals.first { $0.key == key }?.entity ?? "", key) }
        }
        rows += [
            StoreRow(
                reference: Self.ref("Zoo", 1), attributes: ["name": .string("north")],
                toMany: ["animals": members([1, 2, 3, 4]), "residents": members([3, 1, 4, 2])]),
            StoreRow(
                reference: Self.ref("Zoo", 2), attributes: ["name": .string("south")],
                toMany: ["animals": members([3, 5]), "residents": members([5])]),
            StoreRow(
                reference: Self.ref("Keeper", 1), attributes: ["name": .string("ann")],
                toOne: ["favourite": Self.ref("Dog", 3)]),
            StoreRow(
                reference: Self.ref("Keeper", 2), attributes: ["name": .string("bo")],
                toOne: ["favourite": Self.ref("Cat", 2)]),
            StoreRow(reference: Self.ref("Pet", 1), attributes: ["name": .string("goldie")]),
        ]
        return rows
    }()

    /// A reference to a row.
    static func ref(_ entity: String, _ key: Int) -> RowReference {
        RowReference(entityName: entity, primaryKey: Int64(key))
    }
}
