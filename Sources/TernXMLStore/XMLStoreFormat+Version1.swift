import Foundation
import TernCore
import TernFormats

extension XMLStoreFormat {
    /// Turns the elements of a version 1 document back into values, with errors naming the file
    /// and line.
    struct DecodingContext {
        let path: String

        func invalid(_ what: String, line: Int = 0) -> TernError {
            let place = line > 0 ? " (line \(line))" : ""
            return TernError(
                .unreadableStore, "the XML store is damaged: \(what)\(place); restore it from a backup", path: path)
        }

        /// The metadata in a `<database>` element's `<databaseInfo>`.
        func metadata(inDatabase root: XMLElementTree) throws(TernError) -> StoreMetadata {
            guard root.name == "database", root[attribute: "format"] == "Tern" else {
                throw TernError(
                    .unreadableStore,
                    "the file is not a Tern XML store (no <database format=\"Tern\">); open it with the right store type",
                    path: path)
            }
            guard root[attribute: "version"] == String(XMLStoreFormat.formatVersion) else {
                throw TernError(
                    .unreadableStore,
                    "the XML store uses format version \(root[attribute: "version"] ?? "?"), which this version of Tern cannot read; update Tern",
                    path: path)
            }
            guard let info = root.child(named: "databaseInfo"), let uuid = info.child(named: "UUID")?.text,
                let top = info.child(named: "metadata")?.children.first,
                case .dictionary(let dictionary) = try propertyList(from: top),
                let metadata = StoreMetadata(propertyList: dictionary, uuid: uuid)
            else {
                throw invalid("<databaseInfo> needs a <UUID> and a <metadata> dictionary with typed keys")
            }
            return metadata
        }

        /// A row from an `<object>` element.
        func row(from object: XMLElementTree) throws(TernError) -> StoreRow {
            guard let entity = object[attribute: "type"], let key = object[attribute: "pk"].flatMap({ Int64($0) }),
                let version = object[attribute: "version"].flatMap({ Int64($0) })
            else {
                throw invalid("an <object> needs a type, an integer pk and an integer version", line: object.line)
            }
            var row = StoreRow(reference: RowReference(entityName: entity, primaryKey: key), version: version)
            for element in object.children {
                guard let name = element[attribute: "name"] else {
                    throw invalid("a <\(element.name)> has no name", line: element.line)
                }
                switch (element.name, element[attribute: "kind"]) {
                case ("attribute", _): row.attributes[name] = try value(from: element)
                case ("relationship", "to-one"?):
                    let references = try references(element)
                    guard references.count == 1 else {
                        throw invalid("a to-one relationship needs exactly one reference", line: element.line)
                    }
                    row.toOne[name] = references[0]
                case ("relationship", "to-many"?): row.toMany[name] = try references(element)
                default: throw invalid("unexpected <\(element.name)> in an <object>", line: element.line)
                }
            }
            return row
        }

        // MARK: - Non public

        private func references(_ element: XMLElementTree) throws(TernError) -> [RowReference] {
            var references: [RowReference] = []
            for text in (element[attribute: "idrefs"] ?? "").split(separator: " ") {
                guard let marker = text.range(of: "/p", options: .backwards),
                    let key = Int64(text[marker.upperBound...]), marker.lowerBound > text.startIndex
                else {
                    throw invalid("a reference is not Entity/p<key>", line: element.line)
                }
                references.append(RowReference(entityName: String(text[..<marker.lowerBound]), primaryKey: key))
            }
            return references
        }

        private func text(of element: XMLElementTree) throws(TernError) -> String {
            guard element[attribute: "encoding"] == "base64" else { return element.text }
            guard let bytes = Data(base64Encoded: element.text), let text = String(data: bytes, encoding: .utf8) else {
                throw invalid("base64 text that is not UTF-8 in <\(element.name)>", line: element.line)
            }
            return text
        }

        private func value(from element: XMLElementTree) throws(TernError) -> AttributeValue {
            let text = try text(of: element)
            let value: AttributeValue? =
                switch element[attribute: "type"] {
                case "integer": Int64(text).map(AttributeValue.integer)
                case "double": Double(text).map(AttributeValue.double)
                case "decimal":
                    text == "NaN"
                        ? .decimal(.nan)
                        : Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(AttributeValue.decimal)
                case "string": .string(text)
                case "bool": text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
                case "date": Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
                case "data": Data(base64Encoded: text).map(AttributeValue.data)
                case "uuid": UUID(uuidString: text).map(AttributeValue.uuid)
                case "uri": URL(string: text).map(AttributeValue.uri)
                default: nil
                }
            guard let value else {
                throw invalid(
                    "an attribute's text does not fit its type \(element[attribute: "type"] ?? "(none)")",
                    line: element.line)
            }
            return value
        }

        private func propertyList(from element: XMLElementTree) throws(TernError) -> PropertyListValue {
            let text = try text(of: element)
            let value: PropertyListValue?
            switch element.name {
            case "string": value = .string(text)
            case "integer": value = Int64(text).map(PropertyListValue.integer)
            case "real": value = Double(text).map(PropertyListValue.real)
            case "true": value = .bool(true)
            case "false": value = .bool(false)
            case "date": value = Double(text).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
            case "data": value = Data(base64Encoded: text).map(PropertyListValue.data)
            case "array":
                var elements: [PropertyListValue] = []
                for child in element.children { elements.append(try propertyList(from: child)) }
                value = .array(elements)
            case "dict":
                guard element.children.count.isMultiple(of: 2) else {
                    throw invalid("a <dict> has a key without a value")
                }
                var dictionary: [String: PropertyListValue] = [:]
                for index in stride(from: 0, to: element.children.count, by: 2) {
                    let key = element.children[index]
                    guard key.name == "key" else { throw invalid("a <dict> entry has no <key>", line: key.line) }
                    dictionary[try self.text(of: key)] = try propertyList(from: element.children[index + 1])
                }
                value = .dictionary(dictionary)
            default: value = nil
            }
            guard let value else { throw invalid("a metadata value is malformed", line: element.line) }
            return value
        }
    }
}
