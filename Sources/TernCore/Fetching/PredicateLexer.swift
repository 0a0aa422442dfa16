/// A token of the predicate format language.
struct PredicateToken: Equatable {
    /// What the token is.
    enum Kind: Equatable {
        case identifier(String)
        /// An identifier written with a leading `#`, never a keyword.
        case escapedIdentifier(String)
        case keyword(PredicateKeyword)
        case integer(Int64)
        case double(Double)
        case string(String)
        case variable(String)
        /// `@count`, `@sum`…, spelled as written after the `@`.
        case collectionOperator(String)
        case valueArgument
        case keyArgument
        case comparison(FetchPredicate.Operator)
        case leftParenthesis, rightParenthesis, leftBrace, rightBrace, leftBracket, rightBracket
        case comma, dot
        case end
    }

    var kind: Kind
    /// The offset of the token's first Unicode scalar in the text.
    var offset: Int
    /// How the token is shown in error messages: its text, or its kind for literals.
    var shown: String
}

/// The reserved words of the format language. They are case-insensitive; write `#word` to use one
/// as a key.
enum PredicateKeyword: Equatable {
    case and, or, not, `in`, between, beginsWith, endsWith, contains, like, matches
    case any, some, all, none
    case null, `true`, `false`, truePredicate, falsePredicate, `self`, cast

    /// The keyword spelled `word` in any case, if it is one.
    init?(_ word: String) {
        switch word.uppercased() {
        case "AND": self = .and
        case "OR": self = .or
        case "NOT": self = .not
        case "IN": self = .in
        case "BETWEEN": self = .between
        case "BEGINSWITH": self = .beginsWith
        case "ENDSWITH": self = .endsWith
        case "CONTAINS": self = .contains
        case "LIKE": self = .like
        case "MATCHES": self = .matches
        case "ANY": self = .any
        case "SOME": self = .some
        case "ALL": self = .all
        case "NONE": self = .none
        case "NIL", "NULL": self = .null
        case "TRUE", "YES": self = .true
        case "FALSE", "NO": self = .false
        case "TRUEPREDICATE": self = .truePredicate
        case "FALSEPREDICATE": self = .falsePredicate
        case "SELF": self = .self
        case "CAST": self = .cast
        default: return nil
        }
    }

    /// Words that `NSPredicate` reserves, beyond the keywords above, and that must be escaped with
    /// `#` when printed as keys so that Core Data can read the text back.
    static let otherReservedWords: Set<String> = [
        "FIRST", "LAST", "SIZE", "ANYKEY", "SUBQUERY", "FETCH", "FUNCTION", "CASEINSENSITIVE", "CI",
        "UTI-CONFORMS-TO", "UTI-EQUALS",
    ]
}

/// Splits predicate text into tokens.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var position = 0

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    // MARK: - Tokenizing

    /// All tokens of the text, ending with ``PredicateToken/Kind/end``.
    ///
    /// - Throws: A ``PredicateSyntaxError`` at the first character that starts no token.
    mutating func tokens() throws(PredicateSyntaxError) -> [PredicateToken] {
        var tokens: [PredicateToken] = []
        while true {
            skipWhitespace()
            let token = try next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    // MARK: - Non public

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        let index = position + ahead
        return index < scalars.count ? scalars[index] : nil
    }

    private mutating func skipWhitespace() {
        while let scalar = peek(), scalar.properties.isWhitespace {
            position += 1
        }
    }

    private mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        let start = position
        guard let scalar = peek() else { return PredicateToken(kind: .end, offset: start, shown: "end of text") }
        func token(_ kind: PredicateToken.Kind, length: Int) -> PredicateToken {
            position += length
            let text = String(String.UnicodeScalarView(scalars[start..<position]))
            return PredicateToken(kind: kind, offset: start, shown: "\"\(text)\"")
        }
        let following = peek(1)
        switch scalar {
        case "(": return token(.leftParenthesis, length: 1)
        case ")": return token(.rightParenthesis, length: 1)
        case "{": return token(.leftBrace, length: 1)
        case "}": return token(.rightBrace, length: 1)
        case "[": return token(.leftBracket, length: 1)
        case "]": return token(.rightBracket, length: 1)
        case ",": return token(.comma, length: 1)
        case "=":
            switch following {
            case "=": return token(.comparison(.equalTo), length: 2)
            case "<": return token(.comparison(.lessThanOrEqualTo), length: 2)
            case ">": return token(.comparison(.greaterThanOrEqualTo), length: 2)
            default: return token(.comparison(.equalTo), length: 1)
            }
        case "!":
            if following == "=" { return token(.comparison(.notEqualTo), length: 2) }
            return token(.keyword(.not), length: 1)
        case "<":
            switch following {
            case "=": return token(.comparison(.lessThanOrEqualTo), length: 2)
            case ">": return token(.comparison(.notEqualTo), length: 2)
            default: return token(.comparison(.lessThan), length: 1)
            }
        case ">":
            if following == "=" { return token(.comparison(.greaterThanOrEqualTo), length: 2) }
            return token(.comparison(.greaterThan), length: 1)
        case "&" where following == "&": return token(.keyword(.and), length: 2)
        case "|" where following == "|": return token(.keyword(.or), length: 2)
        case "%":
            if following == "@" { return token(.valueArgument, length: 2) }
            if following == "K" { return token(.keyArgument, length: 2) }
            throw PredicateSyntaxError(
                offset: start, found: "\"%\"", expected: "%@ for a value or %K for a key path")
        case "\"", "'":
            return try string(quote: scalar)
        case "$", "@", "#":
            position += 1
            guard let word = identifier() else {
                throw PredicateSyntaxError(
                    offset: position, found: shown(peek()), expected: "a name after \"\(scalar)\"")
            }
            let kind: PredicateToken.Kind =
                scalar == "$" ? .variable(word) : scalar == "@" ? .collectionOperator(word) : .escapedIdentifier(word)
            return PredicateToken(kind: kind, offset: start, shown: "\"\(scalar)\(word)\"")
        case "." where !(following.map(Self.isDigit) ?? false):
            return token(.dot, length: 1)
        default:
            if Self.isDigit(scalar) || scalar == "." || scalar == "-" && following.map(Self.startsNumber) == true {
                return try number()
            }
            if let word = identifier() {
                if let keyword = PredicateKeyword(word) {
                    return PredicateToken(kind: .keyword(keyword), offset: start, shown: "\"\(word)\"")
                }
                return PredicateToken(kind: .identifier(word), offset: start, shown: "\"\(word)\"")
            }
            throw PredicateSyntaxError(offset: start, found: shown(scalar), expected: "a predicate")
        }
    }

    private func shown(_ scalar: Unicode.Scalar?) -> String {
        guard let scalar else { return "end of text" }
        if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
            return "character U+\(String(scalar.value, radix: 16, uppercase: true))"
        }
        return "\"\(scalar)\""
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    private static func startsNumber(_ scalar: Unicode.Scalar) -> Bool {
        isDigit(scalar) || scalar == "."
    }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar.properties.isAlphabetic
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .decimalNumber, .connectorPunctuation: true
        default: isIdentifierStart(scalar)
        }
    }

    /// Reads a name made of letters, digits and underscores that does not start with a digit.
    private mutating func identifier() -> String? {
        guard let first = peek(), Self.isIdentifierStart(first) else { return nil }
        let start = position
        while let scalar = peek(), Self.isIdentifierPart(scalar) { position += 1 }
        return String(String.UnicodeScalarView(scalars[start..<position]))
    }

    private mutating func number() throws(PredicateSyntaxError) -> PredicateToken {
        let start = position
        var text = ""
        if peek() == "-" {
            text.unicodeScalars.append("-")
            position += 1
        }
        if peek() == "0", let radixMark = peek(1),
            let radix = ["x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2][radixMark]
        {
            position += 2
            var digits = ""
            while let scalar = peek(), Self.isIdentifierPart(scalar) {
                digits.unicodeScalars.append(scalar)
                position += 1
            }
            guard let magnitude = UInt64(digits, radix: radix), magnitude <= UInt64(Int64.max) + (text.isEmpty ? 0 : 1)
            else {
                throw PredicateSyntaxError(
                    offset: start, found: "a number", expected: "an integer that fits in 64 bits")
            }
            let value = text.isEmpty ? Int64(magnitude) : Int64(truncatingIfNeeded: 0 &- magnitude)
            return PredicateToken(kind: .integer(value), offset: start, shown: "a number")
        }
        var isInteger = true
        func digits() {
            while let scalar = peek(), Self.isDigit(scalar) {
                text.unicodeScalars.append(scalar)
                position += 1
            }
        }
        digits()
        if peek() == ".", let after = peek(1), Self.isDigit(after) {
            isInteger = false
            text += "."
            position += 1
            digits()
        }
        if let e = peek(), e == "e" || e == "E" {
            let signed = peek(1) == "+" || peek(1) == "-"
            if let digit = peek(signed ? 2 : 1), Self.isDigit(digit) {
                isInteger = false
                text += "e"
                if signed, let sign = peek(1) { text.unicodeScalars.append(sign) }
                position += signed ? 2 : 1
                digits()
            }
        }
        if let scalar = peek(), Self.isIdentifierPart(scalar) {
            throw PredicateSyntaxError(offset: position, found: shown(scalar), expected: "a digit or an operator")
        }
        if isInteger, let value = Int64(text) {
            return PredicateToken(kind: .integer(value), offset: start, shown: "a number")
        }
        guard let value = Double(text) else {
            throw PredicateSyntaxError(offset: start, found: "a number", expected: "a number")
        }
        return PredicateToken(kind: .double(value), offset: start, shown: "a number")
    }

    private mutating func string(quote: Unicode.Scalar) throws(PredicateSyntaxError) -> PredicateToken {
        let start = position
        position += 1
        var value = String.UnicodeScalarView()
        while true {
            guard let scalar = peek() else {
                throw PredicateSyntaxError(
                    offset: start, found: "an unterminated string", expected: "a closing \(quote) quote")
            }
            position += 1
            if scalar == quote { break }
            guard scalar == "\\" else {
                value.append(scalar)
                continue
            }
            guard let escaped = peek() else { continue }
            position += 1
            switch escaped {
            case "n": value.append("\n")
            case "r": value.append("\r")
            case "t": value.append("\t")
            case "0": value.append("\0")
            case "\\", "\"", "'": value.append(escaped)
            case "u":
                let hex = String(String.UnicodeScalarView(scalars[position..<min(position + 4, scalars.count)]))
                guard hex.unicodeScalars.count == 4, let code = UInt32(hex, radix: 16),
                    let decoded = Unicode.Scalar(code)
                else {
                    throw PredicateSyntaxError(
                        offset: position - 2, found: "\"\\u\"", expected: "four hexadecimal digits of a Unicode scalar")
                }
                value.append(decoded)
                position += 4
            default:
                // Kept as written, so that regular expressions such as "\d+" survive.
                value.append("\\")
                value.append(escaped)
            }
        }
        return PredicateToken(kind: .string(String(value)), offset: start, shown: "a string")
    }
}

/// A syntax error at an offset in Unicode scalars, converted to a ``TernError`` by the parser.
struct PredicateSyntaxError: Error {
    var offset: Int
    var found: String
    var expected: String
}
