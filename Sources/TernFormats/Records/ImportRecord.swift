public import TernCore

/// One record read from a TSV, CSV or JSON file, before its values are converted.
///
/// Readers keep values in the file's own forms: text for TSV and CSV fields, JSON's kinds for JSON.
/// ``TernCore/ObjectContext/importRecords(from:options:progress:)`` converts them by attribute type.
///
/// ```swift
/// let reader = try DelimitedRecordReader(contentsOf: url, dialect: .csv)
/// while let batch = try reader.nextBatch(), !batch.isEmpty { for record in batch { print(record.line) } }
/// ```
public struct ImportRecord: Sendable, Hashable {
    /// The entity the file lists the record under, or nil when the caller names it (TSV, CSV, a
    /// JSON array).
    public var entityName: String?
    /// The record's values by key (an attribute, a relationship, `_id` or `relationship.key`).
    public var fields: [String: RecordValue]
    /// The 1-based line where the record starts.
    public var line: Int
    /// The 1-based column of each key in a TSV or CSV file; empty for JSON.
    public var columns: [String: Int]

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - entityName: The entity the file names, if any.
    ///   - fields: The values by key.
    ///   - line: The line where the record starts.
    ///   - columns: The column of each key, for delimited files.
    public init(entityName: String? = nil, fields: [String: RecordValue], line: Int, columns: [String: Int] = [:]) {
        self.entityName = entityName
        self.fields = fields
        self.line = line
        self.columns = columns
    }
}

/// A value as a record file holds it, before conversion to an ``/TernCore/AttributeValue``.
public indirect enum RecordValue: Sendable, Hashable {
    /// No value: an empty TSV/CSV field or JSON `null`.
    case null
    /// Text: a TSV/CSV field or a JSON string.
    case text(String)
    /// A JSON number, as written (so that decimals keep every digit).
    case number(String)
    /// A JSON `true` or `false`.
    case bool(Bool)
    /// A JSON array.
    case list([RecordValue])
    /// A JSON object nested in a record: a related object to create or update.
    case record(ImportRecord)
}

/// Why reading or importing records failed: the file, line and column, never the value.
///
/// ```swift
/// do { try await context.importRecords(from: url, options: options) }
/// catch let error as RecordError { print(error.line ?? 0, error.message) }
/// ```
public struct RecordError: CodedError, Sendable, Hashable {
    /// The kind of failure, extensible by other modules.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The code's name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// The file cannot be read.
        public static let unreadableFile = Code("unreadableFile")
        /// The bytes are not valid UTF-8.
        public static let invalidUTF8 = Code("invalidUTF8")
        /// The file's structure is broken: a wrong column count, an unterminated quote, bad JSON.
        public static let malformedFile = Code("malformedFile")
        /// A value does not convert to its attribute's type.
        public static let invalidValue = Code("invalidValue")
        /// A key names no entity, attribute or relationship, or the file does not fit the options.
        public static let unknownKey = Code("unknownKey")
        /// A reference names no object in the file or the store.
        public static let unresolvedReference = Code("unresolvedReference")
        /// The store refused the import as a whole (validation, constraints, I/O).
        public static let saveFailed = Code("saveFailed")
        /// A record matches an existing object and the merge policy is ``/TernCore/MergePolicy/error``.
        public static let conflict = Code("conflict")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do; values from the file never appear.
    public var message: String
    /// The file involved.
    public var path: String?
    /// The 1-based line, when one is to blame.
    public var line: Int?
    /// The 1-based column (TSV, CSV) or byte offset in the line (JSON), when known.
    public var column: Int?
    /// The error that caused this one, kept as it was thrown; nil when this one is the first.
    public var underlyingError: (any Error)? {
        get { cause?.error }
        set { cause = newValue.map(ErrorCause.init) }
    }
    /// ``underlyingError``, in a form that leaves the error's equality to its code and context.
    private var cause: ErrorCause?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong and what to do.
    ///   - path: The file involved.
    ///   - line: The line to blame.
    ///   - column: The column to blame.
    ///   - underlyingError: The error that caused this one, such as the store's refusal of a save.
    public init(
        _ code: Code, _ message: String, path: String? = nil, line: Int? = nil, column: Int? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.underlyingError = underlyingError
    }

    /// `path:line:column: message`, with the parts that are known.
    public var description: String {
        var place = path ?? ""
        if let line { place += (place.isEmpty ? "line " : ":") + String(line) }
        if let column, line != nil { place += ":" + String(column) }
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
