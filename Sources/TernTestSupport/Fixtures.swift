public import Foundation

/// Paths to the real Core Data fixtures kept in `Tests/Fixtures` (MIT-licensed; licences beside them).
///
/// Fixtures are read-only: copy a store with ``TemporaryDirectory/copy(_:)`` before opening it,
/// since opening a WAL store writes beside it.
public enum Fixtures {
    /// The `Tests/Fixtures` folder of the package.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // TernTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Tests/Fixtures", isDirectory: true)

    /// A file or folder inside `Tests/Fixtures`.
    ///
    /// - Parameter relativePath: For example `"CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"`.
    public static func url(_ relativePath: String) -> URL {
        root.appendingPathComponent(relativePath)
    }

    /// CoreDataPlus's `SampleModel.xcdatamodeld` (three versions).
    public static var sampleModel: URL { url("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld") }
    /// CoreDataPlus's `SampleModel3.xcdatamodeld` (three versions).
    public static var sampleModel3: URL { url("CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld") }
    /// CoreDataStack's `Sample.xcdatamodeld` (two versions).
    public static var coreDataStackModel: URL { url("CoreDataStack/Sample.xcdatamodeld") }

    /// The real stores, with the version of their bundle that wrote them (nil when no model file exists).
    public static let stores: [(path: String, model: String?, version: String?)] = [
        (
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite",
            "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld", "SampleModel"
        ),
        (
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite",
            "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld", "SampleModel2"
        ),
        (
            "CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
            "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld", "SampleModel3"
        ),
        ("CoreDataStack/TestModel.sqlite", "CoreDataStack/Sample.xcdatamodeld", "TestModel"),
        ("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", nil, nil),
    ]
}
