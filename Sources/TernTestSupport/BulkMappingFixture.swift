public import Foundation
public import TernCore

/// The store and mapping that hold mappings compiled to SQL (#24) to the Swift path's results on
/// every SQL store: a source entity with every type that has an SQL form, a two-pass mapping that
/// formats dates, takes time intervals, widens integers and sets a relationship from the first
/// pass's associations, and dates at the edges where SQL and Swift could disagree.
///
/// ```swift
/// let rows = BulkMappingFixture.rows(dates: BulkMappingFixture.dates())
/// let mapping = try StepMapping(jsonData: Data(BulkMappingFixture.mapping.utf8))
/// ```
public enum BulkMappingFixture {
    /// `v1` (`Event`) and `v2` (`Printed` and `Stamp`, related one to one).
    ///
    /// - Throws: `TernError` if the model is invalid.
    public static func model() throws -> VersionedModel {
        try VersionedModel("Events") {
            ModelVersion("v1") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("name", .string)
                    Attribute("stamp", .date)
                    Attribute("flag", .boolean)
                    Attribute("small", .integer16)
                }
            }
            ModelVersion("v2") {
                Entity("Printed") {
                    Attribute("id", .integer64)
                    Attribute("printed", .string)
                    Attribute("seconds", .double)
                    Attribute("name", .string)
                    Attribute("flag", .boolean)
                    Attribute("label", .string)
                    Attribute("wide", .integer32)
                    Attribute("ratio", .double)
                    Attribute("kept", .string).default(.string("default"))
                    Attribute("later", .date)
                    Attribute("days", .double)
                    Attribute("shiftedPrinted", .string)
                    Attribute("share", .double)
                    Relationship("stamp", to: "Stamp", inverse: "printed")
                }
                Entity("Stamp") {
                    Attribute("id", .integer64)
                    Attribute("stamp", .date)
                    Relationship("printed", to: "Printed", inverse: "stamp")
                }
            }
        }
    }

    /// Two passes: the first compiles to SQL; the second too, and its relationship is set in
    /// Swift from the first one's associations. The date format has literal text, a `%` and a
    /// double quote, which `strftime` and `to_char` each need written their own way.
    public static let mapping = #"""
        {"source": "v1", "destination": "v2", "passes": [
          {"name": "One", "entityMappings": [
            {"name": "EventToPrinted", "kind": "transform", "source": "Event", "destination": "Printed",
             "attributes": {"id": "$source.id", "name": "$source.name", "flag": "$source.flag",
               "printed": "formatDate($source.stamp, \"yyyy-MM-dd'T'HH:mm:ss '100%' 'at' \\\"MM\\\"\")",
               "seconds": "timeInterval($source.stamp)", "label": "\"fixed\"", "wide": "$source.small",
               "ratio": "$source.id", "later": "$source.stamp - 0.25", "days": "timeInterval($source.stamp) / 86400",
               "share": "$source.small / 3",
               "shiftedPrinted": "formatDate($source.stamp + 0.5, \"yyyy-MM-dd HH:mm:ss\")"}}]},
          {"name": "Two", "entityMappings": [
            {"name": "EventToStamp", "kind": "transform", "source": "Event", "destination": "Stamp",
             "attributes": {"id": "$source.id", "stamp": "$source.stamp"},
             "relationships": {"printed": "destinationInstances(\"EventToPrinted\", $source)"}},
            {"kind": "remove", "source": "Event"}]}]}
        """#

    /// Dates at the edges the two paths could disagree on: before 1970, after 2038, a leap
    /// second's neighbours, fractions just below a whole second, whole seconds (stored as integers).
    public static let edgeDates: [Double] = [
        0, 0.5, 0.9996, -0.0004, -0.9996, -1_000_000_000.25, -978_307_200, -978_307_200.001, 1_200_000_000.999_9,
        2_200_000_000, 504_921_599, 504_921_599.999, 504_921_600, 504_921_600.000_1, 7_000_000_000.5,
        -12_200_000_000, 252_000_000_000, 86_399.999_999, -86_400.000_001, 123.456_789_012,
    ]

    /// The edge dates, then `count` seeded random ones from 1600 to 9900 (whole seconds,
    /// milliseconds and arbitrary fractions), then nil.
    public static func dates(count: Int = 150) -> [Double?] {
        var generator = SplitMix64(state: 24)
        var dates: [Double?] = edgeDates
        for _ in 0..<count {
            let seconds = Double.random(in: -12_000_000_000...250_000_000_000, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: dates.append(seconds.rounded(.down))
            case 1: dates.append((seconds * 1000).rounded(.down) / 1000)
            default: dates.append(seconds)
            }
        }
        dates.append(nil)
        return dates
    }

    /// One `Event` row per date, with nil names and flags of both values.
    ///
    /// - Parameters:
    ///   - dates: The `stamp` of each row.
    ///   - denseFrom: Nil for gaps in the keys from the 71st row on (the destination keys and
    ///     association runs must not follow them); otherwise the first of consecutive keys.
    public static func rows(dates: [Double?], denseFrom: Int64? = nil) -> [StoreRow] {
        dates.enumerated().map { index, date in
            var attributes: [String: AttributeValue] = [
                "id": .integer(Int64(index) * 7 - 20), "flag": .bool(index % 3 == 0),
                "small": .integer(Int64(index * 1000 - 9000)),
            ]
            if index % 5 != 4 { attributes["name"] = .string("événement \(index)") }
            if let date { attributes["stamp"] = .date(Date(timeIntervalSinceReferenceDate: date)) }
            let key = denseFrom.map { $0 + Int64(index) } ?? Int64(index < 70 ? index + 1 : index * 3)
            return StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: key), version: 1, attributes: attributes)
        }
    }

    /// The text the mapping's first destination object gets: date 0 formatted.
    public static let firstPrinted = "2001-01-01T00:00:00 100% at \"01\""

    // MARK: - Text, conversions and integer arithmetic

    /// `v1` (`Item`) and `v2` (`Label`), for the text functions, conversions, `coalesce` and
    /// integer arithmetic that run as SQL.
    ///
    /// - Throws: `TernError` if the model is invalid.
    public static func textModel() throws -> VersionedModel {
        try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") {
                    Attribute("id", .integer64)
                    Attribute("name", .string)
                    Attribute("count", .integer32)
                    Attribute("flag", .boolean)
                    Attribute("weight", .double)
                    Attribute("code", .string)
                    Attribute("day", .string)
                    Attribute("week", .string)
                    Attribute("iso", .string)
                    Attribute("ref", .uuid)
                    Attribute("amount", .string)
                    Relationship("owner", to: "Owner", inverse: "items")
                }
                Entity("Owner") {
                    Attribute("name", .string)
                    Attribute("rank", .integer16)
                    Attribute("active", .boolean)
                    Attribute("since", .date)
                    Relationship("items", to: "Item", inverse: "owner").toMany()
                    Relationship("team", to: "Team", inverse: "owners")
                }
                Entity("Team") {
                    Attribute("name", .string)
                    Attribute("founded", .date)
                    Relationship("owners", to: "Owner", inverse: "team").toMany()
                }
            }
            ModelVersion("v2") {
                Entity("Label") {
                    Attribute("id", .integer64)
                    for name in ["lower", "upper", "trimmed", "text", "joined", "first"] { Attribute(name, .string) }
                    for name in ["sum", "product", "negated", "difference", "flagNumber", "firstCount"] {
                        Attribute(name, .integer64)
                    }
                    Attribute("ratio", .double)
                    Attribute("flagRatio", .double)
                    Attribute("ownerName", .string)
                    Attribute("ownerRank", .integer64)
                    Attribute("ownerActive", .boolean)
                    Attribute("stamped", .date)
                    Attribute("when", .date)
                    Attribute("scaled", .double)
                    Attribute("shifted", .double)
                    Attribute("code", .integer64)
                    Attribute("ownerSince", .string)
                    Attribute("teamName", .string)
                    Attribute("teamFounded", .double)
                    Attribute("weightShare", .double)
                    Attribute("countShare", .double)
                    Attribute("later", .date)
                    Attribute("sinceSeconds", .integer64)
                    Attribute("day", .date)
                    Attribute("week", .date)
                    Attribute("iso", .date)
                    Attribute("ref", .uuid)
                    Attribute("token", .uuid)
                    Attribute("amount", .double)
                    Attribute("numberAmount", .double)
                    Attribute("numberCode", .double)
                }
            }
        }
    }

    /// One mapping from `Item` to `Label` with a form of each function that has one (`now()`
    /// too: give the migrations compared ``textNow``), and attributes of the item's owner read
    /// through the to-one relationship.
    public static let textMapping = #"""
        {"source": "v1", "destination": "v2", "entityMappings": [
          {"name": "ItemToLabel", "kind": "transform", "source": "Item", "destination": "Label",
           "attributes": {"id": "$source.id", "lower": "lowercase($source.name)", "upper": "uppercase($source.name)",
             "trimmed": "trim($source.name)", "text": "string($source.id)",
             "joined": "concat($source.name, \"/\", $source.count, \"/\", $source.flag)",
             "first": "coalesce($source.name, string($source.flag), \"none\")",
             "sum": "$source.id + $source.count", "product": "$source.count * 3", "negated": "-$source.id",
             "difference": "$source.count - $source.id", "flagNumber": "integer($source.flag)",
             "ratio": "double($source.count)", "flagRatio": "number($source.flag)",
             "firstCount": "coalesce($source.count, 7)", "ownerName": "lowercase($source.owner.name)",
             "ownerRank": "$source.owner.rank + 1", "ownerActive": "$source.owner.active", "stamped": "now()",
             "when": "date($source.count)", "scaled": "$source.weight * 2.5",
             "shifted": "$source.weight * $source.count", "code": "integer($source.code)",
             "ownerSince": "formatDate($source.owner.since, \"yyyy-MM-dd HH:mm:ss\")",
             "teamName": "uppercase($source.owner.team.name)", "teamFounded": "timeInterval($source.owner.team.founded)",
             "weightShare": "$source.weight / 0.5", "countShare": "$source.count / 3", "later": "now() + $source.count",
             "sinceSeconds": "integer($source.owner.since)",
             "day": "parseDate($source.day, \"yyyy-MM-dd HH:mm:ss\")",
             "week": "parseDate($source.week, \"dd.MM.yyyy 'à' HH'h'mm\")", "iso": "date($source.iso)",
             "ref": "$source.ref", "amount": "double($source.amount)",
             "numberAmount": "number($source.amount)", "numberCode": "number($source.code)"}},
          {"kind": "remove", "source": "Owner"}, {"kind": "remove", "source": "Team"}]}
        """#

    /// The date `now()` gives in migrations with ``textMapping`` that are compared.
    public static let textNow = Date(timeIntervalSinceReferenceDate: 812_345_678.125)

    /// ``textMapping`` with a source filter.
    ///
    /// - Parameter filter: An NSPredicate-format predicate on `Item`.
    public static func textMapping(filter: String) -> String {
        let quoted = (try? JSONEncoder().encode(filter)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return textMapping.replacingOccurrences(
            of: #""destination": "Label","#, with: #""destination": "Label", "filter": "# + quoted + ",")
    }

    /// Names where SQL and Swift could disagree: white space of every kind at the ends, letters
    /// outside ASCII (which change case otherwise, or in more than one character), and text
    /// that is empty.
    public static let edgeNames = [
        "Plain", "  Spaces  ", "\tTabs\n", "MiXeD 123 ,;!", "", " ", "\u{0B}\u{0C}\r x \r\n", "Émile", "straße",
        "ﬁne", "İstanbul", "non-breaking\u{00A0}", "\u{2003}em space\u{2003}", "\u{85}next line", "ÀÉÎÕÜ",
        "I", "i",
    ]

    /// `Item` rows: the edge names, then `count` seeded random ones of printable ASCII and white
    /// space, some nil; counts and flags of every kind, some nil; ids far from overflow; weights
    /// from subnormal to 1e290 and infinity (not -0.0, which SQLite stores as 0.0 and PostgreSQL
    /// keeps); most with an owner; codes of integers in the forms SQL reads as Swift. The five `Owner` rows
    /// and two `Team` rows come last.
    ///
    /// - Parameters:
    ///   - count: How many random names follow the edge ones.
    ///   - includesNUL: Whether a name has a NUL inside (PostgreSQL text cannot hold one).
    ///   - isKept: Which names the rows keep; the others' items are left out.
    public static func textRows(
        count: Int = 120, includesNUL: Bool = true, keepingNames isKept: (String) -> Bool = { _ in true }
    ) -> [StoreRow] {
        var generator = SplitMix64(state: 31)
        var names: [String?] = edgeNames + (includesNUL ? ["NUL\u{0}inside"] : []) + [nil]
        let alphabet = Array(" \t\n\u{0B}\u{0C}\r") + (32...126).compactMap { Unicode.Scalar($0).map(Character.init) }
        for _ in 0..<count {
            let length = Int.random(in: 0...12, using: &generator)
            names.append(
                String((0..<length).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }))
        }
        names = names.filter { $0.map(isKept) ?? true }
        let days = Self.dayTexts(count: names.count)
        let amounts = Self.amountTexts(count: names.count)
        let items = names.enumerated().map { index, name in
            var attributes: [String: AttributeValue] = [
                "id": .integer(
                    [0, 1, -1, 4_000_000_000_000_000_000, -4_000_000_000_000_000_000][index % 5] + Int64(index))
            ]
            if let name { attributes["name"] = .string(name) }
            if index % 7 != 3 {
                attributes["count"] = .integer([0, Int64(Int32.max), Int64(Int32.min), 42, -7][index % 5])
            }
            if index % 4 != 1 { attributes["flag"] = .bool(index % 3 == 0) }
            let weights: [Double] = [
                0.1, -2.0, 1e290, -1e290, .leastNonzeroMagnitude, 123.456, .infinity, .leastNormalMagnitude / 3, 42,
                -7.5,
            ]
            if index % 11 != 7 { attributes["weight"] = .double(weights[index % weights.count]) }
            let codes = ["42", " -7\t", "+12", "007", "-999999999999999999", "0", "\t 123456789012345678 ", "-0"]
            if index % 9 != 4 { attributes["code"] = .string(codes[index % codes.count]) }
            if index % 8 != 5 {
                attributes["ref"] = .uuid(
                    UUID(
                        uuid: (
                            UInt8(index % 256), 1, 2, 3, 4, 5, 0x46, 7, 0x88, 9, 10, 11, 12, 13, 14, UInt8(index / 256)
                        )))
            }
            if let amount = amounts[index] { attributes["amount"] = .string(amount) }
            if let day = days[index] {
                attributes["day"] = .string(day.day)
                attributes["week"] = .string(day.week)
                attributes["iso"] = .string(day.iso)
            }
            let owner =
                index % 6 == 5 ? [:] : ["owner": RowReference(entityName: "Owner", primaryKey: Int64(index % 5 + 1))]
            return StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(index + 1)), version: 1,
                attributes: attributes, toOne: owner)
        }
        return items + ownerRows(of: items)
    }

    /// The texts of `count` dates in the formats the text mapping reads (`yyyy-MM-dd HH:mm:ss`,
    /// `dd.MM.yyyy 'à' HH'h'mm`, ISO 8601): the first and last second `DatePattern` formats, leap days and
    /// their neighbours, then seeded random whole seconds from 1583 to 9999, one in ten nil.
    static func dayTexts(count: Int) -> [(day: String, week: String, iso: String)?] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        // Seconds since 2001: 1583-01-01, 9999-12-31 23:59:59, 29 February 2000 and 1600, 28
        // February 1900 (no leap day), the reference date and the second before it.
        var seconds: [Double] = [
            -13_190_860_800, 252_423_993_599, -26_827_200, -12_649_305_600, -3_156_969_601, 0, -1,
        ]
        var generator = SplitMix64(state: 57)
        while seconds.count < count {
            seconds.append(Double(Int64.random(in: -13_190_860_800...252_423_993_599, using: &generator)))
        }
        return seconds.prefix(count).enumerated().map { index, value in
            guard index % 10 != 9 else { return nil }
            let fields = calendar.dateComponents(
                [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSinceReferenceDate: value))
            let (year, month, day) = (fields.year ?? 0, fields.month ?? 0, fields.day ?? 0)
            let (hour, minute, second) = (fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0)
            return (
                String(format: "%04d-%02d-%02d %02d:%02d:%02d", year, month, day, hour, minute, second),
                String(format: "%02d.%02d.%04d à %02dh%02d", day, month, year, hour, minute),
                String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", year, month, day, hour, minute, second)
            )
        }
    }

    /// Decimal texts SQL reads as Swift's `Double` does (no negative zero, which SQLite stores
    /// as 0.0 and PostgreSQL keeps): edge ones (15 digits, zeros, signs,
    /// spaces and tabs around, values with no exact double), then seeded random ones of 1 to 15
    /// digits with a point anywhere or none; one in twelve nil.
    static func amountTexts(count: Int) -> [String?] {
        var texts = [
            "3.14", "-0.5", "  +12.250\t", "0.1", "123456789012345", "+0.0", "99999999999999.9", "7",
            "0.00000000000001",
            "-999999999999999", "2.675", "1.005", "0.3", "00012.5000",
        ]
        var generator = SplitMix64(state: 91)
        while texts.count < count {
            let length = Int.random(in: 1...15, using: &generator)
            var digits = String((0..<length).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
            let point = Int.random(in: 0...length, using: &generator)
            if point > 0 && point < length { digits.insert(".", at: digits.index(digits.startIndex, offsetBy: point)) }
            // No negative zero, which SQLite stores as 0.0 and PostgreSQL keeps.
            let sign =
                digits.allSatisfy { $0 == "0" || $0 == "." }
                ? "" : ["", "-", "+"][Int.random(in: 0...2, using: &generator)]
            let (before, after) = (
                [" ", "", "\t"][Int.random(in: 0...2, using: &generator)], [" ", ""][texts.count % 2]
            )
            texts.append(before + sign + digits + after)
        }
        return texts.prefix(count).enumerated().map { index, text in index % 12 == 11 ? nil : text }
    }

    /// The five owners of the items, each with its items: ASCII names (one nil), ranks up to
    /// `Int16.max`, activity of both kinds and none, dates from 1601 to 9000 (one nil), and
    /// teams (one owner has none); then the two teams, one without a name.
    static func ownerRows(of items: [StoreRow]) -> [StoreRow] {
        let names: [String?] = ["Ann", " Bob ", "cara", "DAN", nil]
        let ranks: [Int64?] = [1, Int64(Int16.max), Int64(Int16.min), nil, 0]
        let active: [Bool?] = [true, false, nil, true, false]
        let since: [Double?] = [-12_600_000_000.5, 0.999_6, nil, 221_000_000_000.25, -1]
        let teams = [
            RowReference(entityName: "Team", primaryKey: 1), RowReference(entityName: "Team", primaryKey: 2),
        ]
        let ownerTeams: [RowReference?] = [teams[0], teams[1], teams[0], nil, teams[1]]
        let owners = (0..<5).map { index in
            var attributes: [String: AttributeValue] = [:]
            if let name = names[index] { attributes["name"] = .string(name) }
            if let rank = ranks[index] { attributes["rank"] = .integer(rank) }
            if let flag = active[index] { attributes["active"] = .bool(flag) }
            if let date = since[index] { attributes["since"] = .date(Date(timeIntervalSinceReferenceDate: date)) }
            let reference = RowReference(entityName: "Owner", primaryKey: Int64(index + 1))
            return StoreRow(
                reference: reference, version: 1, attributes: attributes,
                toOne: ownerTeams[index].map { ["team": $0] } ?? [:],
                toMany: ["items": items.filter { $0.toOne["owner"] == reference }.map(\.reference)])
        }
        let teamRows = teams.enumerated().map { index, team in
            StoreRow(
                reference: team, version: 1,
                attributes: index == 0
                    ? ["name": .string("Red"), "founded": .date(Date(timeIntervalSinceReferenceDate: -400.5))]
                    : [:],
                toMany: ["owners": owners.filter { $0.toOne["team"] == team }.map(\.reference)])
        }
        return owners + teamRows
    }
}
