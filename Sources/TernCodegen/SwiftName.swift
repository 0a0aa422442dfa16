/// Swift spellings of model names: identifiers, keywords in backticks, string literals.
enum SwiftName {
    // MARK: - Identifiers

    /// A valid Swift identifier for a model name: characters that cannot appear in one become
    /// `_`, a leading digit gets a `_` before it, an empty name becomes `_`.
    ///
    /// - Complexity: O(*n*) in the length of the name.
    static func identifier(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            result.unicodeScalars.append(isIdentifierScalar(scalar) ? scalar : "_")
        }
        if result.isEmpty { return "_" }
        if let first = result.unicodeScalars.first, ("0"..."9").contains(first) { result = "_" + result }
        return result
    }

    /// An identifier as it may be written in a declaration or after a dot: in backticks when it
    /// is a keyword.
    static func escaped(_ identifier: String) -> String {
        keywords.contains(identifier) ? "`\(identifier)`" : identifier
    }

    /// The identifier with its first letter upper-cased, for accessor names (`addToIngredients`).
    static func capitalized(_ identifier: String) -> String {
        guard let first = identifier.first else { return identifier }
        return first.uppercased() + identifier.dropFirst()
    }

    /// An UpperCamelCase type name from a file or bundle name: `Advanced.EvolutionDemo V1` gives
    /// `AdvancedEvolutionDemoV1`.
    static func typeName(fromFileName name: String) -> String {
        let parts = name.unicodeScalars.split { !isIdentifierScalar($0) }.map { String(String.UnicodeScalarView($0)) }
        return identifier(parts.map(capitalized).joined())
    }

    // MARK: - Literals

    /// A string literal with the text's quotes, backslashes and control characters escaped.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func literal(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Text made safe for one line of a `///` comment: line breaks become spaces.
    static func commentText(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }

    /// A multi-line raw string literal holding the text exactly (line breaks as `\n`), with
    /// enough `#`s that nothing in the text ends it or starts an escape.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func rawMultilineLiteral(_ text: String) -> String {
        var longest = 0
        var run = -1
        for character in text {
            if character == "\"" || character == "\\" {
                run = 0
            } else if character == "#", run >= 0 {
                run += 1
                longest = max(longest, run)
            } else {
                run = -1
            }
        }
        let hashes = String(repeating: "#", count: longest + 1)
        return "\(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes)"
    }

    // MARK: - Non public

    private static func isIdentifierScalar(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
    }

    /// Swift's keywords, which need backticks as names.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static",
        "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer", "do",
        "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while",
        "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try", "Type",
        "Protocol", "borrowing", "consuming", "package",
    ]
}
