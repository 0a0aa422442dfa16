package import Foundation
package import TernCore

extension CoreDataXMLDocument {
    /// The parser limits for Core Data XML stores: 1 GB, errors ``TernError/Code/unreadableStore``.
    package static var storeLimits: XMLElementTree.Limits {
        var limits = XMLElementTree.Limits()
        limits.maximumSize = 1 << 30
        limits.code = .unreadableStore
        limits.documentName = "Core Data XML store"
        return limits
    }

    /// Reads a Core Data XML store document, leniently as Core Data reads it: the XML
    /// declaration, the document type declaration and white space between elements are
    /// ignored, an empty `<metadata>` reads as nil, and `<databaseInfo>` elements that are
    /// missing read as nil. Unknown elements are skipped.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - path: The file's path, for error messages.
    ///   - limits: The parser's limits and the error code to throw; ``storeLimits`` by default.
    /// - Throws: `limits.code` when the bytes are not well-formed, unsafe XML (entity
    ///   declarations), not a `<database>`, or when an element lacks what it needs (an
    ///   `<object>` without `type` or `id`, an `<attribute>` without `name` or `type`, a
    ///   `<relationship>` without `name`, `type` or `destination`, metadata that is not a
    ///   property list dictionary); the message names the line.
    /// - Complexity: O(*n*) in the size of the document.
    package init(data: Data, path: String, limits: XMLElementTree.Limits = CoreDataXMLDocument.storeLimits)
        throws(TernError)
    {
        let root = try XMLElementTree.parse(data, path: path, limits: limits)
        let reader = Reader(path: path, code: limits.code, documentName: limits.documentName)
        guard root.name == "database" else {
            throw TernError(
                limits.code,
                "the file is not a \(limits.documentName) (its root element is <\(root.name)>, not <database>)",
                path: path)
        }
        self.init(info: try root.child(named: "databaseInfo").map(reader.info) ?? DatabaseInfo(version: nil))
        objects.reserveCapacity(root.children.count)
        for element in root.children where element.name == "object" {
            objects.append(try reader.object(element))
        }
    }

    /// Turns elements into the document's values, with errors naming the file and line.
    struct Reader {
        let path: String
        let code: TernError.Code
        let documentName: String

        func invalid(_ what: String, line: Int) -> TernError {
            let place = line > 0 ? " (line \(line))" : ""
            return TernError(code, "the \(documentName) is damaged: \(what)\(place)", path: path)
        }

        func info(_ element: XMLElementTree) throws(TernError) -> DatabaseInfo {
            func integer(_ name: String) throws(TernError) -> Int64? {
                guard let child = element.child(named: name) else { return nil }
                guard let value = Int64(trimmed(child.text)) else {
                    throw invalid("<\(name)> is not an integer", line: child.line)
                }
                return value
            }
            var info = DatabaseInfo(version: try integer("version"), nextObjectID: try integer("nextObjectID"))
            info.uuid = element.child(named: "UUID").map { trimmed($0.text) }
            if let metadata = element.child(named: "metadata") {
                info.metadata = try self.metadata(metadata)
            }
            return info
        }

        func object(_ element: XMLElementTree) throws(TernError) -> Object {
            guard let type = element[attribute: "type"], let id = element[attribute: "id"] else {
                throw invalid("an <object> needs a type and an id", line: element.line)
            }
            var object = Object(type: type, id: id)
            for child in element.children {
                switch child.name {
                case "attribute":
                    guard let name = child[attribute: "name"], let type = child[attribute: "type"] else {
                        throw invalid("an <attribute> of object \(id) needs a name and a type", line: child.line)
                    }
                    object.attributes.append(Attribute(name: name, type: type, text: try text(of: child)))
                case "relationship":
                    guard let name = child[attribute: "name"], let type = child[attribute: "type"],
                        let destination = child[attribute: "destination"]
                    else {
                        throw invalid(
                            "a <relationship> of object \(id) needs a name, a type and a destination", line: child.line)
                    }
                    let idrefs = (child[attribute: "idrefs"] ?? "").split(whereSeparator: \.isXMLWhitespace).map(
                        String.init)
                    object.relationships.append(
                        Relationship(name: name, type: type, destination: destination, idrefs: idrefs))
                default:
                    continue
                }
            }
            return object
        }

        /// An element's text; Tern writes strings XML cannot hold in base64, marked
        /// `encoding="base64"`.
        func text(of element: XMLElementTree) throws(TernError) -> String {
            guard element[attribute: "encoding"] == "base64" else { return element.text }
            guard let bytes = base64(element.text),
                let text = String(data: bytes, encoding: .utf8)
            else {
                throw invalid("base64 text that is not UTF-8 in <\(element.name)>", line: element.line)
            }
            return text
        }

        /// The dictionary in `<metadata>`: a `<plist>` holding a `<dict>`, or nothing.
        func metadata(_ element: XMLElementTree) throws(TernError) -> [String: PropertyListValue]? {
            var top = element.children.first { $0.name == "plist" }?.children.first ?? element.child(named: "dict")
            if top == nil, !trimmed(element.text).isEmpty {
                // A property list written as escaped text rather than as elements.
                let nested = try XMLElementTree.parse(
                    Data(element.text.utf8), path: path, limits: XMLElementTree.Limits.with(code: code))
                top = nested.name == "plist" ? nested.children.first : nested
            }
            guard let top else { return nil }
            guard case .dictionary(let dictionary) = try propertyList(top) else {
                throw invalid("<metadata> holds a property list that is not a dictionary", line: top.line)
            }
            return dictionary
        }

        /// A property-list value from an element of Apple's XML property-list vocabulary.
        func propertyList(_ element: XMLElementTree) throws(TernError) -> PropertyListValue {
            let value: PropertyListValue?
            switch element.name {
            case "string": value = .string(try text(of: element))
            case "integer": value = PropertyListText.integer(trimmed(element.text)).map(PropertyListValue.integer)
            case "real": value = PropertyListText.real(trimmed(element.text)).map(PropertyListValue.real)
            case "true": value = .bool(true)
            case "false": value = .bool(false)
            case "date": value = PropertyListText.date(trimmed(element.text)).map(PropertyListValue.date)
            case "data": value = base64(element.text).map(PropertyListValue.data)
            case "array":
                var elements: [PropertyListValue] = []
                for child in element.children { elements.append(try propertyList(child)) }
                value = .array(elements)
            case "dict":
                var dictionary: [String: PropertyListValue] = [:]
                var key: String?
                for child in element.children {
                    if child.name == "key" {
                        guard key == nil else {
                            throw invalid("a <dict> has a <key> without a value", line: child.line)
                        }
                        key = try text(of: child)
                    } else if let name = key {
                        dictionary[name] = try propertyList(child)
                        key = nil
                    } else {
                        throw invalid("a <dict> has a value without a <key>", line: child.line)
                    }
                }
                guard key == nil else {
                    throw invalid("a <dict> ends with a <key> without a value", line: element.line)
                }
                value = .dictionary(dictionary)
            default: value = nil
            }
            guard let value else {
                throw invalid("a metadata value <\(element.name)> is malformed", line: element.line)
            }
            return value
        }

        /// Base64 bytes, ignoring white space and line breaks; empty text is no bytes.
        func base64(_ text: String) -> Data? {
            let compact = text.filter { !$0.isXMLWhitespace }
            return compact.isEmpty ? Data() : Data(base64Encoded: compact)
        }

        private func trimmed(_ text: String) -> String {
            text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

extension XMLElementTree.Limits {
    /// The default limits with another error code.
    static func with(code: TernError.Code) -> XMLElementTree.Limits {
        var limits = XMLElementTree.Limits()
        limits.code = code
        return limits
    }
}

extension Character {
    /// Whether the character is XML white space: space, tab, line feed or carriage return.
    var isXMLWhitespace: Bool { self == " " || self == "\t" || self == "\n" || self == "\r" || self == "\r\n" }
}
