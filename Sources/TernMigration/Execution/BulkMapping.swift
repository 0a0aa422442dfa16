package import Foundation
package import TernCore

/// An entity mapping whose stage 1 a SQL engine can run as one `INSERT … SELECT` (#24): every
/// attribute mapping is a value with an SQL form, worked out once from the mapping, with its type.
///
/// The forms are the ones whose SQL result is the Swift one for every value the statement
/// accepts; the engine's statement hands any other row back to Swift (see
/// ``BulkMappingEngine``). ``analyze(_:sourceModel:destinationModel:)`` says why a mapping has
/// no SQL form, for `tern plan`.
///
/// ```swift
/// switch BulkMapping.analyze(mapping, sourceModel: v1, destinationModel: v2) {
/// case .success(let bulk): bulk.attributes        // [("id", .attribute("id", .integer64)), …]
/// case .failure(let reason): print(reason.text)   // "createdAt: now() has no SQL form here"
/// }
/// ```
package struct BulkMapping: Sendable {
    /// A value with an SQL form.
    package indirect enum Value: Sendable, Equatable {
        /// A stored attribute of the source entity, read from its column.
        case attribute(String, AttributeType)
        /// `$source.relationship.attribute` (or `$source.owner.team.name`): a stored attribute of
        /// the destination at the end of a path of to-one relationships, read through a join on
        /// each one's key.
        case relatedAttribute(path: [String], attribute: String, AttributeType)
        /// A constant (nil for NULL).
        case literal(AttributeValue?)
        /// `formatDate(date, format)` with a format ``DatePattern`` writes, as a `strftime` format.
        case formatDate(Value, strftime: String)
        /// `timeInterval(date)`: the seconds since 2001 as a double.
        case timeInterval(Value)
        /// `lowercase(text)` or `uppercase(text)`: SQL maps ASCII letters alone, so text with any
        /// other character goes back to Swift.
        case changingCase(Value, uppercase: Bool)
        /// `trim(text)`: the ASCII white space of `CharacterSet.whitespacesAndNewlines` (space, tab,
        /// line feed, vertical tab, form feed, carriage return) off both ends; text with any other
        /// character goes back to Swift, whose set has more.
        case trim(Value)
        /// `string(value)` of text, an integer (its decimal digits) or a Boolean (`true`, `false`).
        case text(Value)
        /// `concat(…)`: the text of each part (text, integers, Booleans), nil parts left out.
        case concat([Value])
        /// `coalesce(…)`: the first value that is not nil, all of one type.
        case coalesce([Value], AttributeType?)
        /// `integer(value)` of an integer or a Boolean (0 or 1).
        case integer(Value)
        /// `double(value)` of an integer, a Boolean or a date (its seconds since 2001), or
        /// `number()` of a Boolean or a date.
        case double(Value)
        /// `lhs + rhs`, `lhs - rhs` or `lhs * rhs` of integers; a result that does not fit in 64
        /// bits goes back to Swift (which fails the migration as it would anyway).
        case integerArithmetic(ValueExpression.ArithmeticOperator, Value, Value)
        /// `-value` of an integer; `-Int64.min` goes back to Swift.
        case negate(Value)
        /// `lhs + rhs`, `lhs - rhs` or `lhs * rhs` where one side is a double: both as doubles,
        /// in IEEE arithmetic as Swift computes them. A NaN result (which SQLite reads as NULL)
        /// and a PostgreSQL range error go back to Swift.
        case doubleArithmetic(ValueExpression.ArithmeticOperator, Value, Value)
        /// `date(number)`: the number as seconds since 2001.
        case date(Value)
        /// `lhs / rhs` of numbers: both as doubles, as Swift divides any two numbers; a zero
        /// divisor (Swift fails) and a NaN result go back to Swift.
        case division(Value, Value)
        /// `date + seconds` or `date - seconds`: the date's seconds since 2001 and the number as
        /// doubles, as `Date.addingTimeInterval` adds them; a NaN result goes back to Swift.
        case dateArithmetic(ValueExpression.ArithmeticOperator, Value, Value)
        /// `integer(value)` of a double or a date (its seconds since 2001): rounded toward zero;
        /// a value whose integer part does not fit in 64 bits, NaN and infinities go back to Swift.
        case truncated(Value)
        /// `integer(text)` of text whose characters, after spaces and tabs are trimmed off, are a
        /// sign and at most 18 ASCII digits (which `Int64` reads as SQL does); any other text goes
        /// back to Swift, which reads numbers in more forms (`1.5`, `1e3`) or fails.
        case parsedInteger(Value)
        /// `double(text)` of text whose characters, after spaces and tabs are trimmed off, are a
        /// sign, digits and perhaps a point and more digits, at most 15 digits in all: the
        /// digits as an integer (exact in a double) divided by a power of ten (exact too), which
        /// IEEE rounds once, correctly, as Swift's `Double` reads the text. Other text (more
        /// digits, exponents, `inf`) goes back to Swift.
        case parsedDouble(Value)
        /// `number(text)` as the whole value of a Double attribute: Swift reads an integer
        /// first (`Int64`, stored as its double), else a `Double`; SQL reads the integers of
        /// ``parsedInteger(_:)`` and the decimals of ``parsedDouble(_:)``, other text goes back
        /// to Swift. Elsewhere `number(text)` gives an integer or a double by the text, which SQL
        /// cannot type, so it has no SQL form.
        case parsedNumber(Value)
        /// `parseDate(text, format)` with a format ``DatePattern`` writes that has a year, a
        /// month and a day, or `date(text)` as `yyyy-MM-ddTHH:mm:ssZ`: the fields read at their
        /// positions, and the date's text in the format (as a `strftime` format) compared with the
        /// text, so that only the text `formatDate` would write is read in SQL; other text (which
        /// `DateFormatter` and `ISO8601FormatStyle` read more leniently, or not at all) and dates
        /// outside 1583 … 9999 go back to Swift.
        case parseDate(Value, strftime: String, fields: DateFields)
        /// `now()`: one date for the whole migration (``ExpressionEnvironment/now``), which the
        /// engine binds (``replacingNow(with:)``).
        case now
        /// `uuid()`: a random UUID per row, made in the database; only when
        /// ``ExpressionEnvironment/generatesRandomUUIDs`` (the engine checks).
        case uuid

        /// The paths of to-one relationships the value reads through.
        package var relationshipPaths: [[String]] {
            switch self {
            case .relatedAttribute(let path, _, _): [path]
            case .attribute, .literal, .now, .uuid: []
            case .formatDate(let value, _), .timeInterval(let value), .changingCase(let value, _), .trim(let value),
                .text(let value), .integer(let value), .double(let value), .negate(let value):
                value.relationshipPaths
            case .concat(let values), .coalesce(let values, _): values.flatMap(\.relationshipPaths)
            case .integerArithmetic(_, let lhs, let rhs), .doubleArithmetic(_, let lhs, let rhs):
                lhs.relationshipPaths + rhs.relationshipPaths
            case .date(let value), .truncated(let value), .parsedInteger(let value), .parsedDouble(let value),
                .parsedNumber(let value), .parseDate(let value, _, _):
                value.relationshipPaths
            case .division(let lhs, let rhs), .dateArithmetic(_, let lhs, let rhs):
                lhs.relationshipPaths + rhs.relationshipPaths
            }
        }

        /// Whether the value calls `uuid()`.
        package var makesUUIDs: Bool {
            switch self {
            case .uuid: true
            case .coalesce(let values, _): values.contains(where: \.makesUUIDs)
            default: false
            }
        }

        /// The value with `now()` replaced by the migration's date, as a literal.
        ///
        /// - Parameter date: ``ExpressionEnvironment/now`` of the migration.
        package func replacingNow(with date: Date) -> Value {
            switch self {
            case .now: .literal(.date(date))
            case .attribute, .relatedAttribute, .literal, .uuid: self
            case .formatDate(let value, let format): .formatDate(value.replacingNow(with: date), strftime: format)
            case .timeInterval(let value): .timeInterval(value.replacingNow(with: date))
            case .changingCase(let value, let uppercase):
                .changingCase(value.replacingNow(with: date), uppercase: uppercase)
            case .trim(let value): .trim(value.replacingNow(with: date))
            case .text(let value): .text(value.replacingNow(with: date))
            case .integer(let value): .integer(value.replacingNow(with: date))
            case .double(let value): .double(value.replacingNow(with: date))
            case .negate(let value): .negate(value.replacingNow(with: date))
            case .concat(let values): .concat(values.map { $0.replacingNow(with: date) })
            case .coalesce(let values, let type): .coalesce(values.map { $0.replacingNow(with: date) }, type)
            case .integerArithmetic(let op, let lhs, let rhs):
                .integerArithmetic(op, lhs.replacingNow(with: date), rhs.replacingNow(with: date))
            case .doubleArithmetic(let op, let lhs, let rhs):
                .doubleArithmetic(op, lhs.replacingNow(with: date), rhs.replacingNow(with: date))
            case .date(let value): .date(value.replacingNow(with: date))
            case .division(let lhs, let rhs): .division(lhs.replacingNow(with: date), rhs.replacingNow(with: date))
            case .dateArithmetic(let op, let lhs, let rhs):
                .dateArithmetic(op, lhs.replacingNow(with: date), rhs.replacingNow(with: date))
            case .truncated(let value): .truncated(value.replacingNow(with: date))
            case .parsedInteger(let value): .parsedInteger(value.replacingNow(with: date))
            case .parsedDouble(let value): .parsedDouble(value.replacingNow(with: date))
            case .parsedNumber(let value): .parsedNumber(value.replacingNow(with: date))
            case .parseDate(let value, let format, let fields):
                .parseDate(value.replacingNow(with: date), strftime: format, fields: fields)
            }
        }

        /// The attribute type of the value; nil for NULL.
        package var type: AttributeType? {
            switch self {
            case .attribute(_, let type), .relatedAttribute(_, _, let type): type
            case .literal(let value): value.flatMap(BulkMapping.type(of:))
            case .formatDate, .changingCase, .trim, .text, .concat: .string
            case .now: .date
            case .uuid: .uuid
            case .timeInterval, .double, .doubleArithmetic, .division, .parsedDouble, .parsedNumber: .double
            case .date, .dateArithmetic, .parseDate: .date
            case .coalesce(_, let type): type
            case .integer, .integerArithmetic, .negate, .truncated, .parsedInteger: .integer64
            }
        }
    }

    /// Where a date format's fields sit in its text: 1-based positions in Unicode scalars, as
    /// SQL's `substr` counts (a year is four digits, every other field two).
    package struct DateFields: Sendable, Equatable {
        /// The year's position.
        package var year: Int
        /// The month's position.
        package var month: Int
        /// The day's position.
        package var day: Int
        /// The hour's position; nil for midnight.
        package var hour: Int?
        /// The minute's position; nil for 0.
        package var minute: Int?
        /// The second's position; nil for 0.
        package var second: Int?
    }

    /// The seconds from 1970 to 2001, where Core Data's dates count from: what the SQL forms
    /// add to a stored date to reach the epoch their date functions count from.
    package static let referenceDateOffset: Int64 = 978_307_200

    /// The whole seconds since 1970 of 1583-01-01 and 9999-12-31 23:59:59 UTC: the dates that
    /// `formatDate` formats without `DateFormatter` (outside them Swift uses its calendar, and
    /// the SQL forms hand the row to Swift).
    package static let formattedSeconds: ClosedRange<Int64> = -12_212_553_600...253_402_300_799

    /// The white space of `CharacterSet.whitespacesAndNewlines` within ASCII, which a `trim`
    /// in SQL takes off.
    package static let asciiWhitespace = " \t\n\u{0B}\u{0C}\r"

    /// Why a mapping has no SQL form.
    package struct Reason: Error, Sendable, Equatable {
        /// What keeps it in Swift, in a few words.
        package var text: String
    }

    /// The entity mapping.
    package let mapping: EntityMapping
    /// The source entity.
    package let sourceEntity: String
    /// The destination entity.
    package let destinationEntity: String
    /// Each destination attribute the mapping sets, with its value.
    package let attributes: [(name: String, value: Value)]
    /// Whether a value calls `uuid()`: the engine runs such a mapping in SQL only when the
    /// migration's environment makes random UUIDs.
    package var makesUUIDs: Bool { attributes.contains { $0.value.makesUUIDs } }
    /// The mapping's source filter: an engine translates it with its store's fetch translation
    /// (`FetchQuery`) and runs the mapping in Swift when it cannot.
    package var filter: FetchPredicate? { mapping.sourceFilter }

    /// Works out the SQL form of a default-policy entity mapping's stage 1.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping (its policy is not looked at: callers ask only for
    ///     default-policy mappings).
    ///   - sourceModel: The source model.
    ///   - destinationModel: The destination model.
    /// - Returns: The SQL form, or the reason there is none.
    /// - Complexity: O(*n*) in the size of the attribute mappings.
    package static func analyze(
        _ mapping: EntityMapping, sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) -> Result<BulkMapping, Reason> {
        guard mapping.kind == .transform || mapping.kind == .copy, let source = mapping.sourceEntityName,
            let destination = mapping.destinationEntityName
        else { return .failure(Reason(text: "it creates no objects from a source entity")) }
        guard destinationModel.entity(named: destination)?.isAbstract == false else {
            return .failure(Reason(text: "its destination entity is abstract"))
        }
        var attributes: [(name: String, value: Value)] = []
        for property in mapping.effectiveAttributeMappings(in: destinationModel) {
            guard let expression = property.valueExpression else { continue }
            guard let attribute = destinationModel.attribute(named: property.name, inEntity: destination) else {
                return .failure(Reason(text: "\(destination) has no attribute \(property.name)"))
            }
            if attribute.isTransient || attribute.isDerived { continue }
            guard let value = Self.storedValue(of: expression, as: attribute.type, source: source, in: sourceModel)
            else {
                return .failure(Reason(text: "\(property.name): \(expression) has no SQL form here"))
            }
            guard Self.stores(value, as: attribute.type) else {
                return .failure(
                    Reason(text: "\(property.name): its value needs a conversion to \(attribute.type.xcodeName)"))
            }
            attributes.append((property.name, value))
        }
        return .success(
            BulkMapping(mapping: mapping, sourceEntity: source, destinationEntity: destination, attributes: attributes))
    }

    // MARK: - Non public

    private init(
        mapping: EntityMapping, sourceEntity: String, destinationEntity: String,
        attributes: [(name: String, value: Value)]
    ) {
        self.mapping = mapping
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.attributes = attributes
    }

    /// The types whose values SQL reads and writes as Swift does (not Float, Decimal, binary…).
    private static let columnTypes: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .double, .string, .boolean, .date, .uuid,
    ]

    /// The SQL form of an attribute mapping's whole expression, stored in an attribute of `type`:
    /// ``value(of:source:in:)``, and `number(text)` into a Double attribute.
    private static func storedValue(
        of expression: ValueExpression, as type: AttributeType, source: String, in model: ManagedObjectModel
    ) -> Value? {
        if type == .double, case .call(.number, let arguments) = expression, arguments.count == 1,
            let text = Self.value(of: arguments[0], source: source, in: model), text.type == .string
        {
            return .parsedNumber(text)
        }
        return Self.value(of: expression, source: source, in: model)
    }

    /// The SQL form of an expression, or nil.
    private static func value(of expression: ValueExpression, source: String, in model: ManagedObjectModel) -> Value? {
        switch expression {
        case .source(let keyPath) where keyPath.count == 1:
            guard let attribute = model.attribute(named: keyPath[0], inEntity: source), Self.isColumn(attribute)
            else { return nil }
            return .attribute(attribute.name, attribute.type)
        case .source(let keyPath) where keyPath.count >= 2:
            var entity = source
            for name in keyPath.dropLast() {
                guard let relationship = model.relationship(named: name, inEntity: entity), !relationship.isToMany,
                    !relationship.isTransient
                else { return nil }
                entity = relationship.destinationEntityName
            }
            guard let last = keyPath.last, let attribute = model.attribute(named: last, inEntity: entity),
                Self.isColumn(attribute)
            else { return nil }
            return .relatedAttribute(path: Array(keyPath.dropLast()), attribute: attribute.name, attribute.type)
        case .literal(let value):
            guard let value else { return .literal(nil) }
            return type(of: value) == nil ? nil : .literal(value)
        case .call(.formatDate, let arguments) where arguments.count == 2:
            guard case .literal(.string(let format)?) = arguments[1], let pattern = DatePattern(format),
                let date = Self.value(of: arguments[0], source: source, in: model), date.type == .date
            else { return nil }
            return .formatDate(date, strftime: pattern.strftimeFormat)
        case .call(.parseDate, let arguments) where arguments.count == 2:
            guard case .literal(.string(let format)?) = arguments[1], let pattern = DatePattern(format),
                let fields = pattern.fieldPositions, let text = Self.value(of: arguments[0], source: source, in: model),
                text.type == .string
            else { return nil }
            return .parseDate(text, strftime: pattern.strftimeFormat, fields: fields)
        case .call(.timeInterval, let arguments) where arguments.count == 1:
            guard let date = Self.value(of: arguments[0], source: source, in: model), date.type == .date
            else { return nil }
            return .timeInterval(date)
        case .negate(let operand):
            guard let value = Self.value(of: operand, source: source, in: model), value.type?.isInteger == true
            else { return nil }
            return .negate(value)
        case .arithmetic(let op, let lhs, let rhs):
            guard let left = Self.value(of: lhs, source: source, in: model),
                let right = Self.value(of: rhs, source: source, in: model),
                let leftType = left.type, let rightType = right.type, rightType.isNumber,
                leftType.isNumber || (leftType == .date && (op == .add || op == .subtract)),
                Self.isFinite(left), Self.isFinite(right)
            else { return nil }
            if leftType == .date { return .dateArithmetic(op, left, right) }
            if op == .divide { return .division(left, right) }
            if leftType.isInteger && rightType.isInteger { return .integerArithmetic(op, left, right) }
            return .doubleArithmetic(op, left, right)
        case .call(.now, let arguments) where arguments.isEmpty:
            return .now
        case .call(.uuid, let arguments) where arguments.isEmpty:
            return .uuid
        case .call(let function, let arguments):
            let values = arguments.map { Self.value(of: $0, source: source, in: model) }
            guard !values.isEmpty, values.allSatisfy({ $0 != nil }) else { return nil }
            return Self.call(function, values.compactMap { $0 })
        default:
            return nil
        }
    }

    /// Whether an attribute is a stored column of a type SQL reads as Swift does.
    private static func isColumn(_ attribute: AttributeDescription) -> Bool {
        !attribute.isTransient && !attribute.isDerived && columnTypes.contains(attribute.type)
    }

    /// The SQL form of a call whose arguments all have one, or nil.
    private static func call(_ function: ValueExpression.Function, _ arguments: [Value]) -> Value? {
        let first = arguments[0]
        let isText = first.type == .string || first.type == nil
        switch function {
        case .lowercase where arguments.count == 1 && isText: return .changingCase(first, uppercase: false)
        case .uppercase where arguments.count == 1 && isText: return .changingCase(first, uppercase: true)
        case .trim where arguments.count == 1 && isText: return .trim(first)
        case .string where arguments.count == 1:
            return Self.hasText(first) ? .text(first) : nil
        case .concat:
            return arguments.allSatisfy(Self.hasText) ? .concat(arguments) : nil
        case .coalesce:
            let types = Set(arguments.compactMap(\.type))
            if types.count <= 1 { return .coalesce(arguments, types.first) }
            return types.allSatisfy(\.isInteger) ? .coalesce(arguments, .integer64) : nil
        case .integer where arguments.count == 1:
            guard let type = first.type else { return nil }
            if type == .double || type == .date { return Self.isFinite(first) ? .truncated(first) : nil }
            if type == .string { return .parsedInteger(first) }
            return type.isInteger || type == .boolean ? .integer(first) : nil
        case .double where arguments.count == 1:
            guard let type = first.type else { return nil }
            if type == .double { return first }
            if type == .string { return .parsedDouble(first) }
            return type.isInteger || type == .boolean || type == .date ? .double(first) : nil
        case .date where arguments.count == 1:
            guard let type = first.type else { return nil }
            if type == .date { return first }
            if type == .string {
                // ISO 8601 as `ISO8601FormatStyle` writes whole seconds in UTC; it reads more
                // (offsets, fractions, 30 February as 1 March), which goes back to Swift.
                return .parseDate(first, strftime: "%Y-%m-%dT%H:%M:%SZ", fields: Self.isoFields)
            }
            return type.isInteger || (type == .double && Self.isFinite(first)) ? .date(first) : nil
        case .number where arguments.count == 1:
            guard let type = first.type else { return nil }
            if type.isInteger || type == .double { return first }
            return type == .boolean || type == .date ? .double(first) : nil
        default:
            return nil
        }
    }

    /// Where `yyyy-MM-ddTHH:mm:ssZ` has its fields.
    private static let isoFields = DateFields(year: 1, month: 6, day: 9, hour: 12, minute: 15, second: 18)

    /// Whether a value is not a literal NaN or infinity (which SQLite cannot bind as such).
    private static func isFinite(_ value: Value) -> Bool {
        if case .literal(.double(let number)?) = value { return number.isFinite }
        return true
    }

    /// Whether a value's text is the same in SQL as in Swift: text, an integer, a Boolean or nil.
    private static func hasText(_ value: Value) -> Bool {
        guard let type = value.type else { return true }
        return type == .string || type == .boolean || type.isInteger
    }

    /// The type of a literal that SQL stores as Swift does; nil for others.
    fileprivate static func type(of value: AttributeValue) -> AttributeType? {
        switch value {
        case .integer: .integer64
        case .double: .double
        case .string: .string
        case .bool: .boolean
        case .date: .date
        default: nil
        }
    }

    /// Whether a value is stored in an attribute of a type without a conversion that SQL could
    /// do differently: the same type, a narrower integer into a wider one, an integer into a double.
    private static func stores(_ value: Value, as type: AttributeType) -> Bool {
        guard columnTypes.contains(type) else { return false }
        guard let valueType = value.type else { return true }
        if case .literal(.integer(let number)?) = value, type.isInteger { return type.integerRange.contains(number) }
        switch (valueType, type) {
        case (.integer16, .integer16), (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer32),
            (.integer32, .integer64), (.integer64, .integer64):
            return true
        case (.integer16, .double), (.integer32, .double), (.integer64, .double):
            return true
        default:
            return valueType == type
        }
    }
}

extension AttributeType {
    /// Whether the type is one of the integer types.
    fileprivate var isInteger: Bool { self == .integer16 || self == .integer32 || self == .integer64 }
    /// Whether the type is an integer type or Double.
    fileprivate var isNumber: Bool { isInteger || self == .double }
}

/// An engine that can run stage 1 of a ``BulkMapping`` in one statement: ``MappingRunner`` asks it
/// for the first default-policy mappings of each walk.
package protocol BulkMappingEngine: MigrationManager {
    /// Runs stage 1 of a mapping in bulk: one destination object per source object, in source
    /// key order, with the keys the Swift path would give, each associated with its source.
    ///
    /// - Parameter bulk: The mapping's SQL form.
    /// - Returns: False, having changed nothing, when the engine declines (keys kept, a value
    ///   the statement cannot handle as Swift does): the runner then runs the mapping in Swift.
    /// - Throws: ``MigrationError`` when the statement fails for another reason.
    func createDestinationInstancesInBulk(_ bulk: BulkMapping) throws(MigrationError) -> Bool
}
