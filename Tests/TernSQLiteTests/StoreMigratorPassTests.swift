import Foundation
import Synchronization
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Multi-pass migration in dependency order, and cancellation, on real SQLite stores.
@Suite struct StoreMigratorPassTests {
    static func school() throws -> VersionedModel { try SchoolVersions.model() }
    static let passes = SchoolVersions.passes
    static func schoolRows() -> [StoreRow] { SchoolVersions.rows() }

    @Test func runsFivePassesInDependencyOrderIntoOneDestination() async throws {
        let model = try Self.school()
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: Self.schoolRows())
        let mapping = try StepMapping(jsonData: Data(Self.passes.utf8))
        var events: [String] = []
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 1),
            onEvent: { recorder.record($0) })
        for event in recorder.events {
            if case .entityMappingStarted(_, let name, let count) = event { events.append("\(name):\(count)") }
        }
        #expect(
            events == [
                "PersonToPerson:1", "StudentToStudent:3", "CourseToCourse:1", "ClassToClass:2",
                "RegistrationToRegistration:4",
            ])

        let v2 = model.versions[1].model
        let people = try await MigrationStores.rows(of: "Person", at: url, model: v2)
        #expect(people.map { $0.attributes["fullName"] } == [.string("Ada Teacher")])
        let students = try await MigrationStores.rows(of: "Student", at: url, model: v2)
        #expect(
            students.map { $0.attributes["fullName"] } == [
                .string("STUDENT 2"), .string("STUDENT 3"), .string("STUDENT 4"),
            ])
        #expect(students.map { $0.attributes["number"] } == [.integer(102), .integer(103), .integer(104)])
        let classes = try await MigrationStores.rows(of: "Class", at: url, model: v2)
        let courses = try await MigrationStores.rows(of: "Course", at: url, model: v2)
        #expect(courses.map { $0.attributes["title"] } == [.string("Algebra")])
        #expect(classes.allSatisfy { $0.toOne["course"] == courses[0].reference })
        #expect(courses[0].toMany["classes"].map(Set.init) == Set(classes.map(\.reference)))
        let registrations = try await MigrationStores.rows(of: "Registration", at: url, model: v2)
        func name(_ reference: RowReference?) -> AttributeValue? {
            students.first { $0.reference == reference }?.attributes["fullName"]
        }
        func room(_ reference: RowReference?) -> AttributeValue? {
            classes.first { $0.reference == reference }?.attributes["room"]
        }
        let described = registrations.map { registration in
            "\(registration.attributes["grade"].map { "\($0)" } ?? "-") \(name(registration.toOne["student"]).map { "\($0)" } ?? "-") \(room(registration.toOne["session"]).map { "\($0)" } ?? "-")"
        }
        let expected = [(10, 2, 1), (11, 3, 1), (12, 4, 2), (13, 2, 2)].map { grade, student, session in
            "\(AttributeValue.integer(Int64(grade))) \(AttributeValue.string("STUDENT \(student)")) \(AttributeValue.string("R\(session)"))"
        }
        #expect(described == expected)
    }

    @Test func ordersTheEntityMappingsOfOnePassByDependencies() async throws {
        let model = try Self.school()
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: Self.schoolRows())
        // The five passes' entity mappings in one pass, shuffled, ordered by the engine.
        let five = try StepMapping(jsonData: Data(Self.passes.utf8))
        let byName = Dictionary(uniqueKeysWithValues: five.passes.flatMap(\.entityMappings).map { ($0.name, $0) })
        let shuffled = [
            "RegistrationToRegistration", "ClassToClass", "StudentToStudent", "CourseToCourse", "PersonToPerson",
        ]
        var pass = MappingModel(name: "School", entityMappings: try shuffled.map { try #require(byName[$0]) })
        pass.order = .dependencies
        let mapping = StepMapping(from: "v1", to: "v2", passes: [pass])
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 2),
            onEvent: { recorder.record($0) })
        let started = recorder.events.compactMap { event -> String? in
            if case .entityMappingStarted(_, let name, _) = event { return name } else { return nil }
        }
        #expect(
            started == [
                "CourseToCourse", "ClassToClass", "PersonToPerson", "StudentToStudent", "RegistrationToRegistration",
            ])
        let v2 = model.versions[1].model
        let students = try await MigrationStores.rows(of: "Student", at: url, model: v2)
        let classes = try await MigrationStores.rows(of: "Class", at: url, model: v2)
        let registrations = try await MigrationStores.rows(of: "Registration", at: url, model: v2)
        #expect(registrations.count == 4)
        #expect(
            registrations.allSatisfy { registration in
                students.contains { $0.reference == registration.toOne["student"] }
                    && classes.contains { $0.reference == registration.toOne["session"] }
            })
        #expect(
            students.map { $0.attributes["fullName"] } == [
                .string("STUDENT 2"), .string("STUDENT 3"), .string("STUDENT 4"),
            ])
    }

    @Test func cancellationLeavesTheSourceByteForByte() async throws {
        let model = try Self.school()
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        try await MigrationStores.make(
            at: url, model: model.versions[0].model, rows: namedRows(of: "Course", count: 3_000))
        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
                files[name] = try Data(contentsOf: directory.path(name))
            }
            return files
        }
        let before = try snapshot()
        let mapping = try StepMapping(jsonData: Data(Self.passes.utf8))
        let progress = Progress(totalUnitCount: 1)
        let observed = ProgressBox(progress)
        // In a task of its own, so that the cancellation stops the migration and not the test.
        let migration = Task {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 100),
                progress: observed.progress,
                onEvent: { event in
                    // Cancel as soon as the Course mapping starts reading.
                    if case .entityMappingStarted(_, "CourseToCourse", _) = event {
                        withUnsafeCurrentTask { $0?.cancel() }
                    }
                })
        }
        let error = await #expect(throws: MigrationError.self) { try await migration.value }
        #expect(error?.code == .cancelled)
        #expect(progress.fractionCompleted < 1)
        let after = try snapshot()
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after.filter { before[$0.key] != $0.value }.keys.sorted() == [])
        #expect(after == before)
    }
}

/// Stage 2 of a long mapping can be cancelled: the walk over the destination objects checks
/// between pages, as stage 1's walk over the source does.
@Suite struct StageTwoCancellationTests {
    /// A policy whose stage 2 counts its calls and cancels the migration's task at the first.
    final class CancellingPolicy: EntityMigrationPolicy, Sendable {
        let calls = Mutex(0)

        func createRelationships(
            forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
        ) throws(MigrationError) {
            calls.withLock { $0 += 1 }
            withUnsafeCurrentTask { $0?.cancel() }
        }
    }

    @Test func cancellingDuringStageTwoStopsAtTheNextPage() async throws {
        let model = try VersionedModel("Items") {
            ModelVersion("v1") { Entity("Item") { Attribute("name", .string) } }
            ModelVersion("v2") { Entity("Item") { Attribute("title", .string).renamed(from: "name") } }
        }
        let directory = try TemporaryDirectory()
        let url = directory.path("Items.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: namedRows(of: "Item", count: 50))
        let before = try Data(contentsOf: url)
        let mapping = try StepMapping(
            jsonData: Data(
                #"""
                {"source": "v1", "destination": "v2", "entityMappings": [
                  {"name": "ItemToItem", "kind": "custom", "source": "Item", "destination": "Item",
                   "policy": "Cancelling", "attributes": {"title": "$source.name"}}]}
                """#.utf8))
        let policy = CancellingPolicy()
        var options = MigrationOptions(batchSize: 5)
        options.policies.register(policy, named: "Cancelling")
        let chosen = options
        // In a task of its own, so that the cancellation stops the migration and not the test.
        let migration = Task {
            try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping], options: chosen)
        }
        let error = await #expect(throws: MigrationError.self) { try await migration.value }
        #expect(error?.code == .cancelled)
        // The page of five being handled when the task was cancelled, not the fifty objects.
        #expect(policy.calls.withLock { $0 } == 5)
        #expect(try Data(contentsOf: url) == before)
    }
}

/// Rows 1…count of an entity, each with a `name` ("course 1", …).
private func namedRows(of entity: String, count: Int) -> [StoreRow] {
    (1...count).map { key in
        StoreRow(
            reference: RowReference(entityName: entity, primaryKey: Int64(key)), version: 1,
            attributes: ["name": .string("\(entity.lowercased()) \(key)")])
    }
}

/// Collects events from the migration's callback.
final class EventRecorder: Sendable {
    private let storage = Mutex<[MigrationEvent]>([])

    /// Records an event.
    func record(_ event: MigrationEvent) { storage.withLock { $0.append(event) } }

    /// The events so far.
    var events: [MigrationEvent] { storage.withLock { $0 } }
}
