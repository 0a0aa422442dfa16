import Foundation
import TernCore
import Testing

@Suite struct FetchSortTests {
    @Test func nilSortsFirstAscendingAndLastDescending() {
        let ascending = FetchSort(key: "a")
        let descending = FetchSort(key: "a", ascending: false)
        #expect(ascending.compare(nil, .integer(1)) == .orderedAscending)
        #expect(ascending.compare(.integer(1), nil) == .orderedDescending)
        #expect(ascending.compare(nil, nil) == .orderedSame)
        #expect(descending.compare(nil, .integer(1)) == .orderedDescending)
        #expect(ascending.compare(.double(.nan), .integer(-5)) == .orderedAscending)  // NaN is stored as NULL.
    }

    @Test func valuesCompareAcrossNumberKindsAndByKind() {
        let sort = FetchSort(key: "a")
        #expect(sort.compare(.integer(2), .double(2.5)) == .orderedAscending)
        #expect(sort.compare(.decimal(3), .integer(2)) == .orderedDescending)
        #expect(sort.compare(.bool(true), .integer(1)) == .orderedSame)
        #expect(sort.compare(.integer(100), .string("1")) == .orderedAscending)  // Numbers before text.
        #expect(sort.compare(.data(Data([0])), .string("z")) == .orderedDescending)  // Bytes after text.
        #expect(sort.compare(.data(Data([1, 2])), .data(Data([1, 3]))) == .orderedAscending)
        #expect(sort.compare(.data(Data([1])), .data(Data([1, 0]))) == .orderedAscending)
        #expect(sort.compare(.date(.distantPast), .date(.distantFuture)) == .orderedAscending)
        #expect(sort.compare(.string("b"), .string("B")) == .orderedDescending)
        #expect(FetchSort(key: "a", caseInsensitive: true).compare(.string("b"), .string("B")) == .orderedSame)
        #expect(FetchSort(key: "a", caseInsensitive: true).compare(.string("a"), .string("B")) == .orderedAscending)
    }

    @Test func multiKeySortIsStable() throws {
        typealias Row = [String: PredicateValue]
        func row(_ id: Int64, _ last: String?, _ age: Int64?) -> Row {
            [
                "id": .single(.integer(id)), "last": .single(last.map { .string($0) }),
                "age": .single(age.map { .integer($0) }),
            ]
        }
        let rows = [
            row(1, "smith", 30), row(2, "Jones", 40), row(3, "Smith", 30), row(4, nil, 50),
            row(5, "jones", 40), row(6, "Smith", 20),
        ]
        let order = [FetchSort(key: "last", caseInsensitive: true), FetchSort(key: "age", ascending: false)]
        let sorted = try FetchSort.sorted(rows, by: order)
        #expect(sorted.map { $0["id"] } == [4, 2, 5, 1, 3, 6].map { .single(.integer($0)) })
        #expect(try FetchSort.compare(rows[0], rows[2], by: order) == .orderedSame)
        #expect(try FetchSort.compare(rows[0], rows[5], by: order) == .orderedAscending)
        #expect(try FetchSort.sorted(rows, by: []).map { $0["id"] } == rows.map { $0["id"] })
    }
}
