public import Foundation

extension AttributeValue {
    // MARK: - Comparing values

    /// Compares two values the way predicates and sort descriptors do.
    ///
    /// Numbers compare by value across kinds (an integer, a double, a decimal and a Boolean, which
    /// counts as 0 or 1), exactly, without rounding an integer to a double. Dates compare with dates,
    /// and with numbers as seconds since 1 January 2001, as Core Data's SQLite store stores them.
    /// Strings compare with Foundation's `compare(_:options:)` and the given options. UUIDs, data
    /// and URIs compare with values of their own kind, byte by byte.
    ///
    /// ```swift
    /// AttributeValue.integer(2).compare(to: .double(2.5))  // .orderedAscending
    /// AttributeValue.string("É").compare(to: .string("e"), options: [.caseInsensitive, .diacriticInsensitive])  // .orderedSame
    /// ```
    ///
    /// - Parameters:
    ///   - other: The value to compare with.
    ///   - options: String comparison options; ignored for other values.
    /// - Returns: The order of the two values, or `nil` when they cannot be compared (a string with
    ///   a number, or a NaN).
    /// - Complexity: O(*n*) in the length of strings and data.
    public func compare(
        to other: AttributeValue, options: FetchPredicate.ComparisonOptions = []
    ) -> ComparisonResult? {
        switch (self, other) {
        case (.string(let lhs), .string(let rhs)):
            return Self.compare(lhs, rhs, options: options)
        case (.data(let lhs), .data(let rhs)):
            return Self.compareBytes(lhs, rhs)
        case (.uuid(let lhs), .uuid(let rhs)):
            return Self.compareBytes(Self.bytes(of: lhs), Self.bytes(of: rhs))
        case (.uri(let lhs), .uri(let rhs)):
            return Self.compareBytes(Data(lhs.absoluteString.utf8), Data(rhs.absoluteString.utf8))
        default:
            guard let lhs = NumericValue(self), let rhs = NumericValue(other) else { return nil }
            return lhs.compare(to: rhs)
        }
    }

    /// Whether two values are equal for a predicate: numbers by value across kinds, strings with the
    /// options.
    ///
    /// - Parameters:
    ///   - other: The value to compare with.
    ///   - options: String comparison options.
    /// - Returns: `true` when the values compare the same.
    func isEqual(to other: AttributeValue, options: FetchPredicate.ComparisonOptions) -> Bool {
        if case .string(let lhs) = self, case .string(let rhs) = other,
            options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive])
        {
            return lhs == rhs
        }
        return compare(to: other, options: options) == .orderedSame
    }

    /// Sort rank of a value's kind among kinds that do not compare with each other, following
    /// SQLite's storage classes: numbers and dates, then text, then bytes.
    var kindRank: Int {
        switch self {
        case .integer, .double, .decimal, .bool, .date: 0
        case .string, .uri: 1
        case .data, .uuid: 2
        }
    }

    /// The string comparison options of Foundation for predicate options.
    static func stringOptions(_ options: FetchPredicate.ComparisonOptions) -> String.CompareOptions {
        var result: String.CompareOptions = []
        if options.contains(.caseInsensitive) { result.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { result.insert(.diacriticInsensitive) }
        return result
    }

    // MARK: - Non public

    private static func compare(_ lhs: String, _ rhs: String, options: FetchPredicate.ComparisonOptions)
        -> ComparisonResult
    {
        if options.isDisjoint(with: [.caseInsensitive, .diacriticInsensitive]), lhs == rhs { return .orderedSame }
        return lhs.compare(rhs, options: stringOptions(options))
    }

    private static func compareBytes<Bytes: Collection<UInt8>>(_ lhs: Bytes, _ rhs: Bytes) -> ComparisonResult {
        var left = lhs.makeIterator()
        var right = rhs.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return .orderedSame
            case (nil, _): return .orderedAscending
            case (_, nil): return .orderedDescending
            case (let l?, let r?) where l != r: return l < r ? .orderedAscending : .orderedDescending
            default: continue
            }
        }
    }

    private static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }
}

/// A number of any kind, for exact comparisons across kinds.
enum NumericValue {
    case integer(Int64)
    case double(Double)
    case decimal(Decimal)

    /// The number a value stands for: numbers, Booleans as 0 or 1, dates as seconds since 2001.
    init?(_ value: AttributeValue) {
        switch value {
        case .integer(let number): self = .integer(number)
        case .double(let number): self = .double(number)
        case .decimal(let number): self = .decimal(number)
        case .bool(let flag): self = .integer(flag ? 1 : 0)
        case .date(let date): self = .double(date.timeIntervalSinceReferenceDate)
        default: return nil
        }
    }

    /// The number as a double, possibly rounded.
    var doubleValue: Double {
        switch self {
        case .integer(let number): Double(number)
        case .double(let number): number
        case .decimal(let number): NSDecimalNumber(decimal: number).doubleValue
        }
    }

    /// The order of two numbers, `nil` when one is NaN.
    func compare(to other: NumericValue) -> ComparisonResult? {
        switch (self, other) {
        case (.integer(let lhs), .integer(let rhs)):
            return Self.order(lhs, rhs)
        case (.integer(let lhs), .double(let rhs)):
            return Self.compare(lhs, rhs)
        case (.double(let lhs), .integer(let rhs)):
            return Self.compare(rhs, lhs).map(Self.reversed)
        case (.double(let lhs), .double(let rhs)):
            return lhs.isNaN || rhs.isNaN ? nil : Self.order(lhs, rhs)
        case (.decimal(let lhs), _):
            return Self.compare(lhs, other)
        case (_, .decimal(let rhs)):
            return Self.compare(rhs, self).map(Self.reversed)
        }
    }

    // MARK: - Non public

    private static func order<T: Comparable>(_ lhs: T, _ rhs: T) -> ComparisonResult {
        lhs < rhs ? .orderedAscending : lhs > rhs ? .orderedDescending : .orderedSame
    }

    private static func reversed(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: .orderedDescending
        case .orderedDescending: .orderedAscending
        case .orderedSame: .orderedSame
        }
    }

    /// Compares an integer with a double exactly.
    private static func compare(_ lhs: Int64, _ rhs: Double) -> ComparisonResult? {
        if rhs.isNaN { return nil }
        // 2^63 is exactly representable; every double at or above it exceeds every Int64.
        if rhs >= 9_223_372_036_854_775_808.0 { return .orderedAscending }
        if rhs < -9_223_372_036_854_775_808.0 { return .orderedDescending }
        let whole = rhs.rounded(.down)
        let truncated = Int64(whole)
        if lhs != truncated { return order(lhs, truncated) }
        return whole < rhs ? .orderedAscending : .orderedSame
    }

    /// Compares a decimal with a number of any kind.
    private static func compare(_ lhs: Decimal, _ rhs: NumericValue) -> ComparisonResult? {
        if lhs.isNaN { return nil }
        switch rhs {
        case .integer(let number):
            return order(lhs, Decimal(number))
        case .decimal(let number):
            return number.isNaN ? nil : order(lhs, number)
        case .double(let number):
            if number.isNaN { return nil }
            // Near and beyond Decimal's range (about 1e165) compare as doubles, which hold every decimal.
            if number.magnitude > 1e150 { return order(NumericValue.decimal(lhs).doubleValue, number) }
            return order(lhs, Decimal(number))
        }
    }
}
