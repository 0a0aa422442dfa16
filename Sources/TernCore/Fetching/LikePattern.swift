import Foundation

/// A wildcard pattern of the `LIKE` operator, also used to express `BEGINSWITH`, `ENDSWITH` and
/// `CONTAINS`, with conversions to SQL `LIKE` and `GLOB` patterns for stores that query in SQL.
///
/// In `NSPredicate`'s `LIKE`, `*` matches any run of characters, `?` matches one character, and a
/// backslash makes the next character literal.
///
/// ```swift
/// let pattern = LikePattern(like: "J?n*")
/// pattern.matches("Jane")        // true
/// pattern.sqlGlobPattern         // "J?n*"
/// pattern.sqlLikePattern()       // "J_n%"
/// ```
package struct LikePattern: Sendable, Hashable {
    /// A piece of a pattern.
    package enum Element: Sendable, Hashable {
        /// Characters that match themselves.
        case literal(String)
        /// One character (`?`).
        case anyCharacter
        /// Any run of characters, including none (`*`).
        case anyString
    }

    /// The pieces of the pattern, in order.
    package var elements: [Element]

    /// Creates a pattern from its pieces.
    ///
    /// - Parameter elements: The pieces.
    package init(_ elements: [Element]) {
        self.elements = elements
    }

    /// Parses a `LIKE` pattern: `*`, `?` and backslash escapes.
    ///
    /// - Parameter pattern: The pattern as written on the right of `LIKE`.
    /// - Complexity: O(*n*) in the length of the pattern.
    package init(like pattern: String) {
        var elements: [Element] = []
        var literal = ""
        var escaping = false
        func flush() {
            if !literal.isEmpty { elements.append(.literal(literal)) }
            literal = ""
        }
        for character in pattern {
            if escaping {
                literal.append(character)
                escaping = false
                continue
            }
            switch character {
            case "\\": escaping = true
            case "*":
                flush()
                if elements.last != .anyString { elements.append(.anyString) }
            case "?":
                flush()
                elements.append(.anyCharacter)
            default: literal.append(character)
            }
        }
        if escaping { literal.append("\\") }
        flush()
        self.elements = elements
    }

    /// The pattern of `BEGINSWITH`: the prefix, then anything.
    ///
    /// - Parameter prefix: The literal prefix.
    /// - Returns: A pattern.
    package static func prefix(_ prefix: String) -> LikePattern {
        LikePattern((prefix.isEmpty ? [] : [.literal(prefix)]) + [.anyString])
    }

    /// The pattern of `ENDSWITH`: anything, then the suffix.
    ///
    /// - Parameter suffix: The literal suffix.
    /// - Returns: A pattern.
    package static func suffix(_ suffix: String) -> LikePattern {
        LikePattern([.anyString] + (suffix.isEmpty ? [] : [.literal(suffix)]))
    }

    /// The pattern of `CONTAINS` on strings: anything, the substring, anything.
    ///
    /// - Parameter substring: The literal substring.
    /// - Returns: A pattern.
    package static func substring(_ substring: String) -> LikePattern {
        LikePattern(substring.isEmpty ? [.anyString] : [.anyString, .literal(substring), .anyString])
    }

    // MARK: - SQL

    /// The pattern for SQL `LIKE … ESCAPE '<escape>'`: `%` and `_` as wildcards, with `%`, `_` and the
    /// escape character escaped in literals. SQLite's `LIKE` ignores ASCII case.
    ///
    /// - Parameter escape: The escape character, to be given in the `ESCAPE` clause.
    /// - Returns: The SQL pattern, to be bound as a value.
    /// - Complexity: O(*n*) in the length of the pattern.
    package func sqlLikePattern(escape: Character = "\\") -> String {
        elements.reduce(into: "") { text, element in
            switch element {
            case .anyCharacter: text += "_"
            case .anyString: text += "%"
            case .literal(let literal):
                for character in literal {
                    if character == "%" || character == "_" || character == escape { text.append(escape) }
                    text.append(character)
                }
            }
        }
    }

    /// The pattern for SQLite's case-sensitive `GLOB`: `*` and `?` as wildcards, with `*`, `?` and `[`
    /// in literals written as one-character classes.
    ///
    /// - Complexity: O(*n*) in the length of the pattern.
    package var sqlGlobPattern: String {
        elements.reduce(into: "") { text, element in
            switch element {
            case .anyCharacter: text += "?"
            case .anyString: text += "*"
            case .literal(let literal):
                for character in literal {
                    switch character {
                    case "*", "?", "[": text += "[\(character)]"
                    default: text.append(character)
                    }
                }
            }
        }
    }

    // MARK: - Matching

    /// Whether a whole string matches the pattern, `?` matching one character (grapheme).
    ///
    /// - Parameters:
    ///   - string: The string to match.
    ///   - options: `[c]` and `[d]` options.
    /// - Returns: `true` when the pattern matches all of `string`.
    /// - Complexity: O(*n* × *m*) in the worst case for lengths *n* and *m* of string and pattern.
    package func matches(_ string: String, options: FetchPredicate.ComparisonOptions = []) -> Bool {
        enum Piece: Equatable {
            case character(Character)
            case one, any
        }
        let fold = AttributeValue.stringOptions(options)
        func folded(_ text: String) -> String {
            fold.isEmpty ? text : text.folding(options: fold, locale: nil)
        }
        var pattern: [Piece] = []
        for element in elements {
            switch element {
            case .anyCharacter: pattern.append(.one)
            case .anyString: pattern.append(.any)
            case .literal(let literal): pattern += folded(literal).map { .character($0) }
            }
        }
        let text = Array(folded(string))
        // Greedy matching that backtracks to the last `*` only: linear for most patterns.
        var t = 0
        var p = 0
        var star: (pattern: Int, text: Int)?
        while t < text.count {
            if p < pattern.count, pattern[p] == .one || pattern[p] == .character(text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == .any {
                star = (p, t)
                p += 1
            } else if let last = star {
                p = last.pattern + 1
                t = last.text + 1
                star = (last.pattern, last.text + 1)
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == .any { p += 1 }
        return p == pattern.count
    }
}
