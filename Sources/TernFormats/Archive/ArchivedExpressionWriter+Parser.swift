import Foundation

extension ArchivedExpressionWriter {
    /// A recursive-descent parser of expression text: functions `name:(a, b)` and `name()`,
    /// `$VARIABLE.path`, `SELF`, quoted strings, numbers and key paths.
    struct Parser {
        private let scalars: [Unicode.Scalar]
        private var position = 0
        private static let maxDepth = 64

        init(_ scalars: [Unicode.Scalar]) {
            self.scalars = scalars
        }

        /// The whole text as one expression, or nil when it is not in a supported form.
        mutating func parseAll() -> Node? {
            guard let node = parse(depth: 0) else { return nil }
            skipSpaces()
            return position == scalars.count ? node : nil
        }

        // MARK: Non public

        private mutating func parse(depth: Int) -> Node? {
            guard depth < Self.maxDepth else { return nil }
            skipSpaces()
            guard let first = peek() else { return nil }
            if first == "\"" || first == "'" { return string(quote: first) }
            if first == "$" {
                position += 1
                let name = word()
                guard !name.isEmpty else { return nil }
                let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
                return .variable(parts[0], path: parts.count > 1 ? parts[1] : nil)
            }
            if first == "-" || ("0"..."9").contains(first) { return number() }
            let name = word()
            guard !name.isEmpty else { return nil }
            var selector = name
            if peek() == ":" {
                position += 1
                selector += ":"
            }
            skipSpaces()
            guard peek() == "(" else {
                guard selector == name else { return nil }
                return name == "SELF" ? .evaluatedObject : .keyPath(name)
            }
            position += 1
            var arguments = [Node]()
            skipSpaces()
            if peek() == ")" {
                position += 1
                return .function(selector, arguments)
            }
            while true {
                guard let argument = parse(depth: depth + 1) else { return nil }
                arguments.append(argument)
                skipSpaces()
                guard let next = peek() else { return nil }
                position += 1
                if next == ")" { return .function(selector, arguments) }
                guard next == "," else { return nil }
            }
        }

        private mutating func string(quote: Unicode.Scalar) -> Node? {
            position += 1
            var text = String.UnicodeScalarView()
            while let scalar = peek() {
                position += 1
                if scalar == quote { return .constant(.string(String(text))) }
                if scalar == "\\", let escaped = peek() {
                    position += 1
                    text.append(escaped)
                } else {
                    text.append(scalar)
                }
            }
            return nil
        }

        private mutating func number() -> Node? {
            let start = position
            position += 1
            while let scalar = peek(), ("0"..."9").contains(scalar) || scalar == "." || scalar == "e" || scalar == "E" {
                position += 1
            }
            let text = String(String.UnicodeScalarView(scalars[start..<position]))
            if let integer = Int64(text) { return .constant(.integer(integer)) }
            return Double(text).map { .constant(.real($0)) }
        }

        private mutating func word() -> String {
            let start = position
            while let scalar = peek(),
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "_@.".unicodeScalars.contains(scalar)
            {
                position += 1
            }
            return String(String.UnicodeScalarView(scalars[start..<position]))
        }

        private mutating func skipSpaces() {
            while let scalar = peek(), scalar.properties.isWhitespace { position += 1 }
        }

        private func peek() -> Unicode.Scalar? {
            position < scalars.count ? scalars[position] : nil
        }
    }
}
