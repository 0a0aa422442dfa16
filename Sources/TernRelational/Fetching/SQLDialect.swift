package import TernCore

/// How one SQL database spells what ``FetchQuery`` emits: literals, comparisons with
/// `NSPredicate`'s nil semantics, bound constants, string comparisons and sort order.
///
/// A dialect translates only what its database evaluates exactly as Swift does; where it cannot,
/// it throws ``FetchQuery/untranslatable`` (or returns nil for a sort), and the store evaluates
/// the predicate or sorts in Swift.
package protocol SQLDialect {
    /// A condition that always holds (`1`, `TRUE`).
    var trueCondition: SQL { get }
    /// A condition that never holds (`0`, `FALSE`).
    var falseCondition: SQL { get }
    /// Whether a request for a whole hierarchy from its root tests `Z_ENT` anyway. Without the
    /// test, every row of the root's table matches.
    var testsEntityOfWholeHierarchy: Bool { get }

    /// The primary key of a table alias (`t0.Z_PK`).
    func primaryKey(of alias: String) -> SQL

    /// Whether comparisons on an attribute's column translate.
    func translates(_ column: AttributeColumn) -> Bool

    /// A column as an operand of comparisons (with a collation where the database needs one).
    func operand(_ column: SQL, type: AttributeType) -> SQL

    /// The two-valued condition of a string column against a constant.
    ///
    /// - Throws: ``FetchQuery/untranslatable`` when the comparison has no exact translation.
    func stringCondition(
        _ column: SQL, _ op: FetchPredicate.Operator, _ value: AttributeValue,
        _ options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> SQL

    /// A constant bound in the form of a column's values, or nil when it never compares with them.
    ///
    /// - Throws: ``FetchQuery/untranslatable`` for a constant that cannot compare exactly.
    func bound(_ value: AttributeValue, for type: AttributeType) throws(TernError) -> SQL?

    /// A keyset position's value bound in the form of its column's values, or nil when it cannot be.
    func positionBound(_ value: AttributeValue, for type: AttributeType) -> SQL?

    /// The two-valued comparison of a non-string column with a bound constant (`==`, `!=`, `<`,
    /// `<=`, `>`, `>=`; `in` compares as `==`).
    func comparison(_ column: SQL, _ op: FetchPredicate.Operator, _ bound: SQL) -> SQL

    /// The column as a sort compares it (with its collation), or nil when the sort must run in Swift.
    func sortOperand(_ column: SQL, type: AttributeType, caseInsensitive: Bool) -> SQL?

    /// One `ORDER BY` term: `NULL` first in ascending order, last in descending, as Swift sorts nil.
    func orderTerm(_ operand: SQL, ascending: Bool) -> SQL
}
