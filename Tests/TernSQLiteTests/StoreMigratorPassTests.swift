import Foundation
import Synchronization
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Multi-pass migration in dependency order, and cancellation, on real SQLite stores.
@Suite struct StoreMigratorPassTests {
    /// A school: v1 keeps names in `name`, v2 in `fullName`/`title`; each entity is one pass.
    static func school() throws -> VersionedModel {
        try VersionedModel("School") {
            SchoolVersions.version("v1", personName: "name", number: .integer32, courseName: "name")
            SchoolVersions.version("v2", personName: "fullName", number: .integer64, courseName: "title")
        }
    }

    static let passes = #"""
        {"source": "v1", "destination": "v2", "passes": [
          {"name": "People", "entityMappings": [{"name": "PersonToPerson", "kind": "transform", "source": "Person",
            "destination": "Person", "attributes": {"fullName": "$source.name"}}]},
          {"name": "Students", "entityMappings": [{"name": "StudentToStudent", "kind": "transform", "source": "Student",
            "destination": "Student", "attributes": {"fullName": "upper($source.name)", "number": "$source.number"}}]},
          {"name": "Courses", "entityMappings": [{"name": "CourseToCourse", "kind": "transform", "source": "Course",
            "destination": "Course", "attributes": {"title": "$source.name"}}]},
          {"name": "Classes", "entityMappings": [{"name": "ClassToClass", "kind": "transform", "source": "Class",
            "destination": "Class", "attributes": {"room": "$source.room"},
            "relationships": {"course": "destinationInstances(\"CourseToCourse\", $source.course)"}}]},
          {"name": "Registrations", "entityMappings": [{"name": "RegistrationToRegistration", "kind": "transform",
            "source": "Registration", "destination": "Registration", "attributes": {"grade": "$source.grade"},
            "relationships": {"student": "destinationInstances(\"StudentToStudent\", $source.student)",
                              "session": "destinationInstances(\"ClassToClass\", $source.session)"}}]}]}
        """#.replacingOccurrences(of: "upper(", with: "uppercase(")

    /// The school's v1 objects: a person, three students, a course, two classes, four registrations.
    static func schoolRows() -> [StoreRow] {
        func ref(_ entity: String, _ key: Int) -> RowReference { RowReference(entityName: entity, primaryKey: Int64(key)) }
        var rows = [StoreRow(reference: ref("Person", 1), version: 1, attributes: ["name": .string("Ada Teacher")])]
        for student in 2...4 {
            rows.append(StoreRow(
                reference: ref("Student", student), version: 1,
                attributes: ["name": .string("student \(student)"), "number": .integer(Int64(100 + student))]))
        }
        rows.append(StoreRow(reference: ref("Course", 1), version: 1, attributes: ["name": .string("Algebra")]))
        for session in 1...2 {
            rows.append(StoreRow(
                reference: ref("Class", session), version: 1, attributes: ["room": .string("R\(session)")],
                toOne: ["course": ref("Course", 1)]))
        }
        for (index, (student, session)) in [(2, 1), (3, 1), (4, 2), (2, 2)].enumerated() {
            rows.append(StoreRow(
                reference: ref("Registration", index + 1), version: 1, attributes: ["grade": .integer(Int64(index + 10))],
                toOne: ["student": ref("Student", student), "session": ref("Class", session)]))
        }
        // The store writes both sides of a relationship from the rows: give each to-many its objects.
        let inverses = ["course": "classes", "student": "registrations", "session": "registrations"]
        for row in rows {
            for (name, target) in row.toOne {
                guard let inverse = inverses[name], let index = rows.firstIndex(where: { $0.reference == target }) else { continue }
                rows[index].toMany[inverse, default: []].append(row.reference)
            }
        }
        return rows
    }

    @Test func runsFivePassesInDependencyOrderIntoOneDestination() async throws {
        let model = try Self.school()
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: Self.schoolRows())
        let mapping = try StepMapping(jsonData: Data(Self.passes.utf8))
        var events: [String] = []
        let recorder = EventRecorder()
        try await StoreMigrator().migrateStore(
            at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 1),
            onEvent: { recorder.record($0) })
        for event in recorder.events { if case .entityMappingStarted(_, let name, let count) = event { events.append("\(name):\(count)") } }
        #expect(events == [
            "PersonToPerson:1", "StudentToStudent:3", "CourseToCourse:1", "ClassToClass:2", "RegistrationToRegistration:4",
        ])

        let v2 = model.versions[1].model
        let people = try await MigrationStores.rows(of: "Person", at: url, model: v2)
        #expect(people.map { $0.attributes["fullName"] } == [.string("Ada Teacher")])
        let students = try await MigrationStores.rows(of: "Student", at: url, model: v2)
        #expect(students.map { $0.attributes["fullName"] } == [.string("STUDENT 2"), .string("STUDENT 3"), .string("STUDENT 4")])
        #expect(students.map { $0.attributes["number"] } == [.integer(102), .integer(103), .integer(104)])
        let classes = try await MigrationStores.rows(of: "Class", at: url, model: v2)
        let courses = try await MigrationStores.rows(of: "Course", at: url, model: v2)
        #expect(courses.map { $0.attributes["title"] } == [.string("Algebra")])
        #expect(classes.allSatisfy { $0.toOne["course"] == courses[0].reference })
        #expect(courses[0].toMany["classes"].map(Set.init) == Set(classes.map(\.reference)))
        let registrations = try await MigrationStores.rows(of: "Registration", at: url, model: v2)
        func name(_ reference: RowReference?) -> AttributeValue? { students.first { $0.reference == reference }?.attributes["fullName"] }
        func room(_ reference: RowReference?) -> AttributeValue? { classes.first { $0.reference == reference }?.attributes["room"] }
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
        let shuffled = ["RegistrationToRegistration", "ClassToClass", "StudentToStudent", "CourseToCourse", "PersonToPerson"]
        var pass = MappingModel(name: "School", entityMappings: try shuffled.map { try #require(byName[$0]) })
        pass.order = .dependencies
        let mapping = StepMapping(from: "v1", to: "v2", passes: [pass])
        let recorder = EventRecorder()
        try await StoreMigrator().migrateStore(
            at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 2),
            onEvent: { recorder.record($0) })
        let started = recorder.events.compactMap { event -> String? in
            if case .entityMappingStarted(_, let name, _) = event { return name } else { return nil }
        }
        #expect(started == [
            "CourseToCourse", "ClassToClass", "PersonToPerson", "StudentToStudent", "RegistrationToRegistration",
        ])
        let v2 = model.versions[1].model
        let students = try await MigrationStores.rows(of: "Student", at: url, model: v2)
        let classes = try await MigrationStores.rows(of: "Class", at: url, model: v2)
        let registrations = try await MigrationStores.rows(of: "Registration", at: url, model: v2)
        #expect(registrations.count == 4)
        #expect(registrations.allSatisfy { registration in
            students.contains { $0.reference == registration.toOne["student"] }
                && classes.contains { $0.reference == registration.toOne["session"] }
        })
        #expect(students.map { $0.attributes["fullName"] } == [.string("STUDENT 2"), .string("STUDENT 3"), .string("STUDENT 4")])
    }

    @Test func cancellationLeavesTheSourceByteForByte() async throws {
        let model = try Self.school()
        let directory = try TemporaryDirectory()
        let url = directory.path("School.sqlite")
        let rows = (1...3_000).map { key in
            StoreRow(reference: RowReference(entityName: "Course", primaryKey: Int64(key)), version: 1,
                     attributes: ["name": .string("course \(key)")])
        }
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
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
            try await StoreMigrator().migrateStore(
                at: url, model: model, mappings: [mapping], options: MigrationOptions(batchSize: 100), progress: observed.progress,
                onEvent: { event in
                    // Cancel as soon as the Course mapping starts reading.
                    if case .entityMappingStarted(_, "CourseToCourse", _) = event { withUnsafeCurrentTask { $0?.cancel() } }
                })
        }
        let error = await #expect(throws: MigrationError.self) { try await migration.value }
        #expect(error?.code == .cancelled)
        #expect(progress.fractionCompleted < 1)
        #expect(try snapshot() == before)
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
