/// Which of the model's rules batch operations enforce.
///
/// Batch operations (``ObjectContext/batchInsert(entityName:objects:options:)``,
/// ``ObjectContext/batchUpdate(_:values:options:)``, ``ObjectContext/batchDelete(_:options:)``)
/// write rows straight to the stores. Whatever the options:
/// - every value must fit its attribute's type (and an integer its width), or nothing is written;
/// - stores refuse rows that break a uniqueness constraint, with
///   ``TernError/Code/constraintConflict``, as for any save.
///
/// By default nothing else is checked, as with Core Data's batch requests, which bypass the
/// object graph: batch operations exist for bulk work, where checking every row's rules and
/// reading every related row would cost what going through objects costs. Opt in where the data
/// is not trusted, or where a batch delete must not leave dangling references:
///
/// ```swift
/// let ids = try await context.batchInsert(entityName: "Recipe", objects: rows, options: .enforcingModelRules)
/// ```
public struct BatchOptions: Sendable, Hashable {
    /// Whether values are validated as a save validates objects: required attributes (and, on
    /// insert, required relationships, which batch rows cannot set), minimum and maximum values,
    /// lengths and sizes, and patterns. Every failure is reported in one
    /// ``TernError/Code/validationFailed`` and nothing is written.
    public var validatesValues: Bool
    /// Whether a batch delete applies the delete rules of the deleted rows' relationships, as a
    /// save does: cascade deletes the destinations (and their own cascades), nullify removes the
    /// deleted rows from the inverse relationships, deny refuses the whole delete with
    /// ``TernError/Code/validationFailed`` while a destination is not deleted too, no action does
    /// nothing. Everything is one transaction per store.
    public var appliesDeleteRules: Bool

    /// Creates options.
    ///
    /// - Parameters:
    ///   - validatesValues: Whether values are validated against the model's rules.
    ///   - appliesDeleteRules: Whether a batch delete applies delete rules.
    public init(validatesValues: Bool = false, appliesDeleteRules: Bool = false) {
        self.validatesValues = validatesValues
        self.appliesDeleteRules = appliesDeleteRules
    }

    /// Types and uniqueness only, as Core Data's batch requests: the default.
    public static let unchecked = BatchOptions()
    /// Every rule a save enforces: validation and delete rules.
    public static let enforcingModelRules = BatchOptions(validatesValues: true, appliesDeleteRules: true)
}
