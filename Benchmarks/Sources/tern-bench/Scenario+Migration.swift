import Foundation
import TernCore
import TernMigration
import TernSQLite
import TernStores

/// The inferred migrations: `inferred-migration` (one step: an attribute added with a default,
/// one renamed through its renaming identifier, one removed) and `progressive-migration` (five
/// versions, the same kinds of change one per step). The baseline runs the same DDL by hand:
/// `ALTER TABLE … ADD COLUMN … DEFAULT`, `RENAME COLUMN`, `DROP COLUMN`, one transaction per step.
struct InferredMigrationScenario: ScenarioImplementation {
    /// `inferredMigration` or `progressiveMigration`.
    let scenario: Scenario

    /// The two versions of the inferred step: `title` renamed from `name`, `priority` added
    /// with a default, `flag` removed.
    static func inferredModel() throws -> VersionedModel {
        try VersionedModel("Events") {
            ModelVersion("v1") { EventData.entity() }
            ModelVersion("v2") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("title", .string).renamed(from: "name")
                    Attribute("timeStamp", .date)
                    Attribute("amount", .integer64).indexed()
                    Attribute("priority", .integer64).default(.integer(3))
                }
            }
        }
    }

    /// Five versions, one change each: `note` added with a default, `name` renamed `title`,
    /// `flag` removed, `priority` added with a default.
    static func progressiveModel() throws -> VersionedModel {
        try VersionedModel("Events") {
            ModelVersion("v1") { EventData.entity() }
            ModelVersion("v2") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("name", .string)
                    Attribute("timeStamp", .date)
                    Attribute("amount", .integer64).indexed()
                    Attribute("flag", .boolean)
                    Attribute("note", .string).default(.string("none"))
                }
            }
            ModelVersion("v3") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("title", .string).renamed(from: "name")
                    Attribute("timeStamp", .date)
                    Attribute("amount", .integer64).indexed()
                    Attribute("flag", .boolean)
                    Attribute("note", .string).default(.string("none"))
                }
            }
            ModelVersion("v4") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("title", .string)
                    Attribute("timeStamp", .date)
                    Attribute("amount", .integer64).indexed()
                    Attribute("note", .string).default(.string("none"))
                }
            }
            ModelVersion("v5") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("title", .string)
                    Attribute("timeStamp", .date)
                    Attribute("amount", .integer64).indexed()
                    Attribute("note", .string).default(.string("none"))
                    Attribute("priority", .integer64).default(.integer(3))
                }
            }
        }
    }

    /// The DDL of each step, as a developer would write it.
    private var steps: [[String]] {
        scenario == .inferredMigration
            ? [
                [
                    "ALTER TABLE ZEVENT ADD COLUMN ZPRIORITY INTEGER DEFAULT 3",
                    "ALTER TABLE ZEVENT RENAME COLUMN ZNAME TO ZTITLE",
                    "ALTER TABLE ZEVENT DROP COLUMN ZFLAG",
                ]
            ]
            : [
                ["ALTER TABLE ZEVENT ADD COLUMN ZNOTE VARCHAR DEFAULT 'none'"],
                ["ALTER TABLE ZEVENT RENAME COLUMN ZNAME TO ZTITLE"],
                ["ALTER TABLE ZEVENT DROP COLUMN ZFLAG"],
                ["ALTER TABLE ZEVENT ADD COLUMN ZPRIORITY INTEGER DEFAULT 3"],
            ]
    }

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        let model = try scenario == .inferredMigration ? Self.inferredModel() : Self.progressiveModel()
        var watch = Stopwatch()
        watch.start()
        let report = try await StoreMigrator().migrateStore(at: .file(input.store), model: model)
        watch.stop()
        // The planner may join consecutive inferred steps into one; the rows end the same.
        FileHandle.standardError.write(Data("  Tern planned \(report.plan.steps.count) step(s)\n".utf8))
        return watch.timing(checksum: 0)
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        do {
            let database = try RawDatabase.openStore(input.store)
            for step in steps {
                try database.execute("BEGIN IMMEDIATE")
                for statement in step { try database.execute(statement) }
                try database.execute("COMMIT")
            }
        }
        // Timed with the close, as Tern's migration is: the last connection to close checkpoints
        // the write-ahead log into the store, which costs as much as the change itself.
        watch.stop()
        return watch.timing(checksum: 0)
    }

    func runShell(_ input: ScenarioInput) async throws -> Timing {
        try SQLiteShell.run(store: input.store, script: SQLiteShell.script(steps: steps))
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        let note = scenario == .progressiveMigration ? "TOTAL(LENGTH(ZNOTE))" : "0"
        return try RawDatabase(path: input.store.path).checksum(
            """
            SELECT COUNT(*), TOTAL(ZID), TOTAL(LENGTH(ZTITLE)), TOTAL(CAST(ZTIMESTAMP AS INTEGER)), TOTAL(ZAMOUNT), \
            TOTAL(ZPRIORITY), \(note), (SELECT COUNT(*) FROM pragma_table_info('ZEVENT')) FROM ZEVENT
            """)
    }
}
