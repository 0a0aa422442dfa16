import Foundation

/// A recursive-descent parser for the `NSPredicate` format language.
///
/// Grammar, loosest first:
/// ```
/// or         := and (("OR" | "||") and)*
/// and        := not (("AND" | "&&") not)*
/// not        := ("NOT" | "!") not | primary
/// primary    := "(" or ")" | "TRUEPREDICATE" | "FALSEPREDICATE" | comparison
/// comparison := ("ANY" | "SOME" | "ALL" | "NONE")? expression operator options? expression
/// ```
/// Nesting is capped by ``FetchPredicate/maximumNestingDepth`` so that no input can exhaust the
/// stack.
struct PredicateParser {
    private let scalars: [Unicode.Scalar]
    private let tokens: [PredicateToken]
    private let arguments: [FetchPredicate.Argument]
    private var index = 0
    private var argumentIndex = 0
    private var depth = 0

    init(_ format: String, arguments: [FetchPredicate.Argument]) throws(TernError) {
        let scalars = Array(format.unicodeScalars.prefix(FetchPredicate.maximumFormatLength + 1))
        self.scalars = scalars
        self.arguments = arguments
        guard scalars.count <= FetchPredicate.maximumFormatLength else {
            throw Self.error(
                PredicateSyntaxError(
                    offset: FetchPredicate.maximumFormatLength, found: "more text",
                    expected: "at most \(FetchPredicate.maximumFormatLength) characters"),
                in: scalars)
        }
        var lexer = PredicateLexer(scalars)
        do {
            tokens = try lexer.tokens()
        } catch {
            throw Self.error(error, in: scalars)
        }
    }

    // MARK: - Parsing

    /// Parses the whole text as one predicate.
    mutating func parse() throws(TernError) -> FetchPredicate {
        do throws(PredicateSyntaxError) {
            let predicate = try parseOr()
            guard current.kind == .end else {
                throw unexpected(expected: "AND, OR or the end of the predicate")
            }
            guard argumentIndex == arguments.count else {
                throw PredicateSyntaxError(
                    offset: current.offset, found: "end of text",
                    expected: "a %@ or %K for each of the \(arguments.count) arguments")
            }
            return predicate
        } catch {
            throw Self.error(error, in: scalars)
        }
    }

    // MARK: - Non public

    private static func error(_ error: PredicateSyntaxError, in scalars: [Unicode.Scalar]) -> TernError {
        let prefix = String(String.UnicodeScalarView(scalars[..<min(error.offset, scalars.count)]))
        return TernError(
            .invalidPredicate, "unexpected \(error.found) at \(prefix.count): expected \(error.expected)")
    }

    private var current: PredicateToken { tokens[index] }

    private mutating func advance() {
        if index < tokens.count - 1 { index += 1 }
    }

    private func unexpected(expected: String) -> PredicateSyntaxError {
        PredicateSyntaxError(offset: current.offset, found: current.shown, expected: expected)
    }

    private mutating func consume(_ kind: PredicateToken.Kind, expected: String) throws(PredicateSyntaxError) {
        guard current.kind == kind else { throw unexpected(expected: expected) }
        advance()
    }

    private mutating func nest() throws(PredicateSyntaxError) {
        depth += 1
        guard depth <= FetchPredicate.maximumNestingDepth else {
            throw PredicateSyntaxError(
                offset: current.offset, found: current.shown,
                expected: "at most \(FetchPredicate.maximumNestingDepth) levels of nesting")
        }
    }

    private mutating func parseOr() throws(PredicateSyntaxError) -> FetchPredicate {
        var terms = [try parseAnd()]
        while current.kind == .keyword(.or) {
            advance()
            terms.append(try parseAnd())
        }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> FetchPredicate {
        var terms = [try parseNot()]
        while current.kind == .keyword(.and) {
            advance()
            terms.append(try parseNot())
        }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func parseNot() throws(PredicateSyntaxError) -> FetchPredicate {
        guard current.kind == .keyword(.not) else { return try parsePrimary() }
        advance()
        try nest()
        defer { depth -= 1 }
        return .not(try parseNot())
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> FetchPredicate {
        switch current.kind {
        case .leftParenthesis:
            advance()
            try nest()
            defer { depth -= 1 }
            let inner = try parseOr()
            try consume(.rightParenthesis, expected: "\")\", AND or OR")
            return inner
        case .keyword(.truePredicate):
            advance()
            return .constant(true)
        case .keyword(.falsePredicate):
            advance()
            return .constant(false)
        default:
            return .comparison(try parseComparison())
        }
    }

    private mutating func parseComparison() throws(PredicateSyntaxError) -> FetchPredicate.Comparison {
        let quantifier: FetchPredicate.Quantifier
        switch current.kind {
        case .keyword(.any), .keyword(.some): quantifier = .any
        case .keyword(.all): quantifier = .all
        case .keyword(.none): quantifier = .none
        default: quantifier = .direct
        }
        if quantifier != .direct { advance() }
        let lhs = try parseExpression(expected: quantifier == .direct ? "a predicate" : "a to-many key path")
        let op: FetchPredicate.Operator
        switch current.kind {
        case .comparison(let symbol): op = symbol
        case .keyword(.in): op = .in
        case .keyword(.between): op = .between
        case .keyword(.beginsWith): op = .beginsWith
        case .keyword(.endsWith): op = .endsWith
        case .keyword(.contains): op = .contains
        case .keyword(.like): op = .like
        case .keyword(.matches): op = .matches
        default:
            throw unexpected(expected: "a comparison operator such as ==, IN or BEGINSWITH")
        }
        advance()
        let options = try parseOptions()
        let rhsToken = current
        let rhs = try parseExpression(expected: "a value")
        if op == .between, case .aggregate(let bounds) = rhs, bounds.count != 2 {
            throw PredicateSyntaxError(
                offset: rhsToken.offset, found: "a collection of \(bounds.count)",
                expected: "two bounds {low, high} after BETWEEN")
        }
        return FetchPredicate.Comparison(lhs, op, rhs, options: options, quantifier: quantifier)
    }

    private mutating func parseOptions() throws(PredicateSyntaxError) -> FetchPredicate.ComparisonOptions {
        guard current.kind == .leftBracket else { return [] }
        advance()
        var options: FetchPredicate.ComparisonOptions = []
        guard case .identifier(let letters) = current.kind, !letters.isEmpty else {
            throw unexpected(expected: "comparison options such as c, d or cd")
        }
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            case "l": break  // Locale-sensitive comparison; Tern always compares this way.
            default:
                throw unexpected(expected: "comparison options made of c, d, n and l")
            }
        }
        advance()
        try consume(.rightBracket, expected: "\"]\" after comparison options")
        return options
    }

    private mutating func parseExpression(expected: String) throws(PredicateSyntaxError) -> FetchPredicate.Expression {
        let token = current
        switch token.kind {
        case .identifier(let name), .escapedIdentifier(let name):
            advance()
            return try parseKeyPath(from: [name], at: token)
        case .keyword(.self):
            advance()
            if current.kind == .dot { return try parseKeyPath(from: [], at: token) }
            return .evaluatedObject
        case .keyArgument:
            advance()
            switch try nextArgument(at: token) {
            case .keyPath(let path)?, .value(.string(let path))?:
                let components = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                return try parseKeyPath(from: components, at: token)
            default:
                throw PredicateSyntaxError(
                    offset: token.offset, found: "\"%K\"", expected: "a key path argument for %K")
            }
        case .valueArgument:
            advance()
            switch try nextArgument(at: token) {
            case .value(let value)?: return .constant(value)
            case .values(let values)?: return .aggregate(values.map { .constant($0) })
            case .keyPath(let path)?: return .keyPath(path)
            case nil: return .constant(nil)
            }
        case .variable(let name):
            advance()
            return .variable(name)
        case .leftBrace:
            return try parseAggregate()
        case .keyword(.cast):
            return try parseCast()
        default:
            if token.kind == .keyword(.null) {
                advance()
                return .constant(nil)
            }
            guard let value = constant(token) else { throw unexpected(expected: expected) }
            advance()
            return .constant(value)
        }
    }

    /// The literal value of a token, `nil` when it is no literal.
    private func constant(_ token: PredicateToken) -> AttributeValue? {
        switch token.kind {
        case .integer(let value): .integer(value)
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        case .keyword(.true): .bool(true)
        case .keyword(.false): .bool(false)
        default: nil
        }
    }

    /// Takes the next `%@`/`%K` argument; `nil` only stands for `.value(nil)`.
    private mutating func nextArgument(at token: PredicateToken) throws(PredicateSyntaxError) -> FetchPredicate
        .Argument?
    {
        guard argumentIndex < arguments.count else {
            throw PredicateSyntaxError(
                offset: token.offset, found: token.shown,
                expected: "an argument for it, but only \(arguments.count) were given")
        }
        defer { argumentIndex += 1 }
        return arguments[argumentIndex]
    }

    /// Reads `.component`s and an optional `.@operator(.key…)` after the first components.
    private mutating func parseKeyPath(from start: [String], at token: PredicateToken) throws(PredicateSyntaxError)
        -> FetchPredicate.Expression
    {
        var components = start
        while current.kind == .dot {
            advance()
            switch current.kind {
            case .identifier(let name), .escapedIdentifier(let name):
                components.append(name)
            case .collectionOperator(let name):
                components.append("@" + name)
            case .keyword:
                throw unexpected(
                    expected:
                        "a key; escape reserved words with #, as in #\(current.shown.trimmingCharacters(in: ["\""]))")
            default:
                throw unexpected(expected: "a key after \".\"")
            }
            advance()
        }
        guard let operatorIndex = components.firstIndex(where: { $0.hasPrefix("@") }) else {
            guard !components.isEmpty, components.allSatisfy({ !$0.isEmpty }) else {
                throw PredicateSyntaxError(
                    offset: token.offset, found: token.shown, expected: "a key path without empty keys")
            }
            return .keyPath(components.joined(separator: "."))
        }
        let key = components[(operatorIndex + 1)...]
        guard operatorIndex > 0, components[..<operatorIndex].allSatisfy({ !$0.isEmpty }),
            key.allSatisfy({ !$0.isEmpty && !$0.hasPrefix("@") }),
            let op = FetchPredicate.CollectionOperator(rawValue: components[operatorIndex].lowercased())
        else {
            throw PredicateSyntaxError(
                offset: token.offset, found: token.shown,
                expected: "a to-many key path followed by one of @count, @sum, @avg, @min or @max")
        }
        return .collection(
            op, keyPath: components[..<operatorIndex].joined(separator: "."),
            key: key.isEmpty ? nil : key.joined(separator: "."))
    }

    private mutating func parseAggregate() throws(PredicateSyntaxError) -> FetchPredicate.Expression {
        advance()
        try nest()
        defer { depth -= 1 }
        var elements: [FetchPredicate.Expression] = []
        if current.kind == .rightBrace {
            advance()
            return .aggregate(elements)
        }
        while true {
            elements.append(try parseExpression(expected: "a value"))
            if current.kind == .rightBrace {
                advance()
                return .aggregate(elements)
            }
            try consume(.comma, expected: "\",\" or \"}\"")
        }
    }

    /// `CAST(constant, "ClassName")`, for dates, decimals and other values without literals.
    private mutating func parseCast() throws(PredicateSyntaxError) -> FetchPredicate.Expression {
        advance()
        try consume(.leftParenthesis, expected: "\"(\" after CAST")
        let valueToken = current
        let value: AttributeValue?
        if valueToken.kind == .valueArgument {
            advance()
            guard case .value(let argument)? = try nextArgument(at: valueToken) else {
                throw PredicateSyntaxError(
                    offset: valueToken.offset, found: "\"%@\"", expected: "a single value to cast")
            }
            value = argument
        } else {
            value = constant(valueToken)
            advance()
        }
        guard let value else {
            throw PredicateSyntaxError(
                offset: valueToken.offset, found: valueToken.shown, expected: "a number or string to cast")
        }
        try consume(.comma, expected: "\",\" and a class name")
        let classToken = current
        guard case .string(let className) = classToken.kind else {
            throw unexpected(expected: "a quoted class name such as \"NSDate\"")
        }
        advance()
        try consume(.rightParenthesis, expected: "\")\" after the class name")
        guard let cast = Self.cast(value, to: className) else {
            throw PredicateSyntaxError(
                offset: valueToken.offset, found: "a value that does not convert to \(className)",
                expected: "a number for NSDate, or a string for NSDecimalNumber, NSNumber, NSUUID, NSURL or NSData")
        }
        return .constant(cast)
    }

    /// Converts a constant for `CAST`.
    private static func cast(_ value: AttributeValue, to className: String) -> AttributeValue? {
        switch (className, value) {
        case ("NSDate", .integer(let seconds)): .date(Date(timeIntervalSinceReferenceDate: Double(seconds)))
        case ("NSDate", .double(let seconds)): .date(Date(timeIntervalSinceReferenceDate: seconds))
        case ("NSDate", .date): value
        case ("NSNumber", .string(let text)):
            Int64(text).map { .integer($0) } ?? Double(text).map { .double($0) }
        case ("NSNumber", .integer), ("NSNumber", .double): value
        case ("NSDecimalNumber", .string(let text)):
            Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) }
        case ("NSDecimalNumber", .integer(let number)): .decimal(Decimal(number))
        case ("NSString", .string): value
        case ("NSUUID", .string(let text)): UUID(uuidString: text).map { .uuid($0) }
        case ("NSURL", .string(let text)): URL(string: text).map { .uri($0) }
        case ("NSData", .string(let text)): Data(base64Encoded: text).map { .data($0) }
        default: nil
        }
    }
}
