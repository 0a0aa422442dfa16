import Foundation
import TernFormats
import TernTestSupport

/// A corpus folder's `REPLAY.json`: the repository's own Core Data migration tests, as data
/// (the format is described in `Tests/Fixtures/RealWorld/README.md`).
struct ReplayFile: Decodable, Sendable {
    /// Where the expectations come from.
    var source: String?
    /// Expectations shared by several replays, by name.
    var expectations: [String: ReplayExpectation]?
    /// The replays.
    var replays: [Replay]
}

/// One migration test of an app: a store, the target version, what the test expects afterwards.
struct Replay: Decodable, Sendable {
    /// The app's test.
    var name: String
    /// The test's file in its repository.
    var test: String
    /// The store item's path in the folder.
    var store: String
    /// The model item's path; the store item's model when nil.
    var model: String?
    /// The version the test migrates to.
    var to: String
    /// The version order the test walks (`--order`), oldest first.
    var order: [String]?
    /// The mapping models the test uses (`--mapping`), paths in the folder.
    var mappings: [String]?
    /// Names of shared expectations that apply.
    var expect: [String]?
    /// Objects of each entity afterwards, subentities included.
    var counts: [String: ReplayJSON]?
    /// Objects of every entity afterwards.
    var total: Int?
    /// Objects and their values afterwards.
    var objects: [ObjectExpectation]?
    /// The store is already at `to`: the command leaves every byte as it was.
    var unchanged: Bool?
    /// Why the replay is known to fail today; nil when it passes.
    var expectedFailure: String?
    /// Anything a reader should know about the replay.
    var note: String?

    /// This replay's own expectation and the shared ones it names.
    func expectations(in file: ReplayFile) -> [ReplayExpectation] {
        let own = ReplayExpectation(counts: counts, total: total, objects: objects)
        return [own] + (expect ?? []).compactMap { file.expectations?[$0] }
    }
}

/// Counts and objects a migrated store must hold.
struct ReplayExpectation: Decodable, Sendable {
    /// Objects of each entity, subentities included: a number, `{"atLeast": n}`, or
    /// `{"absent": true}` for an entity the version no longer has.
    var counts: [String: ReplayJSON]?
    /// Objects of every entity.
    var total: Int?
    /// Objects and their values.
    var objects: [ObjectExpectation]?
}

/// One object, found by some of its values, and what else it must hold.
struct ObjectExpectation: Decodable, Sendable {
    /// A key to sort an entity's objects by.
    struct SortKey: Decodable, Sendable {
        /// The attribute.
        var by: String
        /// Whether the order is descending.
        var descending: Bool?
    }

    /// The entity; its subentities' objects count as its own, as a fetch has them.
    var entity: String
    /// The values that select exactly one object.
    var `where`: [String: ReplayJSON]
    /// The object is the first when the entity's objects are sorted so.
    var first: SortKey?
    /// What the object holds, by property.
    var values: [String: ReplayJSON]?
}

/// A JSON value, read exactly (a number is never a Boolean).
enum ReplayJSON: Decodable, Hashable, Sendable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([ReplayJSON])
    case object([String: ReplayJSON])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ReplayJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ReplayJSON].self))
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let value): "\(value)"
        case .number(let value): value == value.rounded() && abs(value) < 1e15 ? "\(Int64(value))" : "\(value)"
        case .string(let value): "\"\(value)\""
        case .array(let values): "[\(values.map(\.description).joined(separator: ", "))]"
        case .object(let fields):
            "{\(fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))}"
        }
    }
}

/// A `tern export` JSON document, indexed for the expectations.
struct ReplayExport {
    /// Records by their own (most derived) entity.
    var records: [String: [[String: ReplayJSON]]]
    /// Records by `_id`.
    var byID: [String: [String: ReplayJSON]] = [:]
    /// Each entity's parent in the migrated version.
    var parents: [String: String]

    init(_ data: Data, parents: [String: String]) throws {
        records = try JSONDecoder().decode([String: [[String: ReplayJSON]]].self, from: data)
        self.parents = parents
        for record in records.values.joined() {
            if case .string(let id)? = record["_id"] { byID[id] = record }
        }
    }

    /// The entity and every entity below it.
    func hierarchy(of entity: String) -> Set<String> {
        var names: Set<String> = [entity]
        var grew = true
        while grew {
            let below = parents.filter { names.contains($0.value) }.map(\.key)
            grew = !Set(below).isSubset(of: names)
            names.formUnion(below)
        }
        return names
    }

    /// The objects a fetch of the entity returns: its own and its subentities'.
    func objects(of entity: String) -> [[String: ReplayJSON]] {
        hierarchy(of: entity).sorted().flatMap { records[$0] ?? [] }
    }

    // MARK: - Matching

    /// What in a record does not hold the expected values; empty when all hold.
    func mismatches(of values: [String: ReplayJSON], in record: [String: ReplayJSON]) -> [String] {
        values.sorted { $0.key < $1.key }.compactMap { key, expected in
            mismatch(expected, record[key]).map { "\(key): \($0)" }
        }
    }

    /// Why a value (nil when the record has no such key) does not meet an expectation, or nil.
    func mismatch(_ expected: ReplayJSON, _ actual: ReplayJSON?) -> String? {
        guard case .object(let rule) = expected else {
            guard let actual else { return "absent, expected \(expected)" }
            return actual == expected ? nil : "\(actual) instead of \(expected)"
        }
        if rule["absent"] == .bool(true) { return actual.map { "\($0) instead of no such property" } }
        guard let actual else { return "absent, expected \(expected)" }
        if rule["notNull"] == .bool(true) { return actual == .null ? "null, expected a value" : nil }
        if case .number(let seconds)? = rule["date"] ?? rule["date1970"] {
            let reference = rule["date"] != nil ? seconds : seconds - Date.timeIntervalBetween1970AndReferenceDate
            guard case .string(let text) = actual, let date = ISO8601Text.date(from: text) else {
                return "\(actual) is not a date"
            }
            // The expectations are written with microseconds, as the apps' tests print them.
            return abs(date.timeIntervalSinceReferenceDate - reference) <= 1e-6
                ? nil : "\(actual), expected \(expected)"
        }
        if rule["hasPrefix"] != nil || rule["hasSuffix"] != nil {
            guard case .string(let text) = actual else { return "\(actual) is not a string" }
            if case .string(let prefix)? = rule["hasPrefix"], !text.hasPrefix(prefix) {
                return "\(actual) does not begin with \(prefix)"
            }
            if case .string(let suffix)? = rule["hasSuffix"], !text.hasSuffix(suffix) {
                return "\(actual) does not end with \(suffix)"
            }
            return nil
        }
        if case .number(let count)? = rule["count"] {
            guard case .array(let items) = actual else { return "\(actual) is not a to-many relationship" }
            return Double(items.count) == count ? nil : "\(items.count) objects instead of \(Int(count))"
        }
        if case .object(let values)? = rule["to"] {
            guard case .string(let id) = actual, let record = byID[id] else { return "\(actual) names no object" }
            let wrong = mismatches(of: values, in: record)
            return wrong.isEmpty ? nil : "\(id): " + wrong.joined(separator: "; ")
        }
        if case .array(let wanted)? = rule["all"] ?? rule["includes"] {
            guard case .array(let items) = actual else { return "\(actual) is not a to-many relationship" }
            let related = items.map { item -> [String: ReplayJSON] in
                if case .string(let id) = item, let record = byID[id] { return record }
                return [:]
            }
            let exact = rule["all"] != nil
            if exact, related.count != wanted.count { return "\(related.count) objects instead of \(wanted.count)" }
            if rule["ordered"] == .bool(true) {
                let wrong = zip(wanted, related).enumerated().compactMap { index, pair -> String? in
                    guard case .object(let values) = pair.0 else { return "expectation \(index) is not an object" }
                    let wrong = mismatches(of: values, in: pair.1)
                    return wrong.isEmpty ? nil : "object \(index + 1): " + wrong.joined(separator: "; ")
                }
                return wrong.isEmpty ? nil : wrong.joined(separator: " / ")
            }
            return matchDistinct(wanted, among: related) ? nil : "\(actual) does not hold \(ReplayJSON.array(wanted))"
        }
        return "unknown expectation \(expected)"
    }

    /// Whether each expected object matches a different one of `related` (a matching found by
    /// backtracking: the lists are a few objects long).
    private func matchDistinct(_ wanted: [ReplayJSON], among related: [[String: ReplayJSON]]) -> Bool {
        func assign(_ index: Int, _ used: Set<Int>) -> Bool {
            guard index < wanted.count else { return true }
            guard case .object(let values) = wanted[index] else { return false }
            for (candidate, record) in related.enumerated() where !used.contains(candidate) {
                if mismatches(of: values, in: record).isEmpty, assign(index + 1, used.union([candidate])) {
                    return true
                }
            }
            return false
        }
        return assign(0, [])
    }

    /// Whether `lhs` sorts before `rhs`: numbers by value, dates by time, other strings by their
    /// characters, null first.
    static func precedes(_ lhs: ReplayJSON?, _ rhs: ReplayJSON?) -> Bool {
        switch (lhs ?? .null, rhs ?? .null) {
        case (.null, .null): return false
        case (.null, _): return true
        case (_, .null): return false
        case (.number(let a), .number(let b)): return a < b
        case (.bool(let a), .bool(let b)): return !a && b
        case (.string(let a), .string(let b)):
            if let first = ISO8601Text.date(from: a), let second = ISO8601Text.date(from: b) { return first < second }
            return a < b
        default: return false
        }
    }
}
