import Foundation
import TernCore

extension ValueExpression {
    // MARK: - Parsing

    /// Parses an expression from text.
    ///
    /// ```swift
    /// let e = try ValueExpression(#"concat(uppercase($source.code), "-", string($source.number))"#)
    /// ```
    ///
    /// The parser checks the syntax, the function names and their number of arguments; key paths
    /// and types are checked against the models by ``MappingModel/validate(source:destination:otherPasses:)``.
    ///
    /// - Parameter text: The expression's text.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidExpression`` and the
    ///   ``MigrationError/position`` of the problem: a syntax error, an unknown function, a wrong
    ///   number of arguments, text longer than ``maximumLength`` or nested deeper than
    ///   ``maximumNestingDepth``.
    /// - Complexity: O(*n*) in the length of the text.
    public init(_ text: String) throws(MigrationError) {
        self = try Self.parsedWithPositions(text).expression
    }

    /// Parses text and gives the character offset of each node of the tree, in pre-order (a node,
    /// then its operands left to right): where type errors are reported.
    static func parsedWithPositions(_ text: String) throws(MigrationError) -> (
        expression: ValueExpression, positions: [Int]
    ) {
        guard text.count <= Self.maximumLength else {
            throw MigrationError(
                .invalidExpression,
                "The expression is \(text.count) characters long; the limit is \(Self.maximumLength)")
        }
        var parser = ExpressionParser(tokens: try ExpressionLexer.tokens(of: text))
        let expression = try parser.parseAll()
        return (expression, parser.positions)
    }

    /// The text of a literal that the parser reads back as the same value where it can.
    static func literalText(_ value: AttributeValue?) -> String {
        switch value {
        case nil: return "nil"
        case .integer(let number): return String(number)
        case .double(let number):
            guard number.isFinite else { return "double(\(quoted(String(number))))" }
            let text = String(number)
            return text.contains(".") || text.contains("e") ? text : text + ".0"
        case .decimal(let number): return "number(\(quoted(number.description)))"
        case .string(let text): return quoted(text)
        case .bool(let flag): return flag ? "true" : "false"
        case .date(let date): return "date(\(literalText(.double(date.timeIntervalSinceReferenceDate))))"
        case .data(let data): return quoted(data.base64EncodedString())
        case .uuid(let uuid): return quoted(uuid.uuidString)
        case .uri(let url): return quoted(url.absoluteString)
        }
    }

    /// A string literal in double quotes with the escapes the lexer reads.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for character in text {
            switch character {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            default: result.append(character)
            }
        }
        return result + "\""
    }
}

/// A token of the expression language, with its character offset.
struct ExpressionToken: Equatable {
    /// A token's kind and contents.
    enum Kind: Equatable {
        case number(AttributeValue)
        case string(String)
        case identifier(String)
        case source
        case symbol(Character)
        case end
    }

    var kind: Kind
    var position: Int
}

/// Splits expression text into tokens.
enum ExpressionLexer {
    /// The tokens of a text, ending with `.end`.
    static func tokens(of text: String) throws(MigrationError) -> [ExpressionToken] {
        let characters = Array(text)
        var tokens: [ExpressionToken] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let start = index
            if character.isWhitespace {
                index += 1
            } else if character.isASCII, character.isNumber {
                tokens.append(ExpressionToken(kind: .number(try number(characters, &index)), position: start))
            } else if character == "\"" || character == "'" {
                tokens.append(ExpressionToken(kind: .string(try string(characters, &index)), position: start))
            } else if character == "$" {
                index += 1
                let name = identifier(characters, &index)
                guard name == "source" else {
                    throw MigrationError(
                        .invalidExpression, "Unknown variable '$\(name)'; only $source is defined", position: start)
                }
                tokens.append(ExpressionToken(kind: .source, position: start))
            } else if character.isLetter || character == "_" {
                tokens.append(ExpressionToken(kind: .identifier(identifier(characters, &index)), position: start))
            } else if character == "@", index + 1 < characters.count, characters[index + 1].isLetter {
                // A collection operator of a key path: @distinctUnionOfSets and its relatives.
                index += 1
                tokens.append(ExpressionToken(kind: .identifier("@" + identifier(characters, &index)), position: start))
            } else if "+-*/(),.".contains(character) {
                tokens.append(ExpressionToken(kind: .symbol(character), position: start))
                index += 1
            } else {
                throw MigrationError(.invalidExpression, "Unexpected character '\(character)'", position: start)
            }
        }
        tokens.append(ExpressionToken(kind: .end, position: characters.count))
        return tokens
    }

    /// Reads letters, digits and underscores.
    private static func identifier(_ characters: [Character], _ index: inout Int) -> String {
        let start = index
        while index < characters.count,
            characters[index].isLetter || characters[index] == "_"
                || (characters[index].isASCII && characters[index].isNumber)
        {
            index += 1
        }
        return String(characters[start..<index])
    }

    /// Reads an integer or a decimal number with an optional exponent.
    private static func number(_ characters: [Character], _ index: inout Int) throws(MigrationError) -> AttributeValue {
        let start = index
        func digits() {
            while index < characters.count, characters[index].isASCII, characters[index].isNumber { index += 1 }
        }
        digits()
        var isInteger = true
        if index + 1 < characters.count, characters[index] == ".", characters[index + 1].isASCII,
            characters[index + 1].isNumber
        {
            isInteger = false
            index += 1
            digits()
        }
        if index < characters.count, characters[index] == "e" || characters[index] == "E" {
            var next = index + 1
            if next < characters.count, characters[next] == "+" || characters[next] == "-" { next += 1 }
            if next < characters.count, characters[next].isASCII, characters[next].isNumber {
                isInteger = false
                index = next
                digits()
            }
        }
        let text = String(characters[start..<index])
        if isInteger, let value = Int64(text) { return .integer(value) }
        // 2⁶³ only exists negated: right after a minus it stands for Int64.min, which the parser's
        // folding of the minus (a wrapping negation) leaves as it is.
        if isInteger, text == "9223372036854775808", start > 0, characters[start - 1] == "-" { return .integer(.min) }
        if isInteger {
            throw MigrationError(.invalidExpression, "The integer is too large for 64 bits", position: start)
        }
        guard let value = Double(text), value.isFinite else {
            throw MigrationError(.invalidExpression, "The number is out of range", position: start)
        }
        return .double(value)
    }

    /// Reads a quoted string with its escapes.
    private static func string(_ characters: [Character], _ index: inout Int) throws(MigrationError) -> String {
        let start = index
        let quote = characters[index]
        index += 1
        var result = ""
        while index < characters.count {
            let character = characters[index]
            index += 1
            if character == quote { return result }
            guard character == "\\" else {
                result.append(character)
                continue
            }
            guard index < characters.count else { break }
            let escaped = characters[index]
            index += 1
            switch escaped {
            case "n": result.append("\n")
            case "t": result.append("\t")
            case "\"", "'", "\\": result.append(escaped)
            default:
                throw MigrationError(
                    .invalidExpression, "Unknown escape '\\\(escaped)' in a string", position: index - 2)
            }
        }
        throw MigrationError(.invalidExpression, "The string is not closed", position: start)
    }
}

/// A recursive-descent parser over expression tokens.
struct ExpressionParser {
    private let tokens: [ExpressionToken]
    private var index = 0
    private var depth = 0
    /// The offset of each node built so far, in pre-order.
    private(set) var positions: [Int] = []

    init(tokens: [ExpressionToken]) { self.tokens = tokens }

    /// Parses a whole expression and checks that nothing follows.
    mutating func parseAll() throws(MigrationError) -> ValueExpression {
        let expression = try additive()
        guard current.kind == .end else { throw unexpected("an operator or the end of the expression") }
        return expression
    }

    // MARK: - Grammar

    private var current: ExpressionToken { tokens[index] }

    private mutating func additive() throws(MigrationError) -> ValueExpression { try binary(precedence: 1) }

    /// A left-associative chain of the operators of one precedence level; operands are the next
    /// level up (unary expressions above multiplication).
    private mutating func binary(precedence: Int) throws(MigrationError) -> ValueExpression {
        func operand(_ parser: inout ExpressionParser) throws(MigrationError) -> ValueExpression {
            precedence == 1 ? try parser.binary(precedence: 2) : try parser.unary()
        }
        let firstNode = positions.count
        var result = try operand(&self)
        let outerDepth = depth
        defer { depth = outerDepth }
        while case .symbol(let symbol) = current.kind,
            let op = ValueExpression.ArithmeticOperator(rawValue: String(symbol)), op.precedence == precedence
        {
            // Each operator of a chain nests the tree one level deeper.
            try enter(at: current.position)
            positions.insert(current.position, at: firstNode)
            index += 1
            let rhs = try operand(&self)
            result = .arithmetic(op, result, rhs)
        }
        return result
    }

    private mutating func unary() throws(MigrationError) -> ValueExpression {
        guard current.kind == .symbol("-") else { return try primary() }
        let position = current.position
        try enter(at: position)
        defer { depth -= 1 }
        positions.append(position)
        index += 1
        // A minus written right before a number is part of the literal, so `-3` reads back as itself.
        if case .number(let value) = current.kind, current.position == position + 1 {
            index += 1
            switch value {
            case .integer(let number):
                return .literal(number == 0 ? .integer(0) : .integer(0 &- number))
            case .double(let number): return .literal(.double(-number))
            default: return .literal(value)
            }
        }
        return .negate(try unary())
    }

    private mutating func primary() throws(MigrationError) -> ValueExpression {
        let token = current
        if token.kind != .symbol("(") { positions.append(token.position) }
        switch token.kind {
        case .number(let value):
            index += 1
            return .literal(value)
        case .string(let text):
            index += 1
            return .literal(.string(text))
        case .source:
            index += 1
            var path: [String] = []
            while current.kind == .symbol(".") {
                index += 1
                guard case .identifier(let name) = current.kind else { throw unexpected("a property name after '.'") }
                path.append(name)
                index += 1
            }
            return .source(keyPath: path)
        case .symbol("("):
            try enter(at: token.position)
            defer { depth -= 1 }
            index += 1
            let inner = try additive()
            guard current.kind == .symbol(")") else { throw unexpected("')'") }
            index += 1
            return inner
        case .identifier(let name):
            index += 1
            switch name {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "nil": return .literal(nil)
            default: return try call(name, at: token.position)
            }
        default:
            throw unexpected("a value")
        }
    }

    private mutating func call(_ name: String, at position: Int) throws(MigrationError) -> ValueExpression {
        guard let function = ValueExpression.Function(rawValue: name) else {
            let known = ValueExpression.Function.allCases.map(\.rawValue).joined(separator: ", ")
            throw MigrationError(
                .invalidExpression, "Unknown function '\(name)'; known functions: \(known)", position: position)
        }
        guard current.kind == .symbol("(") else { throw unexpected("'(' after \(name)") }
        try enter(at: position)
        defer { depth -= 1 }
        index += 1
        var arguments: [ValueExpression] = []
        if current.kind != .symbol(")") {
            arguments.append(try additive())
            while current.kind == .symbol(",") {
                index += 1
                arguments.append(try additive())
            }
        }
        guard current.kind == .symbol(")") else { throw unexpected("',' or ')'") }
        index += 1
        guard function.arity.contains(arguments.count) else {
            let expected =
                function.arity.upperBound == Int.max
                ? "at least \(function.arity.lowerBound)"
                : function.arity.count == 1
                    ? "\(function.arity.lowerBound)"
                    : "\(function.arity.lowerBound) or \(function.arity.upperBound)"
            throw MigrationError(
                .invalidExpression, "\(name) takes \(expected) argument(s), not \(arguments.count)", position: position)
        }
        return .call(function, arguments)
    }

    // MARK: - Non public

    private mutating func enter(at position: Int) throws(MigrationError) {
        depth += 1
        guard depth <= ValueExpression.maximumNestingDepth else {
            throw MigrationError(
                .invalidExpression,
                "The expression nests deeper than \(ValueExpression.maximumNestingDepth) levels", position: position)
        }
    }

    private func unexpected(_ expected: String) -> MigrationError {
        let found: String
        switch current.kind {
        case .end: found = "the end of the expression"
        case .number: found = "a number"
        case .string: found = "a string"
        case .identifier(let name): found = "'\(name)'"
        case .source: found = "$source"
        case .symbol(let symbol): found = "'\(symbol)'"
        }
        return MigrationError(.invalidExpression, "Expected \(expected) but found \(found)", position: current.position)
    }
}
