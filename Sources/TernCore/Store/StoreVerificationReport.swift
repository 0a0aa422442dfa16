/// One problem a store verification found: what kind, where (entity, primary key, property)
/// and a message saying what is wrong.
///
/// ```swift
/// for problem in report.problems where problem.kind == .danglingReference {
///     print(problem.entityName ?? "-", problem.primaryKey ?? 0, problem.message)
/// }
/// ```
public struct StoreProblem: Sendable, Hashable {
    /// A kind of problem. New kinds may be added in any release: match on the ones you handle.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable spelling, as `tern verify --json` prints it.
        public let rawValue: String

        /// Creates a kind. Use the static members.
        ///
        /// - Parameter rawValue: The kind's stable spelling.
        public init(_ rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable spelling.
        public var description: String { rawValue }

        /// The database file itself is damaged (SQLite's `integrity_check` failed).
        public static let integrity = Kind("integrity")
        /// The primary-key counter (`Z_MAX`) lags behind the largest primary key in use.
        public static let primaryKeyCounter = Kind("primaryKeyCounter")
        /// A row's entity number (`Z_ENT`) is not one of its table's concrete entities.
        public static let unknownEntity = Kind("unknownEntity")
        /// An entity's row in `Z_PRIMARYKEY` names a superentity (`Z_SUPER`) other than the model's.
        public static let entityHierarchy = Kind("entityHierarchy")
        /// A reference (a to-one column or a join-table row) points to an object that does not exist.
        public static let danglingReference = Kind("danglingReference")
        /// Two sides of a relationship and its inverse disagree.
        public static let inverseMismatch = Kind("inverseMismatch")
        /// A required attribute or to-one relationship has no value.
        public static let missingValue = Kind("missingValue")
        /// A to-many relationship holds fewer or more objects than its minimum or maximum count.
        public static let countOutOfRange = Kind("countOutOfRange")
        /// Objects share the values of a uniqueness constraint.
        public static let uniquenessViolation = Kind("uniquenessViolation")
        /// A value stored outside the store refers to a file that does not exist.
        public static let missingExternalData = Kind("missingExternalData")
        /// A column holds a value its attribute's type cannot read (text in a Date column, a
        /// blob in a Decimal column).
        public static let unreadableValue = Kind("unreadableValue")
        /// A row of a table that belongs to one entity alone (a root without subentities) has
        /// another entity number (`Z_ENT`). Core Data reads it as that entity's object, and so
        /// does Tern: reported as a warning, not a problem.
        public static let entityNumberMismatch = Kind("entityNumberMismatch")
    }

    /// The kind of problem.
    public var kind: Kind
    /// The entity of the object concerned, if the problem concerns one entity.
    public var entityName: String?
    /// The object's primary key, if the problem concerns one object.
    public var primaryKey: Int64?
    /// The property concerned, if any.
    public var propertyName: String?
    /// What is wrong, in one sentence.
    public var message: String

    /// Creates a problem.
    ///
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - entityName: The entity of the object concerned, if any.
    ///   - primaryKey: The object's primary key, if any.
    ///   - propertyName: The property concerned, if any.
    ///   - message: What is wrong, in one sentence.
    public init(
        _ kind: Kind, entityName: String? = nil, primaryKey: Int64? = nil, propertyName: String? = nil,
        message: String
    ) {
        self.kind = kind
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.propertyName = propertyName
        self.message = message
    }

    /// Where the problem is, as `Entity/p<key>.property` (or as much of it as is known).
    public var location: String {
        var text = entityName ?? "store"
        if let primaryKey { text += "/p\(primaryKey)" }
        if let propertyName { text += "." + propertyName }
        return text
    }
}

/// The result of verifying a store: the problems found and how much was checked.
///
/// ```swift
/// let report = try await StoreVerifier.verify(storeAt: url)
/// if !report.isClean { report.problems.forEach { print($0.location, $0.message) } }
/// ```
public struct StoreVerificationReport: Sendable, Hashable {
    /// The problems found, in the order the checks ran.
    public var problems: [StoreProblem]
    /// What was found that Core Data reads all the same (rows whose `Z_ENT` disagrees with the
    /// only entity of their table): reported, but the store stays clean.
    public var warnings: [StoreProblem]
    /// The number of objects in the store.
    public var objectCount: Int
    /// Whether more problems were found than the report keeps (see the verifier's limit).
    public var isTruncated: Bool
    /// The kinds of problem this store cannot have, so they were not looked for: a PostgreSQL
    /// store has no SQLite file to run `integrity_check` on and keeps no external data files.
    public var skippedChecks: [StoreProblem.Kind]

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - problems: The problems found.
    ///   - objectCount: The number of objects in the store.
    ///   - isTruncated: Whether more problems were found than kept.
    ///   - skippedChecks: The kinds of problem that do not apply to the store and were not looked for.
    ///   - warnings: What was found that Core Data reads all the same.
    public init(
        problems: [StoreProblem] = [], objectCount: Int = 0, isTruncated: Bool = false,
        skippedChecks: [StoreProblem.Kind] = [], warnings: [StoreProblem] = []
    ) {
        self.problems = problems
        self.warnings = warnings
        self.objectCount = objectCount
        self.isTruncated = isTruncated
        self.skippedChecks = skippedChecks
    }

    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }
}
