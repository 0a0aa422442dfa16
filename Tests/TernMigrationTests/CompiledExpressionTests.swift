import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

/// Compiled expressions give exactly what the syntax-tree walk gives: values, markers and errors.
@Suite struct CompiledExpressionTests {
    let environment = ExpressionEnvironment(now: Date(timeIntervalSinceReferenceDate: 12_345)) {
        UUID(uuidString: "00000000-0000-0000-0000-000000000002") ?? UUID()
    }
    let source = FakeSource(values: [
        "n": .value(.integer(7)),
        "big": .value(.integer(.max)),
        "price": .value(.double(2.5)),
        "amount": .value(.decimal(Decimal(string: "1.25") ?? 0)),
        "name": .value(.string("  Ada Lovelace \n")),
        "count": .value(.string("42")),
        "day": .value(.string("2024-02-29")),
        "missing": .value(nil),
        "stamp": .value(.date(Date(timeIntervalSinceReferenceDate: 86_400 * 365 + 3_723.75))),
        "old": .value(.date(Date(timeIntervalSinceReferenceDate: -13_000_000_000))),
        "owner": .objects([RowReference(entityName: "Person", primaryKey: 3)]),
        "flag": .value(.bool(true)),
    ])

    /// The result of an evaluation, or its error's code and message.
    func outcome(_ body: () throws(MigrationError) -> ExpressionValue) -> String {
        do throws(MigrationError) {
            return "\(try body())"
        } catch {
            return "error \(error.code) \(error.message)"
        }
    }

    @Test func givesWhatTheTreeWalkGives() throws {
        let texts = [
            "1 + 2 * $source.n", "$source.n / 2", "-$source.n", "$source.amount + 1", "$source.missing + 1",
            "date(0) + 60", "$source.big + 1", "1 / 0", "$source.name + 1", "-$source.name", "$source.owner + 1",
            "string($source.n)", "number($source.count)", "integer($source.price)", "double($source.flag)",
            "date($source.day)", "parseDate($source.day, \"yyyy-MM-dd\")", "timeInterval($source.stamp)",
            "lowercase($source.name)", "uppercase($source.name)", "trim($source.name)",
            "concat($source.name, $source.n, nil)",
            "coalesce($source.missing, $source.n)", "coalesce($source.missing)", "now()", "uuid()",
            "destinationInstances(\"PersonToPerson\", $source.owner)", "destinationInstances($source.owner)",
            "destinationInstances($source.missing)", "destinationInstances(1, $source.owner)",
            "destinationInstances($source.n)",
            "formatDate($source.stamp, \"yyyy-MM-dd HH:mm:ss\")",
            "formatDate($source.stamp, \"dd.MM.yyyy 'at' HH'h'mm\")",
            "formatDate($source.stamp, \"EEE, d MMM yyyy\")", "formatDate($source.old, \"yyyy-MM-dd\")",
            "formatDate($source.missing, \"yyyy\")", "formatDate($source.n, \"yyyy\")",
            "formatDate($source.stamp, $source.n)",
            "$source", "$source.owner", "$source.nothing", "string($source.owner)", "lowercase($source.n)",
        ]
        for text in texts {
            let expression = try ValueExpression(text)
            let compiled = CompiledExpression(expression)
            let walked = outcome { () throws(MigrationError) in
                try expression.evaluate(source: source, environment: environment)
            }
            let fast = outcome { () throws(MigrationError) in
                try compiled.evaluate(source: source, environment: environment)
            }
            #expect(fast == walked, "\(text)")
        }
    }

    @Test func formatsDatesAsDateFormatterDoes() throws {
        var random = SplitMix64(state: 2026)
        let formats = [
            "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss'Z'", "dd/MM/yyyy", "HH:mm", "'Day' dd 'of' MM, yyyy''ss",
            "yyyyMMddHHmmss",
        ]
        for format in formats {
            let expression = try ValueExpression("formatDate($source.stamp, \"\(format)\")")
            let compiled = CompiledExpression(expression)
            for _ in 0..<400 {
                // From 1500 to 10100, so that both ends of the fast range and beyond are covered.
                let seconds =
                    Double(random.next() % 268_000_000_000) / 1000 - 15_800_000_000 + Double(random.next() % 1000) / 997
                let events = FakeSource(values: ["stamp": .value(.date(Date(timeIntervalSinceReferenceDate: seconds)))])
                let walked = try expression.evaluate(source: events, environment: environment)
                #expect(
                    try compiled.evaluate(source: events, environment: environment) == walked, "\(format) \(seconds)")
            }
        }
    }
}
