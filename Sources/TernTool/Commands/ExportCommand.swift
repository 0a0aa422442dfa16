import Foundation
import TernCore
import TernSQLite
import TernStores

/// `tern export STORE [--model MODEL] [--entity E] [--format json|tsv] [--strict] [-o FILE]`: writes a
/// store's records out, streaming them in batches (see `docs/Export.md`).
struct ExportCommand: Command {
    /// The store to export.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The model to read the store with.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL",
        help: "The model to read the store with (default: the model cached in the store).")
    /// The entity to export.
    static let entity = ArgumentDefinition.option(
        "entity", value: "E", help: "Exports only this entity and its subentities (required for tsv).")
    /// The output format.
    static let format = ArgumentDefinition.option(
        "format", value: "json|tsv", help: "The record format: json (the default) or tsv.")
    /// Keys records by global identifier.
    static let globalIDs = ArgumentDefinition.flag(
        "global-ids",
        help: "Keys objects and relationships by their global identifiers (a synced store), ordered by them.")
    /// Fails at a value that cannot be read instead of writing null for it.
    static let strict = ArgumentDefinition.flag(
        "strict",
        help:
            "Fails at the first value that cannot be read (a missing external data file) instead of writing null for it."
    )
    /// The output file.
    static let output = ArgumentDefinition.option(
        "output", short: "o", value: "FILE", help: "Writes to FILE, replaced only on success (default: stdout).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "export",
        abstract: "Writes a store's records out as JSON or TSV.",
        discussion: """
            JSON is one object keyed by entity name; each value is an array of records, each listed
            under its own (most derived) entity and ordered by primary key:
              {"Car": [{"_id": "Car/p1", "maker": "FIAT", "owner": "Person/p3", "tags": []}]}
            _id is ENTITY/p<primary key>; to-one relationships hold an _id or null, to-many an array
            of _ids. Integers and doubles are numbers, Decimal a string, Boolean true/false, dates ISO
            8601 UTC with milliseconds, binary data base64, UUIDs upper-case strings, a missing value
            null. TSV (with --entity) is a header row (_id, then the attribute names) and one line
            per object of exactly that entity; \\t, \\n, \\r and \\\\ are escaped, an empty field is null.

            The store (SQLite, binary or XML, found from its contents) is opened read-only. Without
            --model, the model the store records is used (SQLite's model cache);
            with --model, the version whose hashes match the store's. Progress shows on stderr.

            With --global-ids (a SQLite store that syncs, docs/Sync.md), _id is ENTITY/<UUID>, the
            object's identity on every device, relationships name those identifiers, records are
            ordered by them and unordered to-many relationships are sorted: two devices that hold the
            same data export the same bytes although their primary keys differ.

            A value that cannot be read (an external data file missing because the store was
            copied without its _SUPPORT folder, a column its attribute's type cannot read) is
            written as null: everything else is exported, one warning on stderr gives the count
            and the first one (ENTITY/p<primary key>.PROPERTY, and the missing file's path), and
            the command exits 0; tern verify lists them all. With --strict the export fails at the
            first such value instead, and nothing is written.
            """,
        arguments: [
            store, model, ModelSelection.version, ModelSelection.order, entity, format, globalIDs, strict, output,
            .progress,
            .quiet,
        ],
        examples: [
            "tern export Recipes.sqlite > recipes.json",
            "tern export Recipes.sqlite --model Recipes.xcdatamodeld --entity Recipe --format tsv -o recipes.tsv",
            "tern export Recipes.sqlite --global-ids -o device-a.json",
        ])

    /// The store as typed.
    var storePath: String
    /// The model to read the store with, if given.
    var selection: ModelSelection?
    /// The entity to export, or nil for all.
    var entityName: String?
    /// The output format.
    var recordFormat: RecordFormat
    /// The output file, or nil for stdout.
    var outputPath: String?
    /// Whether records are keyed by global identifier.
    var keysByGlobalIdentifier: Bool
    /// Whether a value that cannot be read fails the export rather than being written as null.
    var isStrict: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        selection = try ModelSelection.parse(Self.model, from: arguments)
        entityName = arguments.value(of: Self.entity)
        outputPath = arguments.value(of: Self.output)
        keysByGlobalIdentifier = arguments.isSet(Self.globalIDs)
        isStrict = arguments.isSet(Self.strict)
        let formatName = arguments.value(of: Self.format) ?? RecordFormat.json.rawValue
        guard let recordFormat = RecordFormat(rawValue: formatName) else {
            throw ValidationError("unknown format '\(formatName)'; use json or tsv")
        }
        if recordFormat == .tsv, entityName == nil {
            throw ValidationError("tsv holds one entity; name it with --entity")
        }
        if keysByGlobalIdentifier, recordFormat == .tsv {
            throw ValidationError("--global-ids applies to json only")
        }
        self.recordFormat = recordFormat
    }

    /// Opens the store read-only and writes its records to a temporary file, then to the output.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        let kind = try file.kind()
        let store = try await open(file, kind: kind, in: context)
        if keysByGlobalIdentifier, !((store as? SQLiteStore)?.tracksGlobalIdentifiers ?? false) {
            throw CommandFailure(
                "\(file.displayName) has no global identifiers (it never synced); export it without --global-ids")
        }
        let model = store.model
        let entities = try exportedEntities(of: model)
        let counts = try await checkEveryRowBelongsToAnEntity(entities, of: model, in: store, file: file)
        let total = entities.reduce(Int64(0)) { $0 + Int64(counts[$1.name] ?? 0) }
        let destination = outputPath.map(context.environment.url(forPath:))
        let folder = destination?.deletingLastPathComponent() ?? FileManager.default.temporaryDirectory
        let temporary = folder.appendingPathComponent(".tern-export-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CommandFailure("cannot write in \(folder.path); check that the folder exists and is writable")
        }
        var keepsTemporary = false
        defer { if !keepsTemporary { try? FileManager.default.removeItem(at: temporary) } }
        let progress = Progress(totalUnitCount: total)
        let bar = context.progressBar("exporting", for: progress)
        let handle = try FileHandle(forWritingTo: temporary)
        do {
            // The bar ends before any note, so that the note starts a line of its own.
            defer {
                try? handle.close()
                bar.finish()
            }
            do {
                try await write(entities, of: model, from: store, to: handle, progress: progress)
            } catch let error as TernError where error.code == .invalidValue || error.code == .invalidExternalData {
                throw CommandFailure(
                    "cannot export \(file.displayName): \(StoreFile.message(of: error))\(error.path.map { " (\($0))" } ?? ""); "
                        + "export without --strict to write null for the values that cannot be read")
            }
        }
        let unreadable = (store as? SQLiteStore)?.unreadableValueLog ?? UnreadableValueLog()
        if let destination {
            // rename(2) replaces the destination atomically: readers see the old file or the new one.
            guard rename(temporary.path, destination.path) == 0 else {
                throw CommandFailure(
                    "cannot write \(outputPath ?? ""): \(String(cString: strerror(errno))); check the path")
            }
            context.note("exported \(total) object\(total == 1 ? "" : "s") to \(outputPath ?? "")")
        } else {
            keepsTemporary = true
            context.printContents(of: temporary, removingAfterwards: true)
        }
        if let warning = Self.warning(about: unreadable) { context.warn(warning) }
    }

    // MARK: - Non public

    /// Opens the store read-only with the chosen model, or with its own model cache; values that
    /// cannot be read are read as nil unless the export is strict.
    private func open(
        _ file: StoreFile, kind: StoreFile.Kind, in context: CommandContext
    ) async throws -> any PersistentStore {
        let model = try selection?.model(for: file, in: context, fallback: "export without --model")
        do {
            return try file.open(model: model, isReadOnly: true, unreadableValues: isStrict ? .fail : .readAsNil)
        } catch {
            throw CommandFailure("cannot open the store at \(file.displayName): \(StoreFile.message(of: error))")
        }
    }

    /// The warning about the values exported as null because they cannot be read: their count
    /// and the first one; nil when there are none.
    static func warning(about log: UnreadableValueLog) -> String? {
        guard let first = log.first.first else { return nil }
        let what: String
        switch first.kind {
        case .missingExternalData:
            what =
                first.path.map { "its external data file \($0) is missing or unreadable" }
                ?? "it references external data by a name that is not a UUID"
        case .invalidValue:
            what = "its column holds a value the attribute's type cannot read"
        }
        let values =
            log.count == 1 ? "1 value could not be read and was" : "\(log.count) values could not be read and were"
        let advice = first.path != nil ? "Copy the store with its _SUPPORT folder to export them; " : ""
        return
            "\(values) exported as null; the first is \(first.location): \(what). \(advice)tern verify lists them all"
    }

    /// The entities to export, sorted by name: every concrete one, or the chosen one and its subentities.
    private func exportedEntities(of model: ManagedObjectModel) throws(CommandFailure) -> [EntityDescription] {
        guard let entityName else { return model.entities.filter { !$0.isAbstract } }
        guard let entity = model.entity(named: entityName) else {
            let names = model.entities.map(\.name).joined(separator: ", ")
            throw CommandFailure("the store's model has no entity named '\(entityName)'; use one of: \(names)")
        }
        if recordFormat == .tsv { return [entity] }
        return ([entity] + model.allSubentities(of: entityName)).filter { !$0.isAbstract }.sorted { $0.name < $1.name }
    }

    /// Refuses a store whose tables hold rows of no entity (a damaged `Z_ENT` column or
    /// `Z_PRIMARYKEY` table): they would be left out of the export without a word.
    ///
    /// For each root entity whose hierarchy is exported, the count with subentities must equal the
    /// sum of the exact counts of the hierarchy's entities.
    ///
    /// - Returns: The number of objects of exactly each entity of those hierarchies, by name.
    /// - Complexity: One count per entity of the exported hierarchies, and one per root.
    private func checkEveryRowBelongsToAnEntity(
        _ entities: [EntityDescription], of model: ManagedObjectModel, in store: any PersistentStore, file: StoreFile
    ) async throws -> [String: Int] {
        let exported = Set(entities.map(\.name))
        var counts: [String: Int] = [:]
        for root in model.entities where root.parentName == nil {
            let hierarchy = [root] + model.allSubentities(of: root.name)
            guard hierarchy.contains(where: { exported.contains($0.name) }) else { continue }
            var request = StoreFetchRequest(entityName: root.name)
            request.includesSubentities = true
            let all = try await store.count(request)
            var known = 0
            for entity in hierarchy {
                var exact = StoreFetchRequest(entityName: entity.name)
                exact.includesSubentities = false
                let count = try await store.count(exact)
                counts[entity.name] = count
                known += count
            }
            guard all == known else {
                throw CommandFailure(
                    "\(file.displayName): \(all - known) objects of \(root.name) or its subentities have an entity "
                        + "number (Z_ENT) that matches no entity of the store (Z_PRIMARYKEY); nothing was exported. "
                        + "Run tern verify to list them")
            }
        }
        return counts
    }

    /// Streams the records of each entity to the file, batch by batch.
    private func write(
        _ entities: [EntityDescription], of model: ManagedObjectModel, from store: any PersistentStore,
        to handle: FileHandle, progress: Progress
    ) async throws {
        var writer = RecordWriter()
        if recordFormat == .json { writer.append(ascii: "{") }
        for (index, entity) in entities.enumerated() {
            let attributes = model.allAttributes(of: entity.name).filter { !$0.isTransient }
            let relationships = model.allRelationships(of: entity.name).filter { !$0.isTransient }
            let members = RecordFormat.JSONMembers(attributes: attributes, relationships: relationships)
            switch recordFormat {
            case .json:
                writer.append(index == 0 ? "\n" : ",\n")
                writer.appendQuoted(entity.name)
                writer.append(": [")
            case .tsv:
                writer.append(
                    (["_id"] + attributes.map(\.name)).map(RecordFormat.tsvEscaped).joined(separator: "\t") + "\n")
            }
            var first = true
            /// Writes one record, its values taken by attribute index.
            func write(
                _ reference: RowReference, toOne: [String: RowReference], toMany: [String: [RowReference]],
                identifier: ((RowReference) -> String)?, value: (Int) -> AttributeValue?
            ) {
                switch recordFormat {
                case .json:
                    writer.append(first ? "\n" : ",\n")
                    RecordFormat.appendJSONRecord(
                        reference: reference, value: value, toOne: toOne, toMany: toMany, members: members,
                        identifier: identifier, to: &writer)
                case .tsv:
                    RecordFormat.appendTSVLine(
                        reference: reference, count: attributes.count, value: value, to: &writer)
                }
                first = false
            }
            /// Counts a batch and writes out what it added once that is large.
            func finish(_ count: Int) throws {
                progress.completedUnitCount += Int64(count)
                if writer.bytes.count >= 1 << 18 { try writer.flush(to: handle) }
            }
            if !keysByGlobalIdentifier, let store = store as? SQLiteStore {
                // Values by position in the rows' attribute keys, looked up once per keys.
                var keys: AttributeKeys?
                var positions: [Int?] = []
                var last: Int64 = 0
                while true {
                    let batch = try await store.packedRows(
                        of: entity.name, includingSubentities: false, after: last, limit: Self.batchSize)
                    for row in batch {
                        let values = row.attributes
                        if values.keys !== keys {
                            keys = values.keys
                            positions = members.attributeNames.map(values.keys.position(of:))
                        }
                        write(row.reference, toOne: row.toOne, toMany: row.toMany, identifier: nil) {
                            positions[$0].flatMap { values[position: $0] }
                        }
                    }
                    try finish(batch.count)
                    guard batch.count == Self.batchSize, let key = batch.last?.reference.primaryKey else { break }
                    last = key
                }
            } else {
                try await forEachBatch(of: store, entity: entity.name) { batch, identifier in
                    for row in batch {
                        write(row.reference, toOne: row.toOne, toMany: row.toMany, identifier: identifier) {
                            row.attributes[members.attributeNames[$0]]
                        }
                    }
                    try finish(batch.count)
                }
            }
            if recordFormat == .json { writer.append(first ? "]" : "\n]") }
        }
        if recordFormat == .json { writer.append("\n}\n") }
        try writer.flush(to: handle)
    }

    /// The most rows read at a time.
    private static let batchSize = 1_000

    /// Calls `body` with each batch of an entity's rows: in primary-key order, or by global
    /// identifier with the names the records use (`Entity/<UUID>`).
    private func forEachBatch(
        of store: any PersistentStore, entity: String,
        _ body: ([StoreRow], ((RowReference) -> String)?) async throws -> Void
    ) async throws {
        guard keysByGlobalIdentifier, let store = store as? SQLiteStore else {
            try await StoreFiles.forEachBatch(of: store, entity: entity) { try await body($0, nil) }
            return
        }
        var last: UUID?
        while true {
            let identities = try await store.globalIdentities(ofEntity: entity, after: last, limit: 500)
            guard let next = identities.last?.identifier else { return }
            var names: [RowReference: String] = [:]
            for identity in identities { names[identity.reference] = "\(entity)/\(identity.identifier.uuidString)" }
            let rows = try await store.rows(for: identities.map(\.reference))
            var byReference: [RowReference: StoreRow] = [:]
            for row in rows { byReference[row.reference] = row }
            for row in rows {
                for reference in row.toOne.values.compactMap({ $0 }) + row.toMany.values.flatMap({ $0 })
                where names[reference] == nil {
                    let identifier = try await store.globalIdentity(of: reference)?.identifier.uuidString ?? "?"
                    names[reference] = "\(reference.entityName)/\(identifier)"
                }
            }
            try await body(identities.compactMap { byReference[$0.reference] }, { names[$0] ?? "?" })
            last = next
        }
    }
}
