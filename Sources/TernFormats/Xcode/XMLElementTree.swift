package import Foundation
package import TernCore

#if canImport(FoundationXML)
import FoundationXML
#endif

/// One element of a parsed XML document, with its attributes, children and text.
///
/// Xcode's model files are small (a few hundred kilobytes at most), so they are read into a tree
/// and decoded from it rather than decoded while parsing. Other modules (the XML store) parse
/// through the same safe reader with ``parse(_:path:limits:)``.
package struct XMLElementTree: Sendable {
    /// The element's name.
    package var name: String
    /// The element's attributes by name.
    package var attributes: [String: String]
    /// The child elements, in document order.
    package var children: [XMLElementTree]
    /// The character data directly inside the element.
    package var text: String
    /// The line of the element's start tag (1-based), or 0 when unknown.
    package var line: Int

    package init(name: String, attributes: [String: String] = [:], line: Int = 0) {
        self.name = name
        self.attributes = attributes
        self.children = []
        self.text = ""
        self.line = line
    }

    /// The value of the attribute with that name.
    package subscript(attribute name: String) -> String? { attributes[name] }

    /// The children with that element name, in document order.
    package func children(named name: String) -> [XMLElementTree] {
        children.filter { $0.name == name }
    }

    /// The first child with that element name.
    package func child(named name: String) -> XMLElementTree? {
        children.first { $0.name == name }
    }
}

// MARK: - Parsing

extension XMLElementTree {
    /// What a document may be, and the error to throw when it is not.
    package struct Limits: Sendable {
        /// The deepest element nesting accepted. Model files nest five levels deep.
        package var maximumDepth = 64
        /// The largest document accepted, in bytes.
        package var maximumSize = 64 << 20
        /// The error code thrown for a malformed or unsafe document.
        package var code = TernError.Code.unreadableModelFile
        /// What the document is, for messages ("model file", "XML store").
        package var documentName = "model file"

        /// The limits for Xcode model files.
        package init() {}
    }

    /// Parses an XML document safely: no external entities, no entity declarations (which allow
    /// entity-expansion bombs), bounded nesting and size.
    ///
    /// - Parameters:
    ///   - data: The document's bytes.
    ///   - path: The file the bytes come from, for error messages.
    ///   - limits: The size and depth allowed, and the error code to throw.
    /// - Returns: The root element.
    /// - Throws: `limits.code` (``TernError/Code/unreadableModelFile`` by default) when the
    ///   document is malformed or unsafe.
    /// - Complexity: O(*n*) in the size of the document.
    package static func parse(_ data: Data, path: String, limits: Limits = Limits()) throws(TernError) -> XMLElementTree
    {
        let maximumSize = limits.maximumSize
        guard data.count <= maximumSize else {
            throw TernError(
                limits.code,
                "the file is larger than \(maximumSize >> 20) MB, too large for a \(limits.documentName)",
                path: path)
        }
        // libxml2 expands internal entities even when external ones are off, and FoundationXML
        // reports no entity declarations to its delegate: refuse them before parsing.
        if data.range(of: Data("<!ENTITY".utf8)) != nil {
            throw TernError(
                limits.code,
                "the XML declares entities (<!ENTITY>), which a \(limits.documentName) never does; refusing to expand them",
                path: path)
        }
        // FoundationXML traps on element and attribute names that are not valid UTF-8, and Tern
        // and Xcode write XML only in UTF-8: refuse anything else before parsing.
        guard String(validating: data, as: UTF8.self) != nil else {
            throw TernError(
                limits.code, "the file is not UTF-8 text; a \(limits.documentName) is UTF-8 XML", path: path)
        }
        // FoundationXML dereferences a null pointer on a processing instruction without data
        // (`<?name?>`), and the documents Tern reads hold none: refuse any `<?` after the XML
        // declaration (a truncated declaration included).
        if containsProcessingInstruction(data) {
            throw TernError(
                limits.code,
                "the XML holds a processing instruction (<?…?>) or a broken XML declaration, which a "
                    + "\(limits.documentName) never has",
                path: path)
        }
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        let builder = Builder(maximumDepth: limits.maximumDepth)
        parser.delegate = builder
        let finished = parser.parse()
        if let failure = builder.failure {
            throw TernError(limits.code, failure, path: path)
        }
        if !finished || builder.errorLine != nil || parser.parserError != nil {
            let line = builder.errorLine ?? parser.lineNumber
            let fix = limits.code == .unreadableModelFile ? "fix or re-save it in Xcode" : "restore it from a backup"
            throw TernError(
                limits.code, "the file is not well-formed XML (error near line \(line)); \(fix)", path: path)
        }
        guard let root = builder.root else {
            throw TernError(limits.code, "the file holds no XML element", path: path)
        }
        return root
    }

    /// Whether `<?` occurs anywhere but in the XML declaration that may open the document.
    private static func containsProcessingInstruction(_ data: Data) -> Bool {
        let opening = Data("<?".utf8)
        var body = data[...]
        let leading = body.prefix { [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        // A declaration is `<?xml` and white space: `<?xml?>` is a processing instruction
        // without data, the very thing FoundationXML crashes on. Its pseudo-attributes (version,
        // encoding, standalone) hold only the bytes `isDeclarationByte` allows; anything else,
        // such as a `<` before the first `?>`, is a broken declaration whose `?>` may close a
        // later processing instruction.
        let declaration = body.dropFirst(leading.count)
        if declaration.starts(with: Data("<?xml".utf8)),
            let next = declaration.dropFirst(5).first, [0x20, 0x09, 0x0A, 0x0D].contains(next),
            let end = declaration.range(of: Data("?>".utf8)),
            declaration[declaration.startIndex + 5..<end.lowerBound].allSatisfy(isDeclarationByte)
        {
            body = body[end.upperBound...]
        }
        return body.range(of: opening) != nil
    }

    /// Whether a byte may appear inside an XML declaration: letters, digits, white space, `=`,
    /// quotes, `.`, `_` and `-`.
    private static func isDeclarationByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: "="), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// Collects elements into a tree while the parser reads.
    private final class Builder: NSObject, XMLParserDelegate {
        let maximumDepth: Int
        var stack: [XMLElementTree] = []
        var root: XMLElementTree?
        /// Why the builder stopped the parser, if it did.
        var failure: String?
        /// The line of the first syntax error the parser reported.
        var errorLine: Int?

        init(maximumDepth: Int) {
            self.maximumDepth = maximumDepth
        }

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            guard failure == nil else { return }
            guard stack.count < maximumDepth else {
                failure = "the XML nests elements more than \(maximumDepth) levels deep (line \(parser.lineNumber))"
                parser.abortParsing()
                return
            }
            stack.append(XMLElementTree(name: elementName, attributes: attributeDict, line: parser.lineNumber))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?
        ) {
            guard failure == nil, let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard failure == nil, !stack.isEmpty else { return }
            stack[stack.count - 1].text += string
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if errorLine == nil { errorLine = parser.lineNumber }
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            nil
        }
    }
}

// MARK: - Writing

extension XMLElementTree {
    /// Escapes text for an XML attribute or element: markup characters and the whitespace that
    /// attribute normalisation would change become references. Characters XML 1.0 cannot hold
    /// at all become U+FFFD: check ``isRepresentable(_:)`` first where they must survive.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    package static func escape(_ value: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "\n": escaped += "&#10;"
            case "\r": escaped += "&#13;"
            case "\t": escaped += "&#9;"
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": escaped += "\u{FFFD}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether XML 1.0 can hold the text at all: it has no way, not even a character reference,
    /// to hold NUL, the other C0 controls but tab, line feed and carriage return, or U+FFFE and U+FFFF.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    package static func isRepresentable(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            switch scalar {
            case "\t", "\n", "\r": false
            case "\u{0}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": true
            default: false
            }
        }
    }
}
