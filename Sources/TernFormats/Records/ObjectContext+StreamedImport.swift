import Foundation
import TernCore

/// How the records of a TSV or CSV file that only inserts become rows: the attribute of each
/// column and the defaults of the attributes no column names.
struct StreamedImportPlan: Sendable {
    /// The records' entity.
    let entityName: String
    /// The attribute of each column, in header order; nil for `_id`, which nothing refers to.
    let columns: [AttributeDescription?]
    /// The default values of the stored attributes the file has no column for, by name.
    let defaults: [(name: String, value: AttributeValue)]
    /// The attributes whose values a save could refuse in a new object: required ones and those
    /// with a minimum, maximum or pattern (values converted by type always fit their type);
    /// derived ones and transient ones with a default (a new object has it) excepted.
    let checked: [AttributeDescription]

    /// The type of each column's attribute, in header order; nil for `_id`.
    private let types: [AttributeType?]

    /// The number of records read and written at a time: bounded memory, few round trips.
    static let batchSize = 5_000

    /// Makes the plan of a file's columns.
    init(
        entityName: String, columns: [AttributeDescription?], defaults: [(name: String, value: AttributeValue)],
        checked: [AttributeDescription]
    ) {
        self.entityName = entityName
        self.columns = columns
        self.defaults = defaults
        self.checked = checked
        self.types = columns.map { $0?.type }
    }

    /// The columns of the batches: the attribute of each file column in header order (`_id`
    /// left out), then the attributes filled with their defaults, by name.
    var batchColumns: [String] { columns.compactMap { $0?.name } + defaults.map(\.name) }

    /// Adds one row of fields to a batch of ``batchColumns``: each field converted from its bytes
    /// (an empty field is nil), then the defaults.
    ///
    /// - Throws: ``RecordError`` naming the line and column of a value that does not convert,
    ///   or of an empty field for a required attribute.
    func append(_ fields: RecordBytes, line: Int, path: String, to batch: inout RowBatch) throws(RecordError) {
        for index in 0..<fields.count {
            guard let type = types[index] else { continue }
            // The common forms are read from the bytes; anything else goes through the text.
            if !fields.isNull(index), let value = fields.withBytes(of: index, { FieldBytes.value($0, as: type) }) {
                batch.append(value)
                continue
            }
            guard let attribute = columns[index] else { continue }
            let field: RecordValue = fields.isNull(index) ? .null : .text(fields.string(index))
            batch.append(
                try RecordImporter.convert(
                    field, attribute, entity: entityName, path: path, line: line, column: index + 1))
        }
        for (_, value) in defaults { batch.append(value) }
        // What the save would refuse (required values, ranges, lengths, patterns), with its place.
        guard !checked.isEmpty else { return }
        let row = batch.count - 1
        let failures = ObjectContext.attributeFailures(
            of: { name in batch.columns.firstIndex(of: name).flatMap { batch[row, $0] } }, attributes: checked
        ) { name, message in
            TernError(.validationFailed, "\(entityName).\(name) \(message)", entity: entityName, property: name)
        }
        if let first = failures.first {
            let column = columns.firstIndex { $0?.name == first.propertyName }.map { $0 + 1 }
            throw RecordError(
                .saveFailed, "the store refused the import: \(first.message); nothing was imported",
                path: path, line: line, column: column, underlyingError: first)
        }
    }
}

/// The usual forms of a field read straight from its bytes, without making a `String`: what
/// ``RecordValue/attributeValue(for:)`` would make of them.
enum FieldBytes {
    /// The value of a non-empty field for an attribute type, or nil when the bytes are not in
    /// one of the forms read here (the caller converts the text then).
    ///
    /// - Parameters:
    ///   - bytes: The field's UTF-8 bytes, valid and not empty.
    ///   - type: The attribute's type.
    static func value(_ bytes: UnsafeBufferPointer<UInt8>, as type: AttributeType) -> AttributeValue? {
        switch type {
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .integer64: return integer(bytes).map { .integer($0) }
        case .integer32: return integer(bytes).flatMap { Int32(exactly: $0) }.map { .integer(Int64($0)) }
        case .integer16: return integer(bytes).flatMap { Int16(exactly: $0) }.map { .integer(Int64($0)) }
        case .double, .float: return wholeNumber(bytes).map { .double($0) }
        case .date: return wholeNumber(bytes).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .boolean:
            guard bytes.count == 1 else { return nil }
            return bytes[0] == UInt8(ascii: "1") ? .bool(true) : bytes[0] == UInt8(ascii: "0") ? .bool(false) : nil
        default: return nil
        }
    }

    /// A decimal integer with an optional sign, as `Int64(_:)` reads it; nil on overflow or
    /// any other byte.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0
        let negative = bytes.first == UInt8(ascii: "-")
        if negative || bytes.first == UInt8(ascii: "+") { index = 1 }
        guard index < bytes.count else { return nil }
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, carry) =
                negative
                ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflow, !carry else { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// A decimal integer of at most 15 digits as a Double (exact, as `Double(_:)` reads it);
    /// nil for fractions, exponents and longer numbers, which the text path reads.
    static func wholeNumber(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count <= 16, let integer = integer(bytes), integer.magnitude < 1_000_000_000_000_000 else {
            return nil
        }
        // "-0" is the Double -0.0, which an integer cannot say.
        guard integer != 0 || bytes.first != UInt8(ascii: "-") else { return nil }
        return Double(integer)
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
            let columns = plan.batchColumns
            var fields = RecordBytes()
            count = try await batchInsertConverted(entityName: plan.entityName, options: .unchecked) {
                () throws -> RowBatch? in
                var batch = RowBatch(columns: columns, reservingCapacity: StreamedImportPlan.batchSize)
                while batch.count < StreamedImportPlan.batchSize, let line = try reader.nextRow(into: &fields) {
                    try plan.append(fields, line: line, path: path, to: &batch)
                }
                guard !batch.isEmpty else { return nil }
                progress?.completedUnitCount = reader.bytesRead
                return batch
            }
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(
                .saveFailed, "the store refused the import: \(error); nothing was imported", path: path,
                underlyingError: error)
        }
        var summary = RecordImportSummary()
        if count > 0 { summary.inserted[plan.entityName] = count }
        return summary
    }
}
