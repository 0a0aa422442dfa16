import Foundation
import TernCore
import TernMigration
import Testing

/// A source object made of fixed key path values.
struct FakeSource: ExpressionSource {
    var values: [String: ExpressionValue] = [:]

    func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue {
        guard let value = values[keyPath.joined(separator: ".")] else {
            throw MigrationError(.evaluationFailed, "no key path \(keyPath.joined(separator: "."))")
        }
        return value
    }
}

@Suite struct ValueExpressionEvaluationTests {
    let reference = Date(timeIntervalSinceReferenceDate: 0)
    let source = FakeSource(values: [
        "n": .value(.integer(7)),
        "price": .value(.double(2.5)),
        "amount": .value(.decimal(Decimal(string: "1.25") ?? 0)),
        "name": .value(.string("  Ada Lovelace \n")),
        "count": .value(.string("42")),
        "ratio": .value(.string("0.75")),
        "missing": .value(nil),
        "stamp": .value(.date(Date(timeIntervalSinceReferenceDate: 86_400 * 365 + 3_723))),
        "owner": .objects([RowReference(entityName: "Person", primaryKey: 3)]),
        "cars": .objects([
            RowReference(entityName: "Car", primaryKey: 1), RowReference(entityName: "Car", primaryKey: 2),
        ]),
        "flag": .value(.bool(true)),
    ])

    func value(_ text: String) throws -> AttributeValue? {
        let environment = ExpressionEnvironment(now: reference) {
            UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID()
        }
        guard case .value(let value) = try ValueExpression(text).evaluate(source: source, environment: environment)
        else {
            Issue.record("\(text) gave objects")
            return nil
        }
        return value
    }

    @Test func computesArithmetic() throws {
        #expect(try value("1 + 2 * $source.n") == .integer(15))
        #expect(try value("$source.n / 2") == .double(3.5))
        #expect(try value("$source.price * 2 - 1") == .double(4))
        #expect(try value("-$source.n") == .integer(-7))
        #expect(try value("$source.amount + 1") == .decimal(Decimal(string: "2.25") ?? 0))
        #expect(try value("$source.missing + 1") == nil)
        #expect(try value("date(0) + 60") == .date(reference.addingTimeInterval(60)))
    }

    @Test func reportsArithmeticFailuresWithoutValues() {
        for text in [
            "9223372036854775807 + 1", "-9223372036854775808 * -1", "1 / 0", "$source.name + 1", "-$source.name",
        ] {
            #expect(throws: MigrationError.self, "\(text)") { try value(text) }
        }
        do {
            _ = try value("$source.name * 2")
            Issue.record("text times a number must fail")
        } catch let error as MigrationError {
            #expect(error.code == .evaluationFailed)
            #expect(!error.description.contains("Ada"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func convertsValues() throws {
        #expect(try value("string($source.n)") == .string("7"))
        #expect(try value("string($source.flag)") == .string("true"))
        #expect(try value("string(date(0))") == .string("2001-01-01T00:00:00.000Z"))
        #expect(try value("number($source.count)") == .integer(42))
        #expect(try value("number($source.ratio)") == .double(0.75))
        #expect(try value("integer($source.ratio)") == .integer(0))
        #expect(try value("integer(-2.9)") == .integer(-2))
        #expect(try value("integer($source.flag)") == .integer(1))
        #expect(try value("double($source.count)") == .double(42))
        #expect(try value("date(86400)") == .date(reference.addingTimeInterval(86_400)))
        #expect(try value("date('2001-01-02T00:00:00Z')") == .date(reference.addingTimeInterval(86_400)))
        #expect(try value("timeInterval($source.stamp)") == .double(86_400 * 365 + 3_723))
        #expect(try value("string(nil)") == nil)
        #expect(throws: MigrationError.self) { try value("number('forty')") }
        #expect(throws: MigrationError.self) { try value("integer(1e30)") }
        #expect(throws: MigrationError.self) { try value("timeInterval($source.n)") }
    }

    @Test func formatsAndParsesDatesInUTCWithThePOSIXLocale() throws {
        #expect(try value(#"formatDate($source.stamp, "yyyy-MM-dd HH:mm")"#) == .string("2002-01-01 01:02"))
        #expect(try value(#"formatDate($source.stamp, "EEE d MMM yyyy")"#) == .string("Tue 1 Jan 2002"))
        #expect(
            try value(#"parseDate("2002-01-01 01:02", "yyyy-MM-dd HH:mm")"#)
                == .date(Date(timeIntervalSinceReferenceDate: 86_400 * 365 + 3_720)))
        #expect(throws: MigrationError.self) { try value(#"parseDate("yesterday", "yyyy-MM-dd")"#) }
        #expect(try value(#"formatDate($source.missing, "yyyy")"#) == nil)
    }

    @Test func transformsText() throws {
        #expect(try value("trim($source.name)") == .string("Ada Lovelace"))
        #expect(try value("uppercase(trim($source.name))") == .string("ADA LOVELACE"))
        #expect(try value("lowercase('ÀB')") == .string("àb"))
        #expect(try value("concat('n=', $source.n, $source.missing, '!')") == .string("n=7!"))
        #expect(try value("coalesce($source.missing, nil, $source.n, 3)") == .integer(7))
        #expect(try value("coalesce($source.missing)") == nil)
    }

    @Test func readsTheEnvironment() throws {
        #expect(try value("now()") == .date(reference))
        #expect(try value("uuid()") == .uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000001") ?? UUID()))
        let fresh = try ValueExpression("uuid()")
        let first = try fresh.evaluate(source: source)
        let second = try fresh.evaluate(source: source)
        #expect(first != second)
    }

    @Test func marksDestinationInstancesForTheEngine() throws {
        let named = try ValueExpression(#"destinationInstances("CarToCar", $source.cars)"#).evaluate(source: source)
        #expect(
            named
                == .destinationInstances(
                    mapping: "CarToCar",
                    sources: [
                        RowReference(entityName: "Car", primaryKey: 1), RowReference(entityName: "Car", primaryKey: 2),
                    ]))
        let any = try ValueExpression("destinationInstances($source.owner)").evaluate(source: source)
        #expect(
            any == .destinationInstances(mapping: nil, sources: [RowReference(entityName: "Person", primaryKey: 3)]))
        let empty = try ValueExpression("destinationInstances($source.missing)").evaluate(source: source)
        #expect(empty == .destinationInstances(mapping: nil, sources: []))
        #expect(throws: MigrationError.self) {
            try ValueExpression("destinationInstances($source.n)").evaluate(source: source)
        }
        #expect(throws: MigrationError.self) { try ValueExpression("string($source.owner)").evaluate(source: source) }
    }

    @Test func convertsValuesForStorage() throws {
        #expect(try AttributeValue.integer(3).converted(to: .double) == .double(3))
        #expect(try AttributeValue.double(3.9).converted(to: .integer16) == .integer(3))
        #expect(try AttributeValue.integer(1).converted(to: .boolean) == .bool(true))
        #expect(try AttributeValue.integer(5).converted(to: .decimal) == .decimal(5))
        // An integer keeps its 64 bits in a narrower type, as in Core Data's SQLite stores; a
        // floating-point number must fit.
        #expect(try AttributeValue.integer(70_000).converted(to: .integer16) == .integer(70_000))
        #expect(throws: MigrationError.self) { try AttributeValue.double(70_000.5).converted(to: .integer16) }
        #expect(throws: MigrationError.self) { try AttributeValue.string("3").converted(to: .integer32) }
        #expect(throws: MigrationError.self) { try AttributeValue.date(reference).converted(to: .string) }
    }
}
