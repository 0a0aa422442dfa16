import Foundation
import TernCore
import TernFormats
import TernPostgreSQL
import TernRelational
import TernSQLite
import TernStores

/// A `STORE` argument: its location, its type found from its contents, and reading it.
struct StoreFile {
    /// A store type, as `--type` and `tern info` spell it.
    enum Kind: String, CaseIterable, Sendable {
        /// A Core Data SQLite store.
        case sqlite
        /// A Tern binary store.
        case binary
        /// A Core Data XML store (`NSXMLStoreType`).
        case xml
        /// A PostgreSQL database.
        case postgres

        /// The library's store type, or nil for a type Tern cannot open yet.
        var storeKind: StoreKind? {
            switch self {
            case .sqlite: .sqlite
            case .binary: .binary
            case .xml: .xml
            case .postgres: .postgreSQL
            }
        }
    }

    /// The path as the user typed it.
    var path: String
    /// The resolved location.
    var url: URL

    /// The help line for a `STORE` argument.
    static let help = "A store file (its type is found from its contents) or a postgres:// URL."

    /// Resolves a store argument.
    ///
    /// - Parameters:
    ///   - path: The path as the user typed it.
    ///   - environment: Where relative paths start.
    init(_ path: String, environment: ToolEnvironment) {
        self.path = path
        self.url = environment.url(forPath: path)
    }

    // MARK: - Reading

    /// The store's type, found from the first bytes of the file.
    ///
    /// - Throws: ``CommandFailure`` when the file is missing or of no known type.
    func kind() throws(CommandFailure) -> Kind {
        if isPostgreSQL { return .postgres }
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CommandFailure("no store exists at \(path); check the path")
        }
        let kind: StoreKind
        do {
            kind = try StoreFiles.kind(ofStoreAt: url)
        } catch let error as TernError where error.code == .unreadableStore {
            throw CommandFailure("\(path) is not a store Tern knows (SQLite, binary or XML); give a store file")
        } catch {
            throw CommandFailure("cannot read \(path): \(Self.message(of: error))")
        }
        switch kind {
        case .sqlite: return .sqlite
        case .binary: return .binary
        default: return .xml
        }
    }

    /// The store's metadata, read without writing beside the file.
    ///
    /// - Throws: ``CommandFailure`` when the file is not a readable store.
    func metadata() throws(CommandFailure) -> StoreMetadata {
        _ = try kind()
        do {
            if isPostgreSQL { return try PostgreSQLStore.metadata(at: path) }
            return try StoreFiles.metadata(at: url)
        } catch {
            throw CommandFailure(
                "cannot read the store's metadata at \(path): \(Self.message(of: error))")
        }
    }

    /// The number of objects of each entity, subentities not included, from the store's own tables.
    ///
    /// Every entity the store knows (`Z_PRIMARYKEY`) is listed, with zero when it has no objects;
    /// Core Data's history entities (numbered from 16000) are left out. With a model, an entity
    /// the store still records under the name it had before a rename (its renaming identifier) is
    /// listed under the model's name. The rows of a root entity without subentities are all its
    /// objects, whatever their `Z_ENT` says, as Core Data reads them.
    ///
    /// - Parameter model: The model to name the entities by, if one is given.
    /// - Throws: ``CommandFailure`` when the store cannot be read.
    /// - Complexity: One grouped count per inheritance root.
    func objectCounts(model: ManagedObjectModel? = nil) async throws(CommandFailure) -> [String: Int] {
        if try kind() != .sqlite { return try await atomicObjectCounts(model: model) }
        do {
            let connection = try Connection(path: url.path, configuration: .readOnly)
            var names: [Int64: String] = [:]
            var parents: [Int64: Int64] = [:]
            try connection.forEachRow("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") { row in
                guard let number = row[0].int64, number < 16000, let name = row[1].string else { return }
                names[number] = Self.modelName(of: name, in: model)
                parents[number] = row[2].int64 ?? 0
            }
            // A damaged Z_PRIMARYKEY may name an entity twice: count it once.
            var counts = Dictionary(names.values.map { ($0, 0) }, uniquingKeysWith: { first, _ in first })
            let tables = Set(
                try connection.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                    $0[0].string
                })
            let withSubentities = Set(parents.values)
            for (number, name) in names where (parents[number] ?? 0) == 0 {
                let candidates = Set(
                    ["Z" + name.uppercased()]
                        + (model?.entity(named: name)?.renamingIdentifier.map { ["Z" + $0.uppercased()] } ?? []))
                guard let found = candidates.sorted().first(where: tables.contains) else { continue }
                let table = SQL.identifier(found)
                if !withSubentities.contains(number) {
                    counts[name] = Int(try connection.fetchValue("SELECT COUNT(*) FROM \(table)")?.int64 ?? 0)
                    continue
                }
                try connection.forEachRow("SELECT Z_ENT, COUNT(*) FROM \(table) GROUP BY Z_ENT") { row in
                    guard let entity = row[0].int64.flatMap({ names[$0] }), let count = row[1].int64 else { return }
                    counts[entity] = Int(count)
                }
            }
            return counts
        } catch {
            throw CommandFailure("cannot count the objects in \(path): \(Self.message(of: error))")
        }
    }

    /// The model's name for an entity a store records: its own name, or the name of the model's
    /// entity whose renaming identifier it is.
    private static func modelName(of name: String, in model: ManagedObjectModel?) -> String {
        guard let model, model.entity(named: name) == nil,
            let renamed = model.entities.first(where: { $0.renamingIdentifier == name })
        else { return name }
        return renamed.name
    }

    /// The number of objects of each entity of a binary or XML store, read with the model it
    /// records. A Core Data XML store records none: it is read with `model`, or without one its
    /// objects are counted under the entity names as the file writes them (upper-cased).
    private func atomicObjectCounts(model: ManagedObjectModel?) async throws(CommandFailure) -> [String: Int] {
        do {
            var storeModel: ManagedObjectModel?
            if try kind() == .xml, try StoreFiles.metadata(at: url).applicationKeys[StoreFiles.modelCacheKey] == nil {
                guard let model else {
                    let document = try CoreDataXMLDocument(data: Data(contentsOf: url), path: url.path)
                    return Dictionary(document.objects.map { ($0.type, 1) }, uniquingKeysWith: +)
                }
                storeModel = model
            }
            let store = try open(model: storeModel, isReadOnly: true)
            var counts: [String: Int] = [:]
            for entity in store.model.entities where !entity.isAbstract {
                var request = StoreFetchRequest(entityName: entity.name)
                request.includesSubentities = false
                counts[entity.name] = try await store.count(request)
            }
            return counts
        } catch {
            throw CommandFailure("cannot count the objects in \(path): \(Self.message(of: error))")
        }
    }

    /// Whether the argument is a PostgreSQL connection URL (`postgres://…`) rather than a file.
    var isPostgreSQL: Bool { PostgreSQLLocation.isURL(path) }

    /// The store the argument names, for the library.
    var location: StoreLocation { isPostgreSQL ? .postgreSQL(path) : .file(url) }

    /// The argument as it may be shown: a PostgreSQL URL without its password.
    var displayName: String {
        guard isPostgreSQL else { return path }
        return (try? PostgreSQLLocation(path).description) ?? "postgres://"
    }

    /// Opens the store: a file of any type, or a PostgreSQL store.
    ///
    /// - Parameters:
    ///   - model: The model; nil to use the one the store records.
    ///   - isReadOnly: Whether saves are refused.
    ///   - unreadableValues: What reads of a SQLite store do with a value they cannot give.
    /// - Throws: Any error of opening the store.
    func open(
        model: ManagedObjectModel?, isReadOnly: Bool, unreadableValues: SQLiteConfiguration.UnreadableValues = .fail
    ) throws -> any PersistentStore {
        if isPostgreSQL { return try StoreFiles.openPostgreSQL(path, model: model, isReadOnly: isReadOnly) }
        return try StoreFiles.open(at: url, model: model, isReadOnly: isReadOnly, unreadableValues: unreadableValues)
    }

    /// The message of a lower layer's error, without the path it repeats, to follow a colon:
    /// a leading capital of an ordinary word is lowered and a final period dropped.
    static func message(of error: any Error) -> String {
        var text: String
        switch error {
        case let error as SQLiteError: text = error.message
        case let error as TernError: text = error.message
        case let error as PostgreSQLError: text = error.message
        default: text = String(describing: error)
        }
        if text.hasSuffix(".") { text.removeLast() }
        let start = text.prefix(2)
        if start.count == 2, start.first?.isUppercase == true, start.last?.isLowercase == true {
            text = text.prefix(1).lowercased() + text.dropFirst()
        }
        return text
    }
}
