package import TernCore
package import TernMigration
import TernRelational

extension PostgreSQLStore {
    /// A plan with its first step checked against a store's data (``TernSQLite/StepDataCheck``):
    /// the step's refusals join its problems and its warnings are set, as on SQLite.
    ///
    /// - Parameters:
    ///   - plan: The plan made from the store's metadata.
    ///   - url: The store's connection string.
    ///   - model: The app's versioned model.
    /// - Returns: The plan, its first step checked when it is inferred.
    /// - Throws: ``PostgreSQLError`` when the store cannot be read.
    /// - Complexity: One `COUNT(*)` per check of the first step.
    package static func checkingData(of plan: MigrationPlan, at url: String, model: VersionedModel) throws
        -> MigrationPlan
    {
        try plan.checkingFirstStep(in: model) { step, mapping, from, to in
            let connection = try Connection(try PostgreSQLLocation(url))
            let layout = try connection.readSchema(model: from)
            return try StepDataCheck.evaluate(mapping, source: layout, destination: to, step: (step.from, step.to)) {
                try connection.fetchValue($0)?.int64 ?? 0
            }
        }
    }
}
