public import Foundation

/// One save as a store's persistent history recorded it: Core Data's
/// `NSPersistentHistoryTransaction`.
///
/// ```swift
/// for transaction in try await store.fetchHistory(HistoryFetchRequest(after: token)) {
///     print(transaction.author ?? "-", transaction.timestamp, transaction.changes.count)
/// }
/// ```
public struct HistoryTransaction: Hashable, Sendable {
    /// Where the transaction sits in the history: pass it to fetch what came after.
    public var token: HistoryToken
    /// When the save was committed.
    public var timestamp: Date
    /// The saving context's ``ObjectContext/transactionAuthor``, if it had one.
    public var author: String?
    /// The saving context's ``ObjectContext/name``, if it had one.
    public var contextName: String?
    /// The bundle identifier of the saving application, when it had one.
    public var bundleIdentifier: String?
    /// The name of the saving process.
    public var processName: String?
    /// The objects the save inserted, updated and deleted, in the order they were recorded.
    public var changes: [HistoryChange]

    /// Creates a transaction.
    ///
    /// - Parameters:
    ///   - token: Its place in the history.
    ///   - timestamp: When it was committed.
    ///   - author: The author.
    ///   - contextName: The context's name.
    ///   - bundleIdentifier: The application's bundle identifier.
    ///   - processName: The process's name.
    ///   - changes: Its changes.
    public init(
        token: HistoryToken, timestamp: Date, author: String? = nil, contextName: String? = nil,
        bundleIdentifier: String? = nil, processName: String? = nil, changes: [HistoryChange] = []
    ) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.bundleIdentifier = bundleIdentifier
        self.processName = processName
        self.changes = changes
    }
}

/// One object's change inside a ``HistoryTransaction``: Core Data's `NSPersistentHistoryChange`.
///
/// ```swift
/// switch change.changeType {
/// case .insert: print("new", change.objectID)
/// case .update: print("changed", change.updatedProperties ?? [])
/// case .delete: print("gone; kept values:", change.tombstone)
/// }
/// ```
public struct HistoryChange: Hashable, Sendable {
    /// What happened to the object. The raw values are Core Data's (`ACHANGE.ZCHANGETYPE`).
    public enum ChangeType: Int, Hashable, Sendable, CaseIterable, Codable {
        /// The object was inserted.
        case insert = 0
        /// Some of the object's properties changed.
        case update = 1
        /// The object was deleted.
        case delete = 2
    }

    /// The object that changed. For a deleted object, the ID it had.
    public var objectID: ObjectID
    /// What happened to it.
    public var changeType: ChangeType
    /// For an update, the names of the properties (attributes and relationships) that changed;
    /// nil for inserts and deletes, and when the store cannot tell.
    public var updatedProperties: Set<String>?
    /// For a delete, the values the object had for its attributes marked
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``; nil values are absent.
    /// Empty for inserts and updates.
    public var tombstone: [String: AttributeValue]

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - objectID: The object.
    ///   - changeType: What happened to it.
    ///   - updatedProperties: For an update, the properties that changed.
    ///   - tombstone: For a delete, the preserved attribute values.
    public init(
        objectID: ObjectID, changeType: ChangeType, updatedProperties: Set<String>? = nil,
        tombstone: [String: AttributeValue] = [:]
    ) {
        self.objectID = objectID
        self.changeType = changeType
        self.updatedProperties = updatedProperties
        self.tombstone = tombstone
    }
}
