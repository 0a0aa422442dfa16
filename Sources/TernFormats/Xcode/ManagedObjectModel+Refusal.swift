import TernCore

/// What model readers refuse: a model that ``ManagedObjectModel/structuralIssues`` finds
/// meaningless (duplicate names, a missing parent, an inheritance cycle, a relationship whose
/// destination or inverse does not exist). Everything else a model file holds is read, as
/// Xcode and Core Data read it.
extension ManagedObjectModel {
    /// Throws when the model is meaningless, naming every problem.
    ///
    /// - Parameters:
    ///   - path: The file the model was read from, for the error.
    ///   - line: The line of the file an issue concerns, if known.
    /// - Throws: ``TernError/Code/invalidModel`` with the entity and property of the first
    ///   issue and a message listing every issue with its place and line.
    /// - Complexity: That of ``ManagedObjectModel/structuralIssues``.
    func refuseIfMeaningless(path: String?, line: (ModelIssue) -> Int? = { _ in nil }) throws(TernError) {
        let issues = structuralIssues
        guard let first = issues.first else { return }
        func described(_ issue: ModelIssue) -> String {
            var place = issue.propertyName.map { "\(issue.entityName).\($0)" } ?? issue.entityName
            if let line = line(issue) { place += " (line \(line))" }
            return place + ": " + issue.message
        }
        let message =
            issues.count == 1
            ? described(first)
            : "the model has \(issues.count) problems that leave it without meaning; fix each of them:\n"
                + issues.map { "- " + described($0) }.joined(separator: "\n")
        throw TernError(.invalidModel, message, entity: first.entityName, property: first.propertyName, path: path)
    }
}
