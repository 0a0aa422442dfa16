package import Foundation
package import TernCore

extension CoreDataXMLDocument {
    /// The document as Core Data writes it: the XML declaration (`standalone="yes"`), the
    /// document type declaration, elements indented by four spaces, the metadata property list
    /// laid out as Core Foundation writes it inside `<plist version="1.0">`, empty elements
    /// written with an end tag, and no line feed after `</database>`.
    ///
    /// Texts are written as they are, escaped: `&`, `<` and `>` in element text (and a
    /// carriage return as `&#13;`, which a parser would otherwise turn into a line feed), and
    /// also quotes, tabs and line feeds in attribute values. A string XML cannot hold at all
    /// (NUL and other control characters) is written in base64 and marked
    /// `encoding="base64"`, Tern's extension, which ``init(data:path:limits:)`` reads back.
    ///
    /// - Parameter code: The error code thrown; ``TernError/Code/unwritableStore`` by default.
    /// - Returns: The document in UTF-8.
    /// - Throws: `code` when a name, id, type or metadata key holds characters XML cannot hold,
    ///   or a metadata date is too far from 2001 to have a calendar date.
    /// - Complexity: O(*n*) in the size of the document.
    package func encoded(code: TernError.Code = .unwritableStore) throws(TernError) -> Data {
        var writer = Writer(code: code)
        writer.xml.reserveCapacity(4_096 + objects.count * 256)
        writer.xml += "<?xml version=\"1.0\" standalone=\"yes\"?>\n" + Self.doctype + "\n\n<database>\n"
        try writer.append(info)
        for object in objects { try writer.append(object) }
        writer.xml += "</database>"
        return Data(writer.xml.utf8)
    }

    /// Builds the document's text.
    struct Writer {
        let code: TernError.Code
        var xml = ""

        mutating func append(_ info: DatabaseInfo) throws(TernError) {
            xml += "    <databaseInfo>\n"
            if let version = info.version { xml += "        <version>\(version)</version>\n" }
            if let uuid = info.uuid { xml += "        <UUID>\(try text(uuid, "the UUID"))</UUID>\n" }
            if let next = info.nextObjectID { xml += "        <nextObjectID>\(next)</nextObjectID>\n" }
            if let metadata = info.metadata {
                xml += "        <metadata>\n            <plist version=\"1.0\">\n"
                try appendPropertyList(.dictionary(metadata), level: 4)
                xml += "            </plist>\n        </metadata>\n"
            } else {
                xml += "        <metadata></metadata>\n"
            }
            xml += "    </databaseInfo>\n"
        }

        mutating func append(_ object: Object) throws(TernError) {
            let what = "object \(object.id)"
            xml += "    <object type=\"\(try attribute(object.type, "the entity of \(what)"))\""
            xml += " id=\"\(try attribute(object.id, "an object id"))\">"
            guard !object.attributes.isEmpty || !object.relationships.isEmpty else {
                xml += "</object>\n"
                return
            }
            xml += "\n"
            for element in object.attributes {
                xml += "        <attribute name=\"\(try attribute(element.name, "an attribute name of \(what)"))\""
                xml += " type=\"\(try attribute(element.type, "an attribute type of \(what)"))\""
                if XMLElementTree.isRepresentable(element.text) {
                    xml += ">" + CoreDataXMLDocument.escapedText(element.text)
                } else {
                    xml += " encoding=\"base64\">" + Data(element.text.utf8).base64EncodedString()
                }
                xml += "</attribute>\n"
            }
            for element in object.relationships {
                xml += "        <relationship name=\"\(try attribute(element.name, "a relationship name of \(what)"))\""
                xml += " type=\"\(try attribute(element.type, "a relationship type of \(what)"))\""
                xml += " destination=\"\(try attribute(element.destination, "a destination of \(what)"))\""
                if !element.idrefs.isEmpty {
                    xml +=
                        " idrefs=\"\(try attribute(element.idrefs.joined(separator: " "), "the idrefs of \(what)"))\""
                }
                xml += "></relationship>\n"
            }
            xml += "    </object>\n"
        }

        /// Appends a property-list value at an element nesting level (4 for the root of
        /// `<metadata><plist>`), laid out as Core Foundation writes property lists and
        /// `NSXMLDocument` indents them: Core Foundation's tab indentation survives inside
        /// `<data>`, whose base64 lines are `76 - 8 × depth` characters long.
        mutating func appendPropertyList(_ value: PropertyListValue, level: Int) throws(TernError) {
            let indent = String(repeating: " ", count: 4 * level)
            switch value {
            case .string(let text):
                xml += indent + "<string" + stringContent(text) + "</string>\n"
            case .integer(let number): xml += indent + "<integer>\(number)</integer>\n"
            case .real(let number): xml += indent + "<real>" + PropertyListText.text(ofReal: number) + "</real>\n"
            case .bool(let flag): xml += indent + (flag ? "<true/>\n" : "<false/>\n")
            case .date(let date):
                guard let text = PropertyListText.text(ofDate: date) else {
                    throw TernError(
                        code,
                        "a metadata date is too far from 2001 to be written as a calendar date; remove or correct it")
                }
                xml += indent + "<date>" + text + "</date>\n"
            case .data(let bytes):
                let depth = level - 4
                let tabs = String(repeating: "\t", count: depth)
                let width = 76 - 8 * min(depth, 8)
                xml += indent + "<data>\n"
                let base64 = Array(bytes.base64EncodedString().utf8)
                for start in stride(from: 0, to: base64.count, by: width) {
                    xml +=
                        tabs + String(decoding: base64[start..<min(start + width, base64.count)], as: UTF8.self) + "\n"
                }
                xml += tabs + "</data>\n"
            case .array(let elements):
                guard !elements.isEmpty else {
                    xml += indent + "<array></array>\n"
                    return
                }
                xml += indent + "<array>\n"
                for element in elements { try appendPropertyList(element, level: level + 1) }
                xml += indent + "</array>\n"
            case .dictionary(let dictionary):
                guard !dictionary.isEmpty else {
                    xml += indent + "<dict></dict>\n"
                    return
                }
                xml += indent + "<dict>\n"
                for (key, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                    xml += indent + "    <key" + stringContent(key) + "</key>\n"
                    try appendPropertyList(element, level: level + 1)
                }
                xml += indent + "</dict>\n"
            }
        }

        /// `>` and the escaped text, or ` encoding="base64">` and base64 for text XML cannot hold.
        private func stringContent(_ text: String) -> String {
            XMLElementTree.isRepresentable(text)
                ? ">" + CoreDataXMLDocument.escapedText(text)
                : " encoding=\"base64\">" + Data(text.utf8).base64EncodedString()
        }

        private func attribute(_ value: String, _ what: String) throws(TernError) -> String {
            XMLElementTree.escape(try representable(value, what))
        }

        private func text(_ value: String, _ what: String) throws(TernError) -> String {
            CoreDataXMLDocument.escapedText(try representable(value, what))
        }

        private func representable(_ value: String, _ what: String) throws(TernError) -> String {
            guard XMLElementTree.isRepresentable(value) else {
                throw TernError(code, "\(what) holds characters XML cannot hold (NUL or other control characters)")
            }
            return value
        }
    }

    /// Element text escaped as `NSXMLDocument` escapes it (`&`, `<`, `>`), and a carriage
    /// return as a character reference so that it is not read back as a line feed.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func escapedText(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x0D }) else { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\r": escaped += "&#13;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
