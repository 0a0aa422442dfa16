import Foundation

extension FetchPredicate: CustomStringConvertible {
    /// The predicate in canonical `NSPredicate` format text, which parses back to an equal predicate.
    ///
    /// Compound predicates inside others are parenthesized, keys that are reserved words are escaped
    /// with `#`, and values without literals are written with `CAST`: dates as
    /// `CAST(<seconds since 2001>, "NSDate")`, decimals as `CAST("1.5", "NSDecimalNumber")`, UUIDs, URIs
    /// and data as `CAST("…", "NSUUID")`, `"NSURL"` and `"NSData"` (Base64).
    ///
    /// ```swift
    /// let p = try FetchPredicate("not (a = 1 || b <> 2) && name beginswith[c] 'x'")
    /// print(p)  // NOT (a == 1 OR b != 2) AND name BEGINSWITH[c] "x"
    /// ```
    ///
    /// The text contains the predicate's constants: do not log it where values must stay private.
    ///
    /// - Complexity: O(*n*) in the size of the predicate.
    public var description: String {
        var text = ""
        write(to: &text, nested: false)
        return text
    }

    // MARK: - Non public

    private func write(to text: inout String, nested: Bool) {
        switch self {
        case .constant(let value):
            text += value ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .not(let operand):
            text += "NOT "
            operand.write(to: &text, nested: true)
        case .and(let terms):
            Self.write(terms, joinedBy: " AND ", empty: "TRUEPREDICATE", to: &text, nested: nested)
        case .or(let terms):
            Self.write(terms, joinedBy: " OR ", empty: "FALSEPREDICATE", to: &text, nested: nested)
        case .comparison(let comparison):
            text += comparison.description
        }
    }

    private static func write(
        _ terms: [FetchPredicate], joinedBy separator: String, empty: String, to text: inout String,
        nested: Bool
    ) {
        guard terms.count > 1 else {
            if let only = terms.first { only.write(to: &text, nested: nested) } else { text += empty }
            return
        }
        if nested { text += "(" }
        for (position, term) in terms.enumerated() {
            if position > 0 { text += separator }
            term.write(to: &text, nested: true)
        }
        if nested { text += ")" }
    }
}

extension FetchPredicate.Comparison: CustomStringConvertible {
    /// The comparison in `NSPredicate` format text, such as `ANY items.name BEGINSWITH[cd] "a"`.
    public var description: String {
        var text = quantifier == .direct ? "" : quantifier.rawValue + " "
        text += lhs.description + " " + op.rawValue
        if !options.isEmpty {
            text += "["
            if options.contains(.caseInsensitive) { text += "c" }
            if options.contains(.diacriticInsensitive) { text += "d" }
            if options.contains(.normalized) { text += "n" }
            text += "]"
        }
        return text + " " + rhs.description
    }
}

extension FetchPredicate.Expression: CustomStringConvertible {
    /// The expression in `NSPredicate` format text: `owner.name`, `"text"`, `{1, 2}`, `$LIMIT`…
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    public var description: String {
        switch self {
        case .constant(let value):
            value.map(Self.literal) ?? "nil"
        case .keyPath(let path):
            Self.escapedKeyPath(path)
        case .evaluatedObject:
            "SELF"
        case .variable(let name):
            "$" + name
        case .aggregate(let elements):
            "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .collection(let op, let path, let key):
            Self.escapedKeyPath(path) + "." + op.rawValue + (key.map { "." + Self.escapedKeyPath($0) } ?? "")
        }
    }

    // MARK: - Non public

    /// A key path with reserved words escaped by `#`.
    private static func escapedKeyPath(_ path: String) -> String {
        path.split(separator: ".", omittingEmptySubsequences: false).map { key in
            let word = String(key)
            if PredicateKeyword(word) != nil || PredicateKeyword.otherReservedWords.contains(word.uppercased()) {
                return "#" + word
            }
            return word
        }.joined(separator: ".")
    }

    /// A value as a literal or a `CAST` that the parser reads back to the same value.
    static func literal(_ value: AttributeValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .double(let number):
            number.isFinite ? String(number) : "CAST(\(quoted(String(number))), \"NSNumber\")"
        case .decimal(let number): "CAST(\(quoted(number.description)), \"NSDecimalNumber\")"
        case .string(let string): quoted(string)
        case .bool(let flag): flag ? "TRUE" : "FALSE"
        case .date(let date): "CAST(\(String(date.timeIntervalSinceReferenceDate)), \"NSDate\")"
        case .data(let data): "CAST(\(quoted(data.base64EncodedString())), \"NSData\")"
        case .uuid(let uuid): "CAST(\(quoted(uuid.uuidString)), \"NSUUID\")"
        case .uri(let url): "CAST(\(quoted(url.absoluteString)), \"NSURL\")"
        }
    }

    /// A double-quoted string literal with escapes for quotes, backslashes and control characters.
    static func quoted(_ string: String) -> String {
        var text = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\0": text += "\\0"
            default:
                if scalar.properties.generalCategory == .control {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        return text + "\""
    }
}
