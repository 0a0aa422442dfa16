import Foundation
import TernCore
import Testing

/// A person with a to-one owner and to-many items, answering key paths like an object layer would.
private struct Person: PredicateEvaluable {
    var name: String?
    var age: AttributeValue?
    var born: Date?
    var ownerName: String?
    var items: [(name: String, price: AttributeValue?)] = []

    func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
        switch keyPath {
        case "name": .single(name.map { .string($0) })
        case "age": .single(age)
        case "born": .single(born.map { .date($0) })
        case "owner.name": .single(ownerName.map { .string($0) })
        case "items": .many(items.indices.map { .string("item \($0)") })
        case "items.name": .many(items.map { .string($0.name) })
        case "items.price": .many(items.map(\.price))
        default: throw TernError(.invalidPredicate, "Person has no key path \(keyPath)", property: keyPath)
        }
    }
}

private let ann = Person(
    name: "Ann", age: .integer(30), born: Date(timeIntervalSinceReferenceDate: 1000), ownerName: "Zoë",
    items: [("apple", .double(1.5)), ("Banana", .integer(2)), ("cherry", nil)])
private let nobody = Person(name: nil, age: nil, born: nil, ownerName: nil)

private func check(_ text: String, _ object: some PredicateEvaluable = ann, _ arguments: [FetchPredicate.Argument] = [])
    throws -> Bool
{
    try FetchPredicate(text, arguments: arguments).evaluate(with: object)
}

@Suite struct PredicateEvaluationTests {
    @Test func comparisonsAcrossNumberKinds() throws {
        #expect(try check("age == 30"))
        #expect(try check("age == 30.0"))
        #expect(try check("age == CAST('30', 'NSDecimalNumber')"))
        #expect(try check("age < 30.5 AND age > 29.999 AND age >= 30 AND age <= 30"))
        #expect(try !check("age != 30"))
        #expect(try check("age != 31"))
        let big = Person(age: .integer(9_007_199_254_740_993))  // 2^53 + 1: no double holds it.
        #expect(try !check("age == 9007199254740992.0", big))
        #expect(try check("age > 9007199254740992.0", big))
        #expect(try check("age < 1e19", big))
        #expect(try check("age > CAST('9007199254740992.5', 'NSDecimalNumber')", big))
        let flag = Person(age: .bool(true))
        #expect(try check("age == 1 AND age == YES AND age != NO", flag))
        #expect(try !check("age == 'true'", flag))
        let nan = Person(age: .double(.nan))
        #expect(try !check("age == CAST('nan', 'NSNumber') OR age < 1 OR age >= 1", nan))
    }

    @Test func nilComparisons() throws {
        #expect(try check("name == nil", nobody))
        #expect(try !check("name != nil", nobody))
        #expect(try check("name != nil"))
        #expect(try !check("name == nil"))
        #expect(try !check("age < 1 OR age > 1 OR age <= 1 OR age >= 1", nobody))
        #expect(try !check("name BEGINSWITH '' OR name LIKE '*' OR name MATCHES '.*'", nobody))
        #expect(try check("age BETWEEN {nil, 40}") == false)
        #expect(try check("name IN {nil, 'x'}", nobody))
    }

    @Test func stringOperatorsWithOptions() throws {
        #expect(try check("name == 'Ann'"))
        #expect(try !check("name == 'ann'"))
        #expect(try check("name ==[c] 'ANN'"))
        #expect(try check("owner.name ==[d] 'Zoe'"))
        #expect(try !check("owner.name ==[c] 'zoe'"))
        #expect(try check("owner.name ==[cd] 'ZOE'"))
        #expect(try check("owner.name == 'Zoe\u{308}'"))  // Canonically equivalent.
        #expect(try check("name BEGINSWITH 'An' AND name ENDSWITH 'nn' AND name CONTAINS 'n'"))
        #expect(try !check("name BEGINSWITH 'an'"))
        #expect(try check("name BEGINSWITH[c] 'an' AND name ENDSWITH[c] 'NN' AND name CONTAINS[c] 'N'"))
        #expect(try check("owner.name ENDSWITH[d] 'e' AND owner.name CONTAINS[cd] 'OE'"))
        #expect(try check("name BEGINSWITH '' AND name CONTAINS ''"))
        #expect(try check("name < 'Bob' AND name > 'Al' AND name <[c] 'bob'"))
        #expect(try !check("name < 3 OR name > 3 OR name == 3"))
    }

    @Test func likeAndMatches() throws {
        #expect(try check("name LIKE 'A?n'"))
        #expect(try check("name LIKE '*n'"))
        #expect(try check("name LIKE 'A**'"))
        #expect(try !check("name LIKE 'A?'"))
        #expect(try !check("name LIKE 'a*'"))
        #expect(try check("name LIKE[c] 'a*'"))
        #expect(try check("owner.name LIKE[cd] 'zo?'"))
        #expect(try check(#"'a*b' LIKE 'a\\*b'"#, ann))
        #expect(try !check(#"'axb' LIKE 'a\\*b'"#, ann))
        #expect(try check("'🐦x' LIKE '?x'", ann))
        #expect(try !check("'aXbXc' LIKE '*x*x*'", ann))
        #expect(try check("'aXbXc' LIKE[c] '*x*x*'", ann))
        #expect(try check("name MATCHES 'A.n'"))
        #expect(try !check("name MATCHES 'A'"))  // Whole string only.
        #expect(try check("name MATCHES 'A|Ann'"))  // Alternation that must reach the end.
        #expect(try check("name MATCHES[c] 'a[n]+'"))
        #expect(try !check("name MATCHES 'a[n]+'"))  // Compiled apart from the [c] one.
        #expect(try check(#"age MATCHES '\\d+'"#, Person(age: .string("123"))))
        #expect(try check("owner.name MATCHES[d] 'Zoe'"))
        #expect(throws: TernError.self) { try check("name MATCHES 'a)(b'") }
    }

    @Test func inBetweenAndContains() throws {
        #expect(try check("age IN {1, 30, 'x'}"))
        #expect(try check("age IN %@", ann, [.values([.double(30)])]))
        #expect(try check("age IN %@ AND name IN %@", ann, [[.integer(29), .integer(30)], [nil, .string("Ann")]]))
        #expect(try !check("age IN {}"))
        #expect(try check("name IN[c] {'ann'}"))
        #expect(try check("'nn' IN name"))
        #expect(try check("'NN' IN[c] name"))
        #expect(try check("'banana' IN[c] items.name"))
        #expect(try check("items.name CONTAINS 'apple'"))
        #expect(try !check("items.name CONTAINS 'app'"))
        #expect(try check("age BETWEEN {30, 30} AND age BETWEEN {29.5, 31}"))
        #expect(try !check("age BETWEEN {31, 40}"))
        #expect(try check("name BETWEEN {'A', 'B'}"))
        #expect(throws: TernError.self) { try check("age BETWEEN %@", ann, [.values([.integer(1)])]) }
        #expect(throws: TernError.self) { try check("age BETWEEN 3") }
    }

    @Test func quantifiersAndCollectionOperators() throws {
        #expect(try check("ANY items.price > 1.9"))
        #expect(try !check("ANY items.price > 2"))
        #expect(try check("ALL items.name LIKE[c] '*a*' OR ALL items.price < 3") == false)
        #expect(try check("ALL items.name CONTAINS[c] 'e' OR ALL items.name CONTAINS[c] 'a'") == false)
        #expect(try check("ALL items.name MATCHES '[a-zA-Z]+'"))
        #expect(try check("NONE items.name BEGINSWITH 'b'"))
        #expect(try !check("NONE items.name BEGINSWITH[c] 'b'"))
        #expect(try check("ANY items.price == nil"))
        #expect(try check("ALL items.price > 100", nobody))  // Vacuously true.
        #expect(try check("NONE items.price > 0", nobody))
        #expect(try !check("ANY items.price > 0", nobody))
        #expect(try check("items.@count == 3 AND items.@count > 2"))
        #expect(try check("items.@count == 0", nobody))
        #expect(try check("items.@sum.price == 3.5"))
        #expect(try check("items.@avg.price == 1.75"))
        #expect(try check("items.@min.price == 1.5 AND items.@max.price == 2"))
        #expect(try check("items.@max.price == nil AND items.@sum.price == 0", nobody))
        #expect(throws: TernError.self) { try check("items.price > 1") }
        #expect(try check("items.name == {'cherry', 'apple', 'Banana'}"))
    }

    @Test func dates() throws {
        #expect(try check("born == CAST(1000, 'NSDate')"))
        #expect(try check("born > CAST(999.5, 'NSDate') AND born < CAST(1000.5, 'NSDate')"))
        #expect(try check("born == 1000.0"))  // Seconds since 2001, as stored by SQLite.
        #expect(try check("born BETWEEN %@", ann, [.values([.date(.distantPast), .date(.distantFuture)])]))
    }

    @Test func logicAndSelf() throws {
        #expect(try check("TRUEPREDICATE"))
        #expect(try !check("FALSEPREDICATE"))
        #expect(try check("NOT name == 'Bob' AND (age == 1 OR age == 30)"))
        #expect(try FetchPredicate("SELF BEGINSWITH[c] 'h'").evaluate(with: AttributeValue.string("Hello")))
        let row: [String: PredicateValue] = ["name": .single(.string("x"))]
        #expect(try FetchPredicate("name == 'x' AND other == nil").evaluate(with: row))
        #expect(throws: TernError.self) { try check("unknown == 1") }
    }

    @Test func variablesMustBeSubstituted() throws {
        let template = try FetchPredicate("age >= $MIN AND name IN $NAMES")
        #expect(template.variableNames == ["MIN", "NAMES"])
        #expect(throws: TernError.self) { try template.evaluate(with: ann) }
        let partial = template.substituting(variables: ["MIN": .integer(18)])
        #expect(partial.variableNames == ["NAMES"])
        let full = partial.substituting(arguments: ["NAMES": .values([.string("Ann"), .string("Bob")])])
        #expect(full.variableNames.isEmpty)
        #expect(try full.evaluate(with: ann))
        #expect(try !full.substituting(variables: [:]).evaluate(with: nobody))
        let keyed = try FetchPredicate("$K == 'Ann'").substituting(arguments: ["K": .keyPath("name")])
        #expect(keyed == (try FetchPredicate("name == 'Ann'")))
        #expect(try FetchPredicate("a == $X").keyPaths == ["a"])
        #expect(try FetchPredicate("ANY b.c == 1 OR d.@sum.e == 2").keyPaths == ["b.c", "d.e"])
    }
}
