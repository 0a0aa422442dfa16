import Foundation
import TernCore
import Testing

@testable import TernFormats

/// Property flags as Core Data archives them: the packed `_P` word, or separate Boolean keys.
@Suite struct ModelCacheFlagsTests {
    typealias Value = BinaryPropertyList.Value

    @Test func readsOrderedAndOptionalFromThePackedWord() throws {
        let model = try Self.decode(relationshipFields: ["_P": .integer(0x1 | 0x2 | 0x400 | 0xF0)])
        let relationship = try #require(model.entity(named: "A")?.relationship(named: "items"))
        #expect(relationship.isOrdered && relationship.isOptional && !relationship.isTransient)
    }

    @Test func readsTheBooleanKeysWhenThereIsNoPackedWord() throws {
        let model = try Self.decode(relationshipFields: ["NSIsOrdered": .bool(true), "NSIsTransient": .bool(true)])
        let relationship = try #require(model.entity(named: "A")?.relationship(named: "items"))
        #expect(relationship.isOrdered && relationship.isTransient && !relationship.isOptional)
    }

    @Test func prefersThePackedWordOverTheKeys() throws {
        let model = try Self.decode(relationshipFields: ["_P": .integer(0xF1), "NSIsOrdered": .bool(true)])
        #expect(model.entity(named: "A")?.relationship(named: "items")?.isOrdered == false)
    }

    @Test func readsAttributeFlagsAndLimits() throws {
        var writer = KeyedArchiveWriter()
        let attribute = writer.object(
            ModelCacheEncoder.attributeClasses,
            fields: [
                "NSPropertyName": writer.string("photo"), "NSAttributeType": .integer(1000), "_P": .integer(0xF3),
                "NSFlagsKey": .integer(0x1 | 0x2 | 0x4 | 0x10), "NSMaxValueName": .integer(4096),
                "NSMinValueName": .integer(1),
            ])
        let model = try Self.model(writer: &writer, properties: [(key: "photo", value: attribute)])
        let photo = try #require(model.entity(named: "A")?.attribute(named: "photo"))
        #expect(photo.allowsExternalBinaryDataStorage && photo.preservesValueInHistoryOnDeletion)
        #expect(photo.minimum == .integer(1) && photo.maximum == .integer(4096) && photo.isOptional)
    }

    // MARK: - Helpers

    static func decode(relationshipFields: [String: Value]) throws -> ManagedObjectModel {
        var writer = KeyedArchiveWriter()
        var fields = relationshipFields
        fields["NSPropertyName"] = writer.string("items")
        fields["_NSDestinationEntityName"] = writer.string("A")
        fields["NSMaxCount"] = .integer(0)
        let relationship = writer.object(ModelCacheEncoder.relationshipClasses, fields: fields)
        return try model(writer: &writer, properties: [(key: "items", value: relationship)])
    }

    static func model(writer: inout KeyedArchiveWriter, properties: [(key: String, value: Value)]) throws
        -> ManagedObjectModel
    {
        let entity = writer.object(
            ModelCacheEncoder.entityClasses,
            fields: ["NSEntityName": writer.string("A"), "NSProperties": writer.dictionary(properties)])
        let root = writer.object(
            ["NSManagedObjectModel", "NSObject"], fields: ["NSEntities": writer.dictionary([(key: "A", value: entity)])]
        )
        return try ModelCache.decodeArchive(writer.archive(root: root))
    }
}
