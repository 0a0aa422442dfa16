public import TernCore

/// The school model of the seeds' multi-pass migration: `Person`, its subentity `Student`,
/// `Course`, `Class` and `Registration`, whose relationships fix a dependency order
/// (Person before Student before Course before Class before Registration).
///
/// ```swift
/// let v1 = SchoolVersions.version("v1", personName: "name", number: .integer32, courseName: "name")
/// ```
public enum SchoolVersions {
    /// One version of the school model.
    ///
    /// - Parameters:
    ///   - name: The version's name.
    ///   - personName: The name of `Person`'s string attribute.
    ///   - number: The type of `Student.number`.
    ///   - courseName: The name of `Course`'s string attribute.
    /// - Returns: The version.
    public static func version(
        _ name: String, personName: String = "name", number: AttributeType = .integer64, courseName: String
    ) -> ModelVersion {
        ModelVersion(name) {
            Entity("Person") { Attribute(personName, .string) }
            Entity("Student", parent: "Person") {
                Attribute("number", number)
                Relationship("registrations", to: "Registration", inverse: "student").toMany()
            }
            Entity("Course") {
                Attribute(courseName, .string)
                Relationship("classes", to: "Class", inverse: "course").toMany()
            }
            Entity("Class") {
                Attribute("room", .string)
                Relationship("course", to: "Course", inverse: "classes")
                Relationship("registrations", to: "Registration", inverse: "session").toMany()
            }
            Entity("Registration") {
                Attribute("grade", .integer16)
                Relationship("student", to: "Student", inverse: "registrations")
                Relationship("session", to: "Class", inverse: "registrations")
            }
        }
    }

    /// The model of the multi-pass tests: v1 keeps names in `name`, v2 in `fullName`/`title`.
    ///
    /// - Throws: ``TernCore/TernError`` if the model is invalid.
    public static func model() throws -> VersionedModel {
        try VersionedModel("School") {
            version("v1", personName: "name", number: .integer32, courseName: "name")
            version("v2", personName: "fullName", number: .integer64, courseName: "title")
        }
    }

    /// The v1 → v2 step in five passes, one per entity, in dependency order (mapping JSON).
    public static let passes = #"""
        {"source": "v1", "destination": "v2", "passes": [
          {"name": "People", "entityMappings": [{"name": "PersonToPerson", "kind": "transform", "source": "Person",
            "destination": "Person", "attributes": {"fullName": "$source.name"}}]},
          {"name": "Students", "entityMappings": [{"name": "StudentToStudent", "kind": "transform", "source": "Student",
            "destination": "Student", "attributes": {"fullName": "uppercase($source.name)", "number": "$source.number"}}]},
          {"name": "Courses", "entityMappings": [{"name": "CourseToCourse", "kind": "transform", "source": "Course",
            "destination": "Course", "attributes": {"title": "$source.name"}}]},
          {"name": "Classes", "entityMappings": [{"name": "ClassToClass", "kind": "transform", "source": "Class",
            "destination": "Class", "attributes": {"room": "$source.room"},
            "relationships": {"course": "destinationInstances(\"CourseToCourse\", $source.course)"}}]},
          {"name": "Registrations", "entityMappings": [{"name": "RegistrationToRegistration", "kind": "transform",
            "source": "Registration", "destination": "Registration", "attributes": {"grade": "$source.grade"},
            "relationships": {"student": "destinationInstances(\"StudentToStudent\", $source.student)",
                              "session": "destinationInstances(\"ClassToClass\", $source.session)"}}]}]}
        """#

    /// The school's v1 objects: a person, three students, a course, two classes, four registrations.
    public static func rows() -> [StoreRow] {
        func ref(_ entity: String, _ key: Int) -> RowReference {
            RowReference(entityName: entity, primaryKey: Int64(key))
        }
        var rows = [StoreRow(reference: ref("Person", 1), version: 1, attributes: ["name": .string("Ada Teacher")])]
        for student in 2...4 {
            rows.append(
                StoreRow(
                    reference: ref("Student", student), version: 1,
                    attributes: ["name": .string("student \(student)"), "number": .integer(Int64(100 + student))]))
        }
        rows.append(StoreRow(reference: ref("Course", 1), version: 1, attributes: ["name": .string("Algebra")]))
        for session in 1...2 {
            rows.append(
                StoreRow(
                    reference: ref("Class", session), version: 1, attributes: ["room": .string("R\(session)")],
                    toOne: ["course": ref("Course", 1)]))
        }
        for (index, (student, session)) in [(2, 1), (3, 1), (4, 2), (2, 2)].enumerated() {
            rows.append(
                StoreRow(
                    reference: ref("Registration", index + 1), version: 1,
                    attributes: ["grade": .integer(Int64(index + 10))],
                    toOne: ["student": ref("Student", student), "session": ref("Class", session)]))
        }
        // The store writes both sides of a relationship from the rows: give each to-many its objects.
        let inverses = ["course": "classes", "student": "registrations", "session": "registrations"]
        for row in rows {
            for (name, target) in row.toOne {
                guard let inverse = inverses[name], let index = rows.firstIndex(where: { $0.reference == target })
                else { continue }
                rows[index].toMany[inverse, default: []].append(row.reference)
            }
        }
        return rows
    }
}
