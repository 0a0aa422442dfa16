import Foundation
import TernCore

/// How the records of a TSV or CSV file that only inserts become rows: the attribute of each
/// column and the defaults of the attributes no column names.
struct StreamedImportPlan: Sendable {
    /// The records' entity.
    let entityName: String
    /// The attribute of each column, in header order; nil for `_id`, which nothing refers to.
    let columns: [AttributeDescription?]
    /// The default values of the stored attributes the file has no column for.
    let defaults: [String: AttributeValue]
    /// The attributes whose values a save could refuse in a new object: required ones and those
    /// with a minimum, maximum or pattern (values converted by type always fit their type);
    /// derived ones and transient ones with a default (a new object has it) excepted.
    let checked: [AttributeDescription]

    /// The number of records read and written at a time: bounded memory, few round trips.
    static let batchSize = 5_000

    /// The values of one row of fields: the defaults, then each non-empty field converted.
    ///
    /// - Throws: ``RecordError`` naming the line and column of a value that does not convert,
    ///   or of an empty field for a required attribute.
    func values(of fields: [String?], line: Int, path: String) throws(RecordError) -> [String: AttributeValue] {
        var values = defaults
        values.reserveCapacity(defaults.count + columns.count)
        for (index, field) in fields.enumerated() {
            guard let attribute = columns[index] else { continue }
            let value = try RecordImporter.convert(
                field.map(RecordValue.text) ?? .null, attribute, entity: entityName, path: path, line: line, column: index + 1)
            if let value { values[attribute.name] = value }
        }
        // What the save would refuse (required values, ranges, lengths, patterns), with its place.
        guard !checked.isEmpty else { return values }
        let failures = ObjectContext.attributeFailures(of: { values[$0] }, attributes: checked) { name, message in
            TernError(.validationFailed, "\(entityName).\(name) \(message)", entity: entityName, property: name)
        }
        if let first = failures.first {
            let column = columns.firstIndex { $0?.name == first.propertyName }.map { $0 + 1 }
            throw RecordError(.saveFailed, "the store refused the import: \(first.message); nothing was imported",
                              path: path, line: line, column: column)
        }
        return values
    }
}

extension ObjectContext {
    /// Imports a TSV or CSV file that only inserts, streaming it batch by batch into the store in
    /// one transaction (``batchInsert(entityName:options:batches:)``), each record validated as
    /// the save would validate its object: memory stays bounded by a batch, the import stays all
    /// or nothing.
    func importStreaming(
        _ reader: sending DelimitedRecordReader, plan: StreamedImportPlan, path: String, progress: Progress?
    ) async throws -> RecordImportSummary {
        let count: Int
        do {
            count = try await batchInsertConverted(entityName: plan.entityName, options: .unchecked) {
                let rows = try reader.nextRows(maxCount: StreamedImportPlan.batchSize)
                guard !rows.isEmpty else { return nil }
                let batch = try rows.map { line, fields throws(RecordError) in try plan.values(of: fields, line: line, path: path) }
                progress?.completedUnitCount = reader.bytesRead
                return batch
            }
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(.saveFailed, "the store refused the import: \(error); nothing was imported", path: path)
        }
        var summary = RecordImportSummary()
        if count > 0 { summary.inserted[plan.entityName] = count }
        return summary
    }
}
