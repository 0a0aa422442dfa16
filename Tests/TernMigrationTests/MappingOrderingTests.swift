import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

/// Entity mappings ordered by relationship dependency within one mapping model.
@Suite struct MappingOrderingTests {
    /// A school: Student inherits from Person, Class points to Course, Registration to Student and Class.
    static func school() throws -> VersionedModel {
        try VersionedModel("School") {
            SchoolVersions.version("v1", courseName: "name")
            SchoolVersions.version("v2", courseName: "title")
        }
    }

    /// The five entity mappings of the school in one pass, shuffled, with an optional `order`.
    static func schoolMapping(order: String?) -> String {
        let key = order.map { #""order": "\#($0)", "# } ?? ""
        return #"""
            {"source": "v1", "destination": "v2", "passes": [{"name": "School", \#(key)"entityMappings": [
              {"name": "RegistrationToRegistration", "kind": "transform", "source": "Registration",
               "destination": "Registration", "attributes": {"grade": "$source.grade"},
               "relationships": {"student": "destinationInstances(\"StudentToStudent\", $source.student)",
                                 "session": "destinationInstances(\"ClassToClass\", $source.session)"}},
              {"name": "PersonToPerson", "kind": "transform", "source": "Person", "destination": "Person",
               "attributes": {"name": "$source.name"}},
              {"name": "ClassToClass", "kind": "transform", "source": "Class", "destination": "Class",
               "attributes": {"room": "$source.room"},
               "relationships": {"course": "destinationInstances(\"CourseToCourse\", $source.course)"}},
              {"name": "StudentToStudent", "kind": "transform", "source": "Student", "destination": "Student",
               "attributes": {"name": "$source.name", "number": "$source.number"}},
              {"name": "CourseToCourse", "kind": "transform", "source": "Course", "destination": "Course",
               "attributes": {"title": "$source.name"}}]}]}
            """#
    }

    static func ref(_ entity: String, _ key: Int) -> RowReference {
        RowReference(entityName: entity, primaryKey: Int64(key))
    }

    static let rows = [
        StoreRow(reference: ref("Person", 1), version: 1, attributes: ["name": .string("Ada")]),
        StoreRow(
            reference: ref("Student", 2), version: 1, attributes: ["name": .string("Bob"), "number": .integer(7)]),
        StoreRow(reference: ref("Course", 1), version: 1, attributes: ["name": .string("Algebra")]),
        StoreRow(
            reference: ref("Class", 1), version: 1, attributes: ["room": .string("R1")],
            toOne: ["course": ref("Course", 1)]),
        StoreRow(
            reference: ref("Registration", 1), version: 1, attributes: ["grade": .integer(12)],
            toOne: ["student": ref("Student", 2), "session": ref("Class", 1)]),
    ]

    /// Runs the school mapping in memory; returns the destination entities in creation order and the registration.
    func run(order: String?) throws -> (entities: [String], registration: StoreRow?, students: [StoreRow]) {
        let model = try Self.school()
        let step = try StepMapping(jsonData: Data(Self.schoolMapping(order: order).utf8)).resolved(in: model)
        let manager = InMemoryMigrationManager(
            source: model.versions[0].model, rows: Self.rows, destination: model.versions[1].model)
        try MappingRunner().run(step.passes, manager: manager)
        var entities: [String] = []
        for row in manager.destinationRows where entities.last != row.reference.entityName {
            entities.append(row.reference.entityName)
        }
        let registration = manager.destinationRows.first { $0.reference.entityName == "Registration" }
        return (entities, registration, manager.destinationRows.filter { $0.reference.entityName == "Student" })
    }

    @Test func ordersAShuffledSchoolByDependencies() throws {
        let result = try run(order: "dependencies")
        #expect(result.entities == ["Person", "Student", "Course", "Class", "Registration"])
        let student = try #require(result.students.first)
        #expect(result.registration?.toOne["student"] == student.reference)
        #expect(result.registration?.attributes["grade"] == .integer(12))
    }

    @Test(arguments: [nil, "given"])
    func keepsTheGivenOrder(order: String?) throws {
        let result = try run(order: order)
        #expect(result.entities == ["Registration", "Person", "Class", "Student", "Course"])
    }

    @Test func orderingIsStableAndNamesNoCycleForTheSchool() throws {
        let model = try Self.school()
        var pass = try #require(try StepMapping(jsonData: Data(Self.schoolMapping(order: nil).utf8)).passes.first)
        #expect(pass.order == .given)
        #expect(pass.ordering(in: model.versions[1].model).entityMappings == pass.entityMappings)
        pass.order = .dependencies
        let ordering = pass.ordering(in: model.versions[1].model)
        #expect(
            ordering.entityMappings.map(\.name) == [
                "PersonToPerson", "StudentToStudent", "CourseToCourse", "ClassToClass", "RegistrationToRegistration",
            ])
        #expect(ordering.cycles.isEmpty)
    }

    // MARK: - Cycles

    /// Husband and Wife point to each other (a cycle); Child points to Husband.
    static func family() throws -> VersionedModel {
        func version(_ name: String, childName: String) -> ModelVersion {
            ModelVersion(name) {
                Entity("Child") {
                    Attribute(childName, .string)
                    Relationship("father", to: "Husband", inverse: "children")
                }
                Entity("Husband") {
                    Relationship("wife", to: "Wife", inverse: "husband")
                    Relationship("children", to: "Child", inverse: "father").toMany()
                }
                Entity("Wife") { Relationship("husband", to: "Husband", inverse: "wife") }
            }
        }
        return try VersionedModel("Family") {
            version("v1", childName: "name")
            version("v2", childName: "fullName")
        }
    }

    static let familyMapping = #"""
        {"source": "v1", "destination": "v2", "name": "Family", "order": "dependencies", "entityMappings": [
          {"name": "ChildToChild", "kind": "transform", "source": "Child", "destination": "Child",
           "attributes": {"fullName": "$source.name"},
           "relationships": {"father": "destinationInstances(\"HusbandToHusband\", $source.father)"}},
          {"name": "WifeToWife", "kind": "copy", "source": "Wife", "destination": "Wife"},
          {"name": "HusbandToHusband", "kind": "copy", "source": "Husband", "destination": "Husband"}]}
        """#

    @Test func cyclesRunInTheGivenOrderAndAreReportedInThePlan() throws {
        let model = try Self.family()
        let step = try StepMapping(jsonData: Data(Self.familyMapping.utf8)).resolved(in: model)
        let pass = try #require(step.passes.first)
        #expect(pass.order == .dependencies)
        let ordering = pass.ordering(in: model.versions[1].model)
        #expect(ordering.entityMappings.map(\.name) == ["WifeToWife", "HusbandToHusband", "ChildToChild"])
        #expect(ordering.cycles == [["WifeToWife", "HusbandToHusband"]])

        let plan = try MigrationPlanner(model: model, mappings: [step])
            .plan(storeHashes: model.versions[0].model.entityVersionHashes)
        let changes = try #require(plan.steps.first).changes.map(\.summary)
        #expect(
            changes.first
                == "pass Family: dependency cycle among WifeToWife, HusbandToHusband; they run in the given order")
        #expect(
            changes.dropFirst().map { $0.components(separatedBy: " (").last ?? "" } == [
                "WifeToWife)", "HusbandToHusband)", "ChildToChild)",
            ])
    }

    @Test func theOrderSurvivesTheFileAndUnknownOrdersAreRefused() throws {
        let step = try StepMapping(jsonData: Data(Self.familyMapping.utf8))
        let reread = try StepMapping(jsonData: try step.jsonData())
        #expect(reread == step)
        #expect(reread.passes.first?.order == .dependencies)
        let unknown = Self.familyMapping.replacingOccurrences(
            of: #""order": "dependencies""#, with: #""order": "random""#)
        #expect {
            try StepMapping(jsonData: Data(unknown.utf8))
        } throws: { error in
            (error as? MigrationError)?.code == .unreadableMappingFile
                && (error as? MigrationError)?.message.contains("given, dependencies") == true
        }
    }
}
