import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@Suite struct ValueExpressionParsingTests {
    @Test func arithmeticFollowsPrecedence() throws {
        let expression = try ValueExpression("1 + 2 * $source.n - 8 / 4")
        let expected = ValueExpression.arithmetic(
            .subtract,
            .arithmetic(
                .add, .literal(.integer(1)), .arithmetic(.multiply, .literal(.integer(2)), .source(keyPath: ["n"]))),
            .arithmetic(.divide, .literal(.integer(8)), .literal(.integer(4))))
        #expect(expression == expected)
        #expect(
            try ValueExpression("(1 + 2) * 3")
                == .arithmetic(
                    .multiply, .arithmetic(.add, .literal(.integer(1)), .literal(.integer(2))), .literal(.integer(3))))
    }

    @Test func readsLiteralsAndKeyPaths() throws {
        #expect(try ValueExpression("-12") == .literal(.integer(-12)))
        #expect(try ValueExpression("- 12") == .negate(.literal(.integer(12))))
        #expect(try ValueExpression("-9223372036854775808") == .literal(.integer(.min)))
        #expect(try ValueExpression("2.5e3") == .literal(.double(2500)))
        #expect(try ValueExpression(#""a\"b\\c\n""#) == .literal(.string("a\"b\\c\n")))
        #expect(try ValueExpression("'it\\'s'") == .literal(.string("it's")))
        #expect(try ValueExpression("true") == .literal(.bool(true)))
        #expect(try ValueExpression("nil") == .literal(nil))
        #expect(try ValueExpression("$source") == .source(keyPath: []))
        #expect(try ValueExpression("$source.owner.name") == .source(keyPath: ["owner", "name"]))
        #expect(try ValueExpression("now()") == .call(.now, []))
        #expect(
            try ValueExpression("concat($source.a, 'x', 1)")
                == .call(.concat, [.source(keyPath: ["a"]), .literal(.string("x")), .literal(.integer(1))]))
    }

    @Test func printsTextThatReadsBack() throws {
        let texts = [
            "1 + 2 * 3", "(1 + 2) * 3", "1 - (2 - 3)", "1 - 2 - 3", "-(1 + 2)", "-3", "-(3)", "- -3",
            "8 / (4 / 2)", #"formatDate($source.timeStamp, "yyyy-MM-dd HH:mm")"#,
            #"destinationInstances("CarToCar", $source.cars)"#, "coalesce($source.a, $source.b, nil)",
            "concat('a\"b', \"\\n\", uuid())", "0.1 + 1e-7 * 2.0", "-$source.x * -(2)",
        ]
        for text in texts {
            let expression = try ValueExpression(text)
            #expect(try ValueExpression(expression.description) == expression, "\(text) → \(expression)")
        }
        #expect(try ValueExpression("(1 + 2) * 3").description == "(1 + 2) * 3")
        #expect(try ValueExpression("1 - (2 - 3)").description == "1 - (2 - 3)")
        #expect(try ValueExpression("((($source.a)))").description == "$source.a")
    }

    @Test(arguments: [
        ("tim($source.a)", "Unknown function 'tim'", 0),
        ("lowercase($source.a, 'b')", "lowercase takes 1 argument(s), not 2", 0),
        ("formatDate($source.a)", "formatDate takes 2 argument(s), not 1", 0),
        ("concat()", "concat takes at least 1 argument(s), not 0", 0),
        ("1 + ", "Expected a value but found the end of the expression", 4),
        ("'open", "The string is not closed", 0),
        ("1 # 2", "Unexpected character '#'", 2),
        ("$target.x", "Unknown variable '$target'", 0),
        ("$source.", "Expected a property name after '.'", 8),
        ("(1 + 2", "Expected ')' but found the end of the expression", 6),
        ("1 2", "Expected an operator or the end of the expression but found a number", 2),
        ("99999999999999999999", "The integer is too large for 64 bits", 0),
        ("'\\q'", "Unknown escape", 1),
        ("lowercase", "Expected '(' after lowercase", 9),
    ])
    func reportsSyntaxErrorsWithTheirPosition(text: String, message: String, position: Int) {
        #expect {
            _ = try ValueExpression(text)
        } throws: { error in
            guard let error = error as? MigrationError else { return false }
            return error.code == .invalidExpression && error.message.hasPrefix(message) && error.position == position
        }
    }

    @Test func capsLengthAndNesting() throws {
        let long = String(repeating: "1+", count: ValueExpression.maximumLength / 2) + "1"
        #expect(throws: MigrationError.self) { try ValueExpression(long) }
        let deep = String(repeating: "(", count: 100) + "1" + String(repeating: ")", count: 100)
        #expect {
            _ = try ValueExpression(deep)
        } throws: { ($0 as? MigrationError)?.message.contains("nests deeper") == true }
        let calls = String(repeating: "lowercase(", count: 100) + "'a'" + String(repeating: ")", count: 100)
        #expect(throws: MigrationError.self) { try ValueExpression(calls) }
        let chain = Array(repeating: "1", count: 200).joined(separator: " + ")
        #expect(throws: MigrationError.self) { try ValueExpression(chain) }
        let allowed = Array(repeating: "1", count: 40).joined(separator: " * ")
        #expect(try ValueExpression(allowed).description == allowed)
    }

    @Test func randomTextNeverCrashesTheParser() {
        var generator = SplitMix64(state: 7)
        let alphabet = Array("$source.ab(),'\"\\+-*/ 0123456789.e-trunlcoalesceformatDate\n")
        var parsed = 0
        for _ in 0..<3_000 {
            let length = Int.random(in: 0...40, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? " " })
            if let expression = try? ValueExpression(text) {
                parsed += 1
                #expect((try? ValueExpression(expression.description)) == expression, "\(text)")
            }
        }
        #expect(parsed > 0)
    }

    @Test func randomTreesPrintAndReadBack() throws {
        var generator = SplitMix64(state: 42)
        for _ in 0..<500 {
            let expression = Self.randomExpression(depth: 4, using: &generator)
            #expect(try ValueExpression(expression.description) == expression, "\(expression)")
        }
    }

    static func randomExpression(depth: Int, using generator: inout SplitMix64) -> ValueExpression {
        let choice = depth == 0 ? Int.random(in: 0...2, using: &generator) : Int.random(in: 0...6, using: &generator)
        switch choice {
        case 0: return .literal(.integer(Int64.random(in: -1_000...1_000, using: &generator)))
        case 1: return .source(keyPath: Array(["a", "b", "owner"].prefix(Int.random(in: 0...3, using: &generator))))
        case 2:
            return .literal(
                [.string("x\"y"), .double(1.5), .bool(false), nil][Int.random(in: 0...3, using: &generator)])
        case 3: return .negate(randomExpression(depth: depth - 1, using: &generator))
        case 4, 5:
            let op = ValueExpression.ArithmeticOperator.allCases.randomElement(using: &generator) ?? .add
            return .arithmetic(
                op, randomExpression(depth: depth - 1, using: &generator),
                randomExpression(depth: depth - 1, using: &generator))
        default:
            return .call(.coalesce, [randomExpression(depth: depth - 1, using: &generator), .call(.now, [])])
        }
    }
}

extension ValueExpressionParsingTests {
    @Test func randomExpressionsTypeCheckWithoutCrashing() throws {
        let source = try ManagedObjectModel {
            Entity("Car") {
                Attribute("a", .integer32)
                Attribute("b", .string)
                Relationship("owner", to: "Person", inverse: "cars")
            }
            Entity("Person") { Relationship("cars", to: "Car", inverse: "owner").toMany() }
        }
        var generator = SplitMix64(state: 99)
        var accepted = 0
        for _ in 0..<500 {
            let expression = Self.randomExpression(depth: 4, using: &generator)
            let mapping = MappingModel(
                name: "Random",
                entityMappings: [
                    EntityMapping(
                        kind: .transform, source: "Car", destination: "Car",
                        attributes: [PropertyMapping("b", expression)])
                ])
            let problems = mapping.validationProblems(source: source, destination: source)
            if problems.isEmpty { accepted += 1 }
            #expect(problems.allSatisfy { $0.mappingName == "CarToCar" && $0.propertyName == "b" })
        }
        #expect(accepted > 0)
    }
}
