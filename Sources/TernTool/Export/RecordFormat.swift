import Foundation
import TernCore
import TernFormats

/// How `tern export` writes records, and how each value is spelled (see `docs/Export.md`).
///
/// ```swift
/// RecordFormat.json.header(entity: "Car")          // "\"Car\": ["
/// RecordFormat.jsonValue(.date(date))                // "2011-05-09T11:30:53.000Z"
/// RecordFormat.tsvField(.string("a\tb"))            // "a\\tb"
/// ```
enum RecordFormat: String, CaseIterable, Sendable {
    /// One JSON document: `{ENTITY: [RECORD…]}`.
    case json
    /// One entity's records as tab-separated lines under a header row.
    case tsv

    // MARK: - Records

    /// A row as a JSON object: `_id`, every attribute (null when missing) and every relationship.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - attributes: The entity's attributes, inherited ones included.
    ///   - relationships: The entity's relationships, inherited ones included.
    /// - Complexity: O(*n*) in the number of properties and references.
    ///   - identifier: An object's `_id`; `Entity/p<key>` by default. With another one (global
    ///     identifiers), to-many relationships that are not ordered are sorted by it, so that the
    ///     record does not depend on the store's keys.
    static func jsonRecord(
        _ row: StoreRow, attributes: [AttributeDescription], relationships: [RelationshipDescription],
        identifier: ((RowReference) -> String)? = nil
    ) -> JSONValue {
        let name = identifier ?? { $0.description }
        var members: [String: JSONValue] = ["_id": .string(name(row.reference))]
        for attribute in attributes {
            members[attribute.name] = row.attributes[attribute.name].map(jsonValue) ?? .null
        }
        for relationship in relationships {
            if relationship.isToMany {
                var names = (row.toMany[relationship.name] ?? []).map(name)
                if identifier != nil, !relationship.isOrdered { names.sort() }
                members[relationship.name] = .array(names.map { .string($0) })
            } else {
                members[relationship.name] = .string(row.toOne[relationship.name].map(name))
            }
        }
        return .object(members)
    }

    /// The members of an entity's JSON records in the order they are written (sorted by name,
    /// as `JSONEncoder` sorts keys): made once per entity, so that each record is written
    /// straight from its row.
    struct JSONMembers {
        /// One member of a record.
        enum Member {
            /// The record's `_id`.
            case id
            /// The value of the attribute at this index of ``JSONMembers/attributeNames``, null when missing.
            case attribute(Int)
            /// A relationship's destinations.
            case relationship(String, isToMany: Bool, isOrdered: Bool)
        }

        /// The members with their quoted names and colons, in the order they are written.
        let members: [(key: String, member: Member)]
        /// The attributes' names, in the order the entity lists them.
        let attributeNames: [String]

        /// The members of records of an entity with these properties.
        init(attributes: [AttributeDescription], relationships: [RelationshipDescription]) {
            var members: [String: Member] = ["_id": .id]
            for (index, attribute) in attributes.enumerated() { members[attribute.name] = .attribute(index) }
            for relationship in relationships {
                members[relationship.name] = .relationship(
                    relationship.name, isToMany: relationship.isToMany, isOrdered: relationship.isOrdered)
            }
            self.members = members.keys.sorted().map { key in
                var quoted = ""
                JSONValue.appendQuoted(key, to: &quoted)
                return (quoted + ":", members[key] ?? .id)
            }
            attributeNames = attributes.map(\.name)
        }
    }

    /// Appends a row as a JSON object, the text of
    /// ``jsonRecord(_:attributes:relationships:identifier:)`` encoded compactly, without making the object.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - members: Its entity's members.
    ///   - identifier: An object's `_id`, as in ``jsonRecord(_:attributes:relationships:identifier:)``.
    ///   - writer: The bytes to extend.
    /// - Complexity: O(*n*) in the number of properties and references.
    static func appendJSONRecord(
        _ row: StoreRow, members: JSONMembers, identifier: ((RowReference) -> String)? = nil,
        to writer: inout RecordWriter
    ) {
        appendJSONRecord(
            reference: row.reference, value: { row.attributes[members.attributeNames[$0]] }, toOne: row.toOne,
            toMany: row.toMany, members: members, identifier: identifier, to: &writer)
    }

    /// Appends a row as a JSON object, its values taken by attribute index.
    ///
    /// - Parameters:
    ///   - reference: The row's identity.
    ///   - value: The value of the attribute at an index of the members' ``JSONMembers/attributeNames``.
    ///   - toOne: The row's to-one destinations.
    ///   - toMany: The row's to-many destinations.
    ///   - members: Its entity's members.
    ///   - identifier: An object's `_id`, as in ``jsonRecord(_:attributes:relationships:identifier:)``.
    ///   - writer: The bytes to extend.
    /// - Complexity: O(*n*) in the number of properties and references.
    static func appendJSONRecord(
        reference: RowReference, value: (Int) -> AttributeValue?, toOne: [String: RowReference],
        toMany: [String: [RowReference]], members: JSONMembers, identifier: ((RowReference) -> String)?,
        to writer: inout RecordWriter
    ) {
        func appendName(_ reference: RowReference?) {
            if let identifier, let reference {
                writer.appendQuoted(identifier(reference))
            } else {
                writer.appendQuoted(reference)
            }
        }
        writer.append(ascii: "{")
        for (index, (key, member)) in members.members.enumerated() {
            if index > 0 { writer.append(ascii: ",") }
            writer.append(key)
            switch member {
            case .id: appendName(reference)
            case .attribute(let attribute): writer.appendJSON(value(attribute))
            case .relationship(let relationship, isToMany: true, let isOrdered):
                writer.append(ascii: "[")
                let destinations = toMany[relationship] ?? []
                if let identifier, !isOrdered {
                    for (index, name) in destinations.map(identifier).sorted().enumerated() {
                        if index > 0 { writer.append(ascii: ",") }
                        writer.appendQuoted(name)
                    }
                } else {
                    for (index, destination) in destinations.enumerated() {
                        if index > 0 { writer.append(ascii: ",") }
                        appendName(destination)
                    }
                }
                writer.append(ascii: "]")
            case .relationship(let relationship, isToMany: false, _):
                appendName(toOne[relationship])
            }
        }
        writer.append(ascii: "}")
    }

    /// A row as one TSV line: `_id`, then the attributes in the given order.
    static func tsvLine(_ row: StoreRow, attributes: [AttributeDescription]) -> String {
        ([tsvEscaped(row.reference.description)] + attributes.map { tsvField(row.attributes[$0.name]) })
            .joined(separator: "\t")
    }

    /// Appends a row as one TSV line and its newline: the text of ``tsvLine(_:attributes:)``.
    ///
    /// - Parameters:
    ///   - reference: The row's identity.
    ///   - count: The number of attributes.
    ///   - value: The value of the attribute at an index, in the header's order.
    ///   - writer: The bytes to extend.
    /// - Complexity: O(*n*) in the size of the values.
    static func appendTSVLine(
        reference: RowReference, count: Int, value: (Int) -> AttributeValue?, to writer: inout RecordWriter
    ) {
        writer.appendTSVEscaped(reference.entityName)
        writer.append("/p")
        writer.append(reference.primaryKey)
        for index in 0..<count {
            writer.append(ascii: "\t")
            writer.appendTSV(value(index))
        }
        writer.append(ascii: "\n")
    }

    // MARK: - Values

    /// An attribute value as JSON: numbers, Boolean, and strings for every other type.
    static func jsonValue(_ value: AttributeValue) -> JSONValue {
        switch value {
        case .integer(let number): .integer(number)
        case .double(let number): .double(number)
        case .bool(let flag): .bool(flag)
        case .date(let date): .date(date)
        default: .string(text(value))
        }
    }

    /// An attribute value as a TSV field: its text form, escaped; empty for nil.
    static func tsvField(_ value: AttributeValue?) -> String {
        guard let value else { return "" }
        switch value {
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let date): return ISO8601Text.string(from: date)
        default: return tsvEscaped(text(value))
        }
    }

    /// The text form of a value: decimal digits, base64 for bytes, upper-case UUIDs, URI strings.
    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .decimal(let number): number.description
        case .string(let string): string
        case .bool(let flag): String(flag)
        case .date(let date): ISO8601Text.string(from: date)
        case .data(let bytes): bytes.base64EncodedString()
        case .uuid(let uuid): uuid.uuidString.uppercased()
        case .uri(let url): url.absoluteString
        }
    }

    /// Text with `\`, tab, newline and carriage return written as `\\`, `\t`, `\n`, `\r`.
    static func tsvEscaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\r\n": result += "\\r\\n"
            default: result.append(character)
            }
        }
        return result
    }
}
