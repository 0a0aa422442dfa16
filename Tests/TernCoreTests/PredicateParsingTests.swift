import Foundation
import TernCore
import TernTestSupport
import Testing

private typealias P = FetchPredicate
private typealias E = FetchPredicate.Expression

/// Parses or records the failure, for concise expectations.
private func parse(_ text: String, _ arguments: [FetchPredicate.Argument] = []) throws -> FetchPredicate {
    try FetchPredicate(text, arguments: arguments)
}

/// The message of the error that parsing throws, `nil` when it parses.
private func parseError(_ text: String, _ arguments: [FetchPredicate.Argument] = []) -> String? {
    do {
        _ = try FetchPredicate(text, arguments: arguments)
        return nil
    } catch {
        #expect(error.code == .invalidPredicate)
        return error.message
    }
}

private func key(_ path: String) -> E { .keyPath(path) }
private func int(_ value: Int64) -> E { .constant(.integer(value)) }
private func str(_ value: String) -> E { .constant(.string(value)) }

@Suite struct PredicateParsingTests {
    @Test(arguments: [
        ("a == 1", FetchPredicate.Operator.equalTo), ("a = 1", .equalTo), ("a != 1", .notEqualTo),
        ("a <> 1", .notEqualTo),
        ("a < 1", .lessThan), ("a <= 1", .lessThanOrEqualTo), ("a =< 1", .lessThanOrEqualTo),
        ("a > 1", .greaterThan), ("a >= 1", .greaterThanOrEqualTo), ("a => 1", .greaterThanOrEqualTo),
    ])
    func comparisonOperators(text: String, op: FetchPredicate.Operator) throws {
        #expect(try parse(text) == .compare(key("a"), op, int(1)))
    }

    @Test func stringOperatorsAndOptions() throws {
        #expect(try parse("name BEGINSWITH 'A'") == .compare(key("name"), .beginsWith, str("A")))
        #expect(
            try parse("name endswith[c] 'A'") == .compare(key("name"), .endsWith, str("A"), options: .caseInsensitive))
        #expect(
            try parse("name CONTAINS[d] 'A'")
                == .compare(key("name"), .contains, str("A"), options: .diacriticInsensitive))
        #expect(
            try parse("name LIKE[cd] 'A*'")
                == .compare(key("name"), .like, str("A*"), options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(
            try parse("name MATCHES [DC] '.*'")
                == .compare(key("name"), .matches, str(".*"), options: [.caseInsensitive, .diacriticInsensitive]))
        #expect(try parse("name ==[c] 'a'") == .compare(key("name"), .equalTo, str("a"), options: .caseInsensitive))
    }

    @Test func logicalOperatorsAndPrecedence() throws {
        let a = P.compare(key("a"), .equalTo, int(1))
        let b = P.compare(key("b"), .equalTo, int(2))
        let c = P.compare(key("c"), .equalTo, int(3))
        #expect(try parse("a == 1 AND b == 2 OR c == 3") == .or([.and([a, b]), c]))
        #expect(try parse("a == 1 || b == 2 && c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("!(a == 1 or b == 2)") == .not(.or([a, b])))
        #expect(try parse("a == 1 AND b == 2 AND c == 3") == .and([a, b, c]))
        #expect(try parse("(a == 1 AND b == 2) AND c == 3") == .and([.and([a, b]), c]))
        #expect(try parse("((a == 1))") == a)
        #expect(try parse("not not a == 1") == .not(.not(a)))
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("falsepredicate OR a == 1") == .or([.constant(false), a]))
    }

    @Test func inAndBetween() throws {
        #expect(try parse("a IN {1, 2, 3}") == .compare(key("a"), .in, .aggregate([int(1), int(2), int(3)])))
        #expect(try parse("a IN {}") == .compare(key("a"), .in, .aggregate([])))
        #expect(
            try parse("a IN %@", [.values([.integer(1), nil])])
                == .compare(key("a"), .in, .aggregate([int(1), .constant(nil)])))
        #expect(try parse("a BETWEEN {1, 5}") == .compare(key("a"), .between, .aggregate([int(1), int(5)])))
        #expect(try parse("'x' IN tags") == .compare(str("x"), .in, key("tags")))
        #expect(parseError("a BETWEEN {1, 2, 3}")?.contains("two bounds") == true)
    }

    @Test func keyPathsQuantifiersAndCollectionOperators() throws {
        #expect(try parse("owner.name == 'Ann'") == .compare(key("owner.name"), .equalTo, str("Ann")))
        #expect(
            try parse("ANY items.price > 2") == .compare(key("items.price"), .greaterThan, int(2), quantifier: .any))
        #expect(
            try parse("SOME items.price > 2") == .compare(key("items.price"), .greaterThan, int(2), quantifier: .any))
        #expect(
            try parse("ALL items.price > 2") == .compare(key("items.price"), .greaterThan, int(2), quantifier: .all))
        #expect(
            try parse("NONE items.price > 2") == .compare(key("items.price"), .greaterThan, int(2), quantifier: .none))
        #expect(
            try parse("items.@count > 2")
                == .compare(.collection(.count, keyPath: "items", key: nil), .greaterThan, int(2)))
        #expect(
            try parse("order.items.@sum.price < 10")
                == .compare(.collection(.sum, keyPath: "order.items", key: "price"), .lessThan, int(10)))
        #expect(
            try parse("items.@AVG.price == 1")
                == .compare(.collection(.average, keyPath: "items", key: "price"), .equalTo, int(1)))
        #expect(
            try parse("#size == 1 AND #in.#first == 2")
                == .and([
                    .compare(key("size"), .equalTo, int(1)), .compare(key("in.first"), .equalTo, int(2)),
                ]))
        #expect(try parse("SELF == 1") == .compare(.evaluatedObject, .equalTo, int(1)))
        #expect(try parse("SELF.name == 1") == .compare(key("name"), .equalTo, int(1)))
        #expect(try parse("größe == 1") == .compare(key("größe"), .equalTo, int(1)))
        #expect(parseError("@count > 1") != nil)
        #expect(parseError("items.@bogus > 1")?.contains("@count") == true)
        #expect(parseError("items.@count.@sum > 1") != nil)
    }

    @Test func literals() throws {
        func rhs(_ text: String) throws -> E? {
            guard case .comparison(let comparison) = try parse("a == " + text) else { return nil }
            return comparison.rhs
        }
        #expect(try rhs("nil") == .constant(nil))
        #expect(try rhs("NULL") == .constant(nil))
        #expect(try rhs("TRUE") == .constant(.bool(true)))
        #expect(try rhs("yes") == .constant(.bool(true)))
        #expect(try rhs("False") == .constant(.bool(false)))
        #expect(try rhs("NO") == .constant(.bool(false)))
        #expect(try rhs("42") == int(42))
        #expect(try rhs("-42") == int(-42))
        #expect(try rhs("-9223372036854775808") == int(.min))
        #expect(try rhs("9223372036854775808") == .constant(.double(9_223_372_036_854_775_808)))
        #expect(try rhs("1.5") == .constant(.double(1.5)))
        #expect(try rhs("-.5") == .constant(.double(-0.5)))
        #expect(try rhs("2e3") == .constant(.double(2000)))
        #expect(try rhs("2.5E-1") == .constant(.double(0.25)))
        #expect(try rhs("0x1F") == int(31))
        #expect(try rhs("-0x10") == int(-16))
        #expect(try rhs("0b101") == int(5))
        #expect(try rhs("0o17") == int(15))
        #expect(try rhs(#""say \"hi\"\n""#) == str("say \"hi\"\n"))
        #expect(try rhs(#"'tab\there \\ \u00e9 \'q\''"#) == str("tab\there \\ é 'q'"))
        #expect(try rhs(#"'\d+'"#) == str(#"\d+"#))
        #expect(try rhs("\"日本語 🐦\"") == str("日本語 🐦"))
        #expect(
            try rhs(#"CAST(123456.5, "NSDate")"#) == .constant(.date(Date(timeIntervalSinceReferenceDate: 123_456.5))))
        #expect(try rhs(#"CAST(-10, 'NSDate')"#) == .constant(.date(Date(timeIntervalSinceReferenceDate: -10))))
        #expect(
            try rhs(#"CAST("1.25", "NSDecimalNumber")"#) == .constant(.decimal(try #require(Decimal(string: "1.25")))))
        let uuid = UUID()
        #expect(try rhs("CAST(\"\(uuid.uuidString)\", \"NSUUID\")") == .constant(.uuid(uuid)))
        #expect(try rhs(#"CAST("AQI=", "NSData")"#) == .constant(.data(Data([1, 2]))))
        #expect(try rhs("$LIMIT") == .variable("LIMIT"))
        #expect(parseError(#"a == CAST("x", "NSDate")"#) != nil)
        #expect(parseError(#"a == CAST(1, "NSWidget")"#) != nil)
    }

    @Test func arguments() throws {
        #expect(
            try parse("%K == %@ AND %K > %@", [.keyPath("name"), "Ann", "owner.age", 3])
                == .and([
                    .compare(key("name"), .equalTo, str("Ann")),
                    .compare(key("owner.age"), .greaterThan, int(3)),
                ]))
        #expect(try parse("a == %@", [nil]) == .compare(key("a"), .equalTo, .constant(nil)))
        #expect(try parse("a == %@", [2.5]) == .compare(key("a"), .equalTo, .constant(.double(2.5))))
        #expect(try parse("a == %@", [true]) == .compare(key("a"), .equalTo, .constant(.bool(true))))
        #expect(
            try parse("%K.@count == 0", ["items"])
                == .compare(.collection(.count, keyPath: "items", key: nil), .equalTo, int(0)))
        #expect(
            try parse("%K == 0", ["items.@count"])
                == .compare(.collection(.count, keyPath: "items", key: nil), .equalTo, int(0)))
        #expect(
            try parse("a == CAST(%@, 'NSDate')", [.value(.double(10))])
                == .compare(key("a"), .equalTo, .constant(.date(Date(timeIntervalSinceReferenceDate: 10)))))
        #expect(parseError("a == %@")?.contains("only 0 were given") == true)
        #expect(parseError("a == 1", [1])?.contains("1 arguments") == true)
        #expect(parseError("%K == 1", [1]) != nil)
        #expect(parseError("%K == 1", [""]) != nil)
        #expect(parseError("a == %d", [1])?.contains("%@") == true)
    }

    @Test func errorsGivePositionAndExpectation() {
        #expect(parseError("name == 'x' AND AND b == 1") == #"unexpected "AND" at 16: expected a predicate"#)
        #expect(parseError("name == AND") == #"unexpected "AND" at 8: expected a value"#)
        #expect(parseError("name ==") == "unexpected end of text at 7: expected a value")
        #expect(
            parseError("name")
                == "unexpected end of text at 4: expected a comparison operator such as ==, IN or BEGINSWITH")
        #expect(parseError("(a == 1") == #"unexpected end of text at 7: expected ")", AND or OR"#)
        #expect(parseError("a == 1)") == #"unexpected ")" at 6: expected AND, OR or the end of the predicate"#)
        #expect(
            parseError("a == 'unterminated") == #"unexpected an unterminated string at 5: expected a closing ' quote"#)
        #expect(parseError("é == 1 AND ü == ") == "unexpected end of text at 16: expected a value")
        #expect(parseError("🐦 == 1")?.hasPrefix("unexpected \"🐦\" at 0") == true)
        #expect(parseError("a == 'x' 'y'")?.contains("at 9") == true)
        #expect(parseError("a == 1 & b == 2")?.contains("at 7") == true)
        #expect(parseError("a ==[q] 1")?.contains("c, d") == true)
        #expect(parseError("a.and == 1")?.contains("#") == true)
        #expect(parseError("a == 12abc")?.contains("at 7") == true)
        #expect(parseError("a == '\\u12'")?.contains("hexadecimal") == true)
        #expect(parseError("") == "unexpected end of text at 0: expected a predicate")
        #expect(parseError("a == 0xFFFFFFFFFFFFFFFFFF")?.contains("64 bits") == true)
    }

    @Test func hostileInputFailsCleanly() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        #expect(parseError(deep)?.contains("levels of nesting") == true)
        let nots = String(repeating: "NOT ", count: 10_000) + "a == 1"
        #expect(parseError(nots)?.contains("levels of nesting") == true)
        let braces = "a IN " + String(repeating: "{", count: 10_000)
        #expect(parseError(braces)?.contains("levels of nesting") == true)
        let long = "a == '" + String(repeating: "x", count: FetchPredicate.maximumFormatLength) + "'"
        #expect(parseError(long)?.contains("at most") == true)
        #expect(parseError("a == 1\0") != nil)
        #expect(parseError("\0") != nil)
        #expect(parseError("a == \u{202E}1") != nil)
        #expect(parseError("a\u{301} == 1") == nil)  // A combining mark continues a name.
        #expect(parseError("'") != nil)
        #expect(parseError("\"\\") != nil)
        #expect(parseError("$") != nil)
        #expect(parseError("a == -") != nil)
        #expect(parseError("a == 1e") != nil)
        #expect(parseError("a IN {1,") != nil)
        #expect(parseError("a IN {1 2}") != nil)
        #expect(parseError("CAST(") != nil)
        #expect(parseError("a == CAST(1, 'NSDate'") != nil)
        #expect(parseError("ANY") != nil)
        #expect(parseError("a ==[") != nil)
        #expect(parseError("a ==[c") != nil)
        #expect(parseError(". == 1") != nil)
        #expect(parseError("a. == 1") != nil)
        for text in ["1e999999", "-1e-999999", "nan", "inf", "-", "", "1.2.3", String(repeating: "9", count: 500)] {
            _ = try? FetchPredicate("a == CAST('\(text)', 'NSDecimalNumber') OR a == CAST('\(text)', 'NSNumber')")
        }
        #expect(parseError("a == CAST(1e308, 'NSDate') AND b == 1e999") == nil)
        // Nesting just under the limit is fine.
        let limit = FetchPredicate.maximumNestingDepth
        let nested = String(repeating: "(", count: limit) + "a == 1" + String(repeating: ")", count: limit)
        #expect(parseError(nested) == nil)
    }

    @Test func everyPrefixOfValidTextParsesOrFails() {
        let text =
            #"(ANY items.name LIKE[cd] "a*" OR NOT owner.age BETWEEN {1, 0x10}) AND d > CAST(1.5, "NSDate") && $V IN {nil, -2e3, 'x\'y'} AND items.@sum.price <= %@"#
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar)
            _ = try? FetchPredicate(String(scalars), arguments: [1])
        }
        #expect(throws: Never.self) { try FetchPredicate(text, arguments: [1]) }
    }
}

@Suite struct PredicateRandomInputTests {
    static let pieces = [
        "a", "b.c", "items.@count", "d.@sum.e", "SELF", "#in", "$V", "%@", "%K", "1", "-2.5", "0x1f", "1e3",
        "'s\\'q'", "\"d\\\"q\\n\"", "nil", "TRUE", "NO", "CAST(1.5, 'NSDate')", "CAST('2.5', 'NSDecimalNumber')",
        "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH",
        "CONTAINS", "LIKE", "MATCHES", "[c]", "[cd]", "[d]", "AND", "&&", "OR", "||", "NOT", "!", "(", ")",
        "{", "}", ",", "ANY", "ALL", "NONE", "SOME", "TRUEPREDICATE", "FALSEPREDICATE", ".", "@", "#", "\0",
        "é", "🐦", "'", "\"", "\\",
    ]

    static let row: [String: PredicateValue] = [
        "a": .single(.integer(1)), "b.c": .single(.string("x")), "items": .many([.integer(1), nil]),
        "d.e": .many([.double(.nan), .decimal(2), .string("s")]), "": .single(.date(.distantPast)), "k": .single(nil),
    ]

    @Test func randomTokenSoupNeverCrashesAndRoundTrips() throws {
        var generator = SplitMix64(state: 0x7E44)
        var parsed = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 1...12, using: &generator)
            let text = (0..<count).map { _ in Self.pieces.randomElement(using: &generator) ?? "" }.joined(
                separator: " ")
            let arguments: [FetchPredicate.Argument] = (0..<text.components(separatedBy: "%").count - 1).map { _ in "k"
            }
            guard let predicate = try? FetchPredicate(text, arguments: arguments) else { continue }
            parsed += 1
            #expect(try FetchPredicate(predicate.description) == predicate, "\(text)")
            _ = try? predicate.substituting(variables: ["V": .string("v")]).evaluate(with: Self.row)
        }
        #expect(parsed > 50)
    }

    @Test func wellFormedRandomPredicatesRoundTrip() throws {
        var generator = SplitMix64(state: 42)
        let operands = [
            "a", "b.c", "items.@count", "d.@max.e", "SELF", "$V", "1", "-2.5", "'x'", "nil", "TRUE", "{1, 'y'}",
        ]
        let operators = ["==", "!=", "<", "<=", ">", ">=", "IN", "CONTAINS[c]", "LIKE[cd]", "BEGINSWITH", "MATCHES"]
        func comparison() -> String {
            let quantifier = ["", "ANY ", "ALL ", "NONE "].randomElement(using: &generator) ?? ""
            return quantifier + (operands.randomElement(using: &generator) ?? "a") + " "
                + (operators.randomElement(using: &generator) ?? "==") + " "
                + (operands.randomElement(using: &generator) ?? "1")
        }
        func predicate(_ depth: Int) -> String {
            guard depth > 0 else { return comparison() }
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: return "NOT " + predicate(depth - 1)
            case 1: return "(" + predicate(depth - 1) + " AND " + predicate(depth - 1) + ")"
            case 2: return predicate(depth - 1) + " OR " + predicate(depth - 1)
            default: return comparison()
            }
        }
        for _ in 0..<2_000 {
            let text = predicate(4)
            let parsed = try FetchPredicate(text)
            #expect(try FetchPredicate(parsed.description) == parsed, "\(text)")
        }
    }
}
