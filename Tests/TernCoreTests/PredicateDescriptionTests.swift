import Foundation
import TernCore
import Testing

@Suite struct PredicateDescriptionTests {
    @Test(arguments: [
        ("a = 1", "a == 1"),
        ("a <> 1 && b =< 2 || c => 3", "(a != 1 AND b <= 2) OR c >= 3"),
        ("not (a = 1 || b <> 2) && name beginswith[c] 'x'", #"NOT (a == 1 OR b != 2) AND name BEGINSWITH[c] "x""#),
        ("a == 1 AND (b == 2 AND c == 3)", "a == 1 AND (b == 2 AND c == 3)"),
        ("some items.price > 2.5", "ANY items.price > 2.5"),
        ("none items.name LIKE[dc] 'a?*'", #"NONE items.name LIKE[cd] "a?*""#),
        ("items.@count == 0 OR items.@max.price < -1", "items.@count == 0 OR items.@max.price < -1"),
        ("x IN {1, 'two', nil, yes}", #"x IN {1, "two", nil, TRUE}"#),
        ("x between {1, 2}", "x BETWEEN {1, 2}"),
        ("#size == 1 AND #in.x == 2 AND #First == 3", "#size == 1 AND #in.x == 2 AND #First == 3"),
        ("SELF == $VALUE", "SELF == $VALUE"),
        ("TRUEPREDICATE AND NOT FALSEPREDICATE", "TRUEPREDICATE AND NOT FALSEPREDICATE"),
        (#"d > CAST(123456.0, "NSDate")"#, #"d > CAST(123456.0, "NSDate")"#),
        (#"d == CAST("1.50", "NSDecimalNumber")"#, #"d == CAST("1.5", "NSDecimalNumber")"#),
        ("n == 0x10", "n == 16"),
    ])
    func canonicalText(text: String, canonical: String) throws {
        let predicate = try FetchPredicate(text)
        #expect(predicate.description == canonical)
        #expect(try FetchPredicate(predicate.description) == predicate)
    }

    @Test func valuesWithoutLiteralsRoundTrip() throws {
        let values: [AttributeValue] = [
            .integer(.min), .integer(.max), .double(0.1), .double(-1e-300), .double(1e300), .double(3),
            .double(.infinity), .double(-.infinity), .decimal(try #require(Decimal(string: "-123.456"))),
            .string("quote \" backslash \\ newline \n tab \t nul \0 bell \u{7} é 🐦"),
            .string(""), .bool(true), .bool(false),
            .date(Date(timeIntervalSinceReferenceDate: 1.25)),
            .date(Date(timeIntervalSinceReferenceDate: -978_307_200)),
            .data(Data([0, 255, 7])), .data(Data()), .uuid(UUID()),
            .uri(try #require(URL(string: "x-coredata://ABC/Person/p1"))),
        ]
        for value in values {
            let predicate = FetchPredicate.compare(.keyPath("a"), .equalTo, .constant(value))
            #expect(try FetchPredicate(predicate.description) == predicate, "\(predicate)")
        }
    }

    @Test func builtTreesPrintUnambiguously() throws {
        let a = FetchPredicate.compare(.keyPath("a"), .equalTo, .constant(.integer(1)))
        let b = FetchPredicate.compare(.keyPath("b"), .equalTo, .constant(nil))
        #expect(FetchPredicate.and([]).description == "TRUEPREDICATE")
        #expect(FetchPredicate.or([]).description == "FALSEPREDICATE")
        #expect(FetchPredicate.and([.or([a, b])]).description == "a == 1 OR b == nil")
        #expect(FetchPredicate.and([.and([.or([a, b])]), a]).description == "(a == 1 OR b == nil) AND a == 1")
        #expect(FetchPredicate.not(.and([a, b])).description == "NOT (a == 1 AND b == nil)")
        let tree = FetchPredicate.or([.and([a, .not(.or([b, a]))]), .not(.not(b)), .constant(false)])
        #expect(try FetchPredicate(tree.description) == tree)
    }

    @Test func sortDescriptorsDescribeThemselves() {
        #expect(FetchSort(key: "name").description == "name ASC")
        #expect(FetchSort(key: "name", ascending: false, caseInsensitive: true).description == "name[c] DESC")
    }
}
