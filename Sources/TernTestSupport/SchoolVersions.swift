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
}
