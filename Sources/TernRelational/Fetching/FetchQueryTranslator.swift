import TernCore

/// The visitor that emits the SQL of each predicate node in a dialect, collecting joins as it goes.
struct FetchQueryTranslator: PredicateVisitor {
    let schema: StoreSchema
    let root: EntityLayout
    let dialect: any SQLDialect
    /// The schema the tables are in, when not the connection's main one.
    let tableSchema: String?
    /// The `LEFT JOIN` clauses, each with its leading space.
    var joins: [SQL] = []
    /// The alias of each joined to-one key path prefix.
    var aliases: [String: String] = [:]

    init(schema: StoreSchema, root: EntityLayout, dialect: any SQLDialect, tableSchema: String? = nil) {
        self.schema = schema
        self.root = root
        self.dialect = dialect
        self.tableSchema = tableSchema
    }

    /// A table's name, in ``tableSchema`` when there is one.
    func table(_ name: String) -> SQL {
        (tableSchema.map { "\(.identifier($0))." } ?? "") + .identifier(name)
    }

    // MARK: - Compounds

    func visitConstant(_ value: Bool) -> SQL { value ? dialect.trueCondition : dialect.falseCondition }

    func visitNot(_ operand: SQL) -> SQL { "(NOT " + operand + ")" }

    func visitAnd(_ terms: [SQL]) -> SQL {
        terms.isEmpty ? dialect.trueCondition : "(" + SQL.joined(terms, separator: " AND ") + ")"
    }

    func visitOr(_ terms: [SQL]) -> SQL {
        terms.isEmpty ? dialect.falseCondition : "(" + SQL.joined(terms, separator: " OR ") + ")"
    }

    // MARK: - Comparisons

    mutating func visitComparison(_ comparison: FetchPredicate.Comparison) throws(TernError) -> SQL {
        switch (comparison.quantifier, comparison.lhs) {
        case (.direct, .keyPath(let path)):
            let (alias, layout, last) = try resolve(path, alias: "t0", layout: root, joining: true)
            if let relationship = layout.toOne(named: last) {
                return try nilTest(SQL(unsafeSQL: alias + ".") + .identifier(relationship.column), comparison)
            }
            return try condition(try attribute(last, alias: alias, layout: layout), comparison)
        case (.direct, .collection(.count, let path, nil)):
            let (mapping, destination) = try toMany(named: path)
            let count = "(SELECT COUNT(*) " + elements(of: mapping, destination: destination) + ")"
            return try condition(Operand(sql: count, type: .integer64), comparison)
        case (.any, .keyPath(let path)), (.all, .keyPath(let path)), (.none, .keyPath(let path)):
            let names = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard names.count == 2 else { throw FetchQuery.untranslatable }
            let (mapping, destination) = try toMany(named: names[0])
            let element = try attribute(at: names[1], alias: "d", layout: destination, joining: false)
            let inner = try condition(element, comparison)
            let elements = elements(of: mapping, destination: destination)
            switch comparison.quantifier {
            case .any: return "EXISTS (SELECT 1 " + elements + " AND " + inner + ")"
            case .all: return "(NOT EXISTS (SELECT 1 " + elements + " AND NOT " + inner + "))"
            default: return "(NOT EXISTS (SELECT 1 " + elements + " AND " + inner + "))"
            }
        default:
            throw FetchQuery.untranslatable
        }
    }

    // MARK: - Sorts

    /// The column and collation of a sort, or nil when it cannot be expressed exactly.
    mutating func sortKey(_ sort: FetchSort) -> FetchQuery.SortKey? {
        guard let operand = try? attribute(at: sort.key, alias: "t0", layout: root, joining: true),
            let collated = dialect.sortOperand(operand.sql, type: operand.type, caseInsensitive: sort.caseInsensitive)
        else { return nil }
        return FetchQuery.SortKey(
            column: operand.sql, collated: collated, type: operand.type, ascending: sort.ascending)
    }

    // MARK: - Key paths

    /// A column value with the attribute type that reads it.
    struct Operand {
        var sql: SQL
        var type: AttributeType
    }

    /// The column of an attribute key path, through to-one relationships joined on the way.
    private mutating func attribute(
        at path: String, alias: String, layout: EntityLayout, joining: Bool
    ) throws(TernError) -> Operand {
        let (alias, layout, last) = try resolve(path, alias: alias, layout: layout, joining: joining)
        return try attribute(last, alias: alias, layout: layout)
    }

    /// The column of an attribute of the entity whose row has the alias.
    private func attribute(_ name: String, alias: String, layout: EntityLayout) throws(TernError) -> Operand {
        guard let column = layout.attribute(named: name), Self.translatableTypes.contains(column.type),
            dialect.translates(column)
        else { throw FetchQuery.untranslatable }
        let sql = SQL(unsafeSQL: alias + ".") + .identifier(column.column)
        return Operand(sql: dialect.operand(sql, type: column.type), type: column.type)
    }

    /// The alias and layout of the row a key path's last name is read from, with that name: the
    /// to-one relationships before it joined (once per prefix) when `joining`, else none allowed.
    private mutating func resolve(
        _ path: String, alias: String, layout: EntityLayout, joining: Bool
    ) throws(TernError) -> (alias: String, layout: EntityLayout, last: String) {
        var names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = names.removeLast()
        var alias = alias
        var layout = layout
        var prefix = ""
        for name in names {
            guard joining, let relationship = layout.toOne(named: name),
                let destination = schema.entities[relationship.destination]
            else { throw FetchQuery.untranslatable }
            prefix += "." + name
            if let known = aliases[prefix] {
                alias = known
            } else {
                let next = "t\(aliases.count + 1)"
                joins.append(
                    " LEFT JOIN " + table(destination.table) + " AS \(SQL(unsafeSQL: next)) ON "
                        + dialect.primaryKey(of: next) + " = "
                        + "\(SQL(unsafeSQL: alias)).\(.identifier(relationship.column)) AND "
                        + destination.rowFilter(alias: next))
                aliases[prefix] = next
                alias = next
            }
            layout = destination
        }
        return (alias, layout, last)
    }

    /// A to-many relationship of the root entity and its destination's layout.
    private func toMany(named name: String) throws(TernError) -> (ToManyMapping, EntityLayout) {
        guard let mapping = root.toMany(named: name), let destination = schema.entities[mapping.destination] else {
            throw FetchQuery.untranslatable
        }
        return (mapping, destination)
    }

    /// `FROM … WHERE …` selecting the destination rows (alias `d`) of a to-many relationship of
    /// `t0`, as the store reads them.
    private func elements(of mapping: ToManyMapping, destination: EntityLayout) -> SQL {
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, _):
            return "FROM " + self.table(table) + " AS d WHERE d.\(.identifier(column)) = "
                + dialect.primaryKey(of: "t0")
                + " AND " + destination.rowFilter(alias: "d")
        case .joinTable(let table, let source, let target, _):
            return "FROM " + self.table(table) + " AS j JOIN " + self.table(destination.table) + " AS d "
                + "ON " + dialect.primaryKey(of: "d") + " = j.\(.identifier(target)) WHERE j.\(.identifier(source)) = "
                + dialect.primaryKey(of: "t0")
        }
    }

    // MARK: - Conditions

    /// The attribute types whose stored values can compare in SQL as they do in Swift (not
    /// decimals, which Core Data stores as reals).
    static let translatableTypes: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri,
        .transformable,
    ]

    /// The two-valued condition of a comparison on one operand.
    private func condition(_ operand: Operand, _ comparison: FetchPredicate.Comparison) throws(TernError) -> SQL {
        switch (comparison.op, comparison.rhs) {
        case (.in, .aggregate(let elements)):
            var terms: [SQL] = []
            for element in elements {
                guard case .constant(let value) = element else { throw FetchQuery.untranslatable }
                terms.append(try single(operand, .equalTo, value, comparison.options))
            }
            return terms.isEmpty ? dialect.falseCondition : "(" + SQL.joined(terms, separator: " OR ") + ")"
        case (.between, .aggregate(let bounds)):
            guard bounds.count == 2, case .constant(let low) = bounds[0], case .constant(let high) = bounds[1] else {
                throw FetchQuery.untranslatable
            }
            return "(" + (try single(operand, .greaterThanOrEqualTo, low, comparison.options)) + " AND "
                + (try single(operand, .lessThanOrEqualTo, high, comparison.options)) + ")"
        case (.between, _), (_, .aggregate):
            throw FetchQuery.untranslatable
        case (let op, .constant(let value)):
            return try single(operand, op, value, comparison.options)
        default:
            throw FetchQuery.untranslatable
        }
    }

    /// The test of a to-one relationship's foreign key against nil (`owner == nil`,
    /// `owner != nil`), as Core Data's SQL tests it; any other comparison of a relationship is
    /// evaluated in Swift.
    private func nilTest(_ key: SQL, _ comparison: FetchPredicate.Comparison) throws(TernError) -> SQL {
        guard case .constant(nil) = comparison.rhs else { throw FetchQuery.untranslatable }
        switch comparison.op {
        case .equalTo: return "(" + key + " IS NULL)"
        case .notEqualTo: return "(" + key + " IS NOT NULL)"
        default: throw FetchQuery.untranslatable
        }
    }

    /// The condition of one operand against one constant, with `NSPredicate`'s nil semantics.
    private func single(
        _ operand: Operand, _ op: FetchPredicate.Operator, _ value: AttributeValue?,
        _ options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> SQL {
        let column = operand.sql
        guard let value else {
            switch op {
            case .equalTo, .in: return "(" + column + " IS NULL)"
            case .notEqualTo: return "(" + column + " IS NOT NULL)"
            default: return dialect.falseCondition
            }
        }
        if operand.type == .string { return try dialect.stringCondition(column, op, value, options) }
        guard let bound = try dialect.bound(value, for: operand.type) else {
            // Values of kinds that never compare: only `!=` holds.
            return op == .notEqualTo ? dialect.trueCondition : dialect.falseCondition
        }
        switch op {
        case .equalTo, .in, .notEqualTo, .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo:
            return dialect.comparison(column, op, bound)
        case .between: throw FetchQuery.untranslatable
        case .beginsWith, .endsWith, .contains, .like, .matches:
            return dialect.falseCondition  // String operators on non-strings.
        }
    }
}
