// swift-tools-version:6.2
import PackageDescription

/// Settings shared by every Swift target: Swift 6 language mode plus the upcoming features
/// that make access control and isolation explicit.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .enableUpcomingFeature("InferIsolatedConformances"),
]

let package = Package(
    name: "Tern",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TernCore", targets: ["TernCore"]),
        .library(name: "TernFormats", targets: ["TernFormats"]),
        .library(name: "TernRelational", targets: ["TernRelational"]),
        .library(name: "TernSQLite", targets: ["TernSQLite"]),
        .library(name: "TernMigration", targets: ["TernMigration"]),
        .library(name: "TernBinaryStore", targets: ["TernBinaryStore"]),
        .library(name: "TernXMLStore", targets: ["TernXMLStore"]),
        .library(name: "TernStores", targets: ["TernStores"]),
        .library(name: "TernContainer", targets: ["TernContainer"]),
        .library(name: "TernPostgreSQL", targets: ["TernPostgreSQL"]),
        .library(name: "TernSync", targets: ["TernSync"]),
        .library(name: "TernMigrationTesting", targets: ["TernMigrationTesting"]),
        .executable(name: "tern", targets: ["tern"]),
        .library(name: "TernCodegen", targets: ["TernCodegen"]),
        .plugin(name: "TernModelCodegen", targets: ["TernModelCodegen"]),
    ],
    targets: [
        // MARK: C libraries (Debian: libsqlite3-dev, zlib1g-dev, libssl-dev, libpq-dev)
        .systemLibrary(
            name: "CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(
            name: "CCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .systemLibrary(
            name: "CPostgreSQL", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),

        // MARK: Library
        .target(name: "TernCore", dependencies: ["CCrypto"], swiftSettings: swiftSettings),
        .target(name: "TernFormats", dependencies: ["TernCore", "CZlib"], swiftSettings: swiftSettings),
        .target(
            name: "TernRelational", dependencies: ["TernCore", "TernFormats", "TernMigration"],
            swiftSettings: swiftSettings),
        .target(
            name: "TernSQLite",
            dependencies: ["TernCore", "TernFormats", "TernMigration", "TernRelational", "CSQLite"],
            swiftSettings: swiftSettings),
        .target(name: "TernMigration", dependencies: ["TernCore", "TernFormats"], swiftSettings: swiftSettings),
        .target(
            name: "TernBinaryStore", dependencies: ["TernCore", "TernFormats", "CZlib"], swiftSettings: swiftSettings),
        .target(name: "TernXMLStore", dependencies: ["TernCore", "TernFormats"], swiftSettings: swiftSettings),
        .target(
            name: "TernPostgreSQL",
            dependencies: ["TernCore", "TernFormats", "TernRelational", "TernMigration", "CPostgreSQL"],
            swiftSettings: swiftSettings),
        .target(
            name: "TernSync", dependencies: ["TernCore", "TernRelational", "TernSQLite", "TernPostgreSQL"],
            swiftSettings: swiftSettings),
        .target(
            name: "TernStores",
            dependencies: [
                "TernCore", "TernFormats", "TernRelational", "TernSQLite", "TernMigration", "TernBinaryStore",
                "TernXMLStore",
                "TernPostgreSQL",
            ],
            swiftSettings: swiftSettings),
        .target(
            name: "TernMigrationTesting", dependencies: ["TernCore", "TernMigration", "TernSQLite", "TernStores"],
            swiftSettings: swiftSettings),
        .target(
            name: "TernContainer",
            dependencies: ["TernCore", "TernFormats", "TernSQLite", "TernMigration", "TernStores"],
            swiftSettings: swiftSettings),
        .target(
            name: "ChefsBook",
            dependencies: ["TernCore", "TernFormats", "TernSQLite", "TernMigration", "TernContainer"],
            path: "Examples/ChefsBook", exclude: ["StarterRecipes.json", "StarterRecipes.tsv"],
            sources: ["Sources/ChefsBook"],
            resources: [.copy("ChefsBook.xcdatamodeld")], swiftSettings: swiftSettings, plugins: ["TernModelCodegen"]),

        // MARK: Code generation (`TernModelCodegen` build plugin, `tern generate`)
        .target(name: "TernCodegen", dependencies: ["TernCore", "TernFormats"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "tern-model-codegen", dependencies: ["TernCodegen", "TernFormats", "TernCore"],
            path: "Sources/TernModelCodegenTool", swiftSettings: swiftSettings),
        .plugin(name: "TernModelCodegen", capability: .buildTool(), dependencies: ["tern-model-codegen"]),
        .target(
            name: "TernTool",
            dependencies: [
                "TernCore", "TernFormats", "TernRelational", "TernSQLite", "TernMigration", "TernStores",
                "TernContainer", "ChefsBook",
                "TernPostgreSQL", "TernSync",
                "TernMigrationTesting",
                "TernCodegen",
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "tern", dependencies: ["TernTool"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "tern-crash-helper",
            dependencies: [
                "TernBinaryStore", "TernXMLStore", "TernSQLite", "TernMigration", "TernStores", "TernContainer",
                "ChefsBook", "TernSync",
                "TernPostgreSQL",
            ],
            path: "Sources/TernCrashHelper", swiftSettings: swiftSettings),

        .executableTarget(
            name: "tern-postgres-helper", dependencies: ["TernCore", "TernPostgreSQL"],
            path: "Sources/TernPostgreSQLHelper", swiftSettings: swiftSettings),

        // MARK: Benchmarks (`swift run -c release tern-bench`)
        .executableTarget(
            name: "tern-bench",
            dependencies: [
                "TernCore", "TernSQLite", "TernMigration", "TernFormats", "TernStores", "TernTool", "CSQLite",
                "TernPostgreSQL",
            ],
            path: "Benchmarks/Sources/tern-bench", swiftSettings: swiftSettings),

        // MARK: Test support and tests
        .target(
            name: "TernTestSupport", dependencies: ["TernCore", "TernFormats", "TernMigration", "CSQLite"],
            path: "Sources/TernTestSupport", swiftSettings: swiftSettings),
        .testTarget(
            name: "TernCoreTests", dependencies: ["TernCore", "TernTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernFormatsTests", dependencies: ["TernFormats", "TernTestSupport", "CSQLite", "CZlib"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernSQLiteTests",
            dependencies: [
                "TernSQLite", "TernRelational", "TernFormats", "TernMigration", "TernTestSupport", "tern-crash-helper",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "StoreConformanceTests", dependencies: ["TernCore", "TernTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernMigrationTests", dependencies: ["TernMigration", "TernFormats", "TernTestSupport"],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "AtomicStoreTests",
            dependencies: ["TernBinaryStore", "TernXMLStore", "TernTestSupport", "tern-crash-helper"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernToolTests",
            dependencies: [
                "TernTool", "TernRelational", "TernSQLite", "TernFormats", "TernMigration", "TernStores",
                "TernContainer", "TernTestSupport",
                "ChefsBook", "tern-crash-helper", "TernPostgreSQL", "TernSync", "TernCodegen",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernContainerTests",
            dependencies: [
                "TernContainer", "TernStores", "TernSQLite", "TernFormats", "TernMigration", "TernTestSupport",
                "ChefsBook",
                "tern-crash-helper",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernPostgreSQLTests",
            dependencies: [
                "TernPostgreSQL", "TernRelational", "TernSQLite", "TernFormats", "TernTestSupport",
                "tern-postgres-helper",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernSyncTests",
            dependencies: [
                "TernSync", "TernSQLite", "TernPostgreSQL", "TernFormats", "TernTestSupport", "ChefsBook", "TernTool",
                "tern-crash-helper", "TernMigration", "TernStores",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernMigrationTestingTests",
            dependencies: ["TernMigrationTesting", "TernFormats", "TernTestSupport", "ChefsBook"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "TernCodegenTests",
            dependencies: ["TernCodegen", "TernCore", "TernFormats", "TernSQLite", "TernTestSupport", "ChefsBook"],
            resources: [.copy("Kitchen.xcdatamodeld")], swiftSettings: swiftSettings,
            plugins: ["TernModelCodegen"]),
        .testTarget(
            name: "TernStoresTests",
            dependencies: [
                "TernStores", "TernRelational", "TernSQLite", "TernFormats", "TernMigration", "TernTestSupport",
                "TernPostgreSQL",
            ],
            swiftSettings: swiftSettings),
    ]
)

// MARK: Fuzz targets
//
// libFuzzer executables under `Fuzz/`, added only when `TERN_FUZZ=1` so that a plain
// `swift build` / `swift test` neither builds them nor needs the fuzzer runtime.
// `Scripts/fuzz` sets the variable and builds them with `-sanitize=fuzzer,address`.
if Context.environment["TERN_FUZZ"] == "1" {
    let fuzzTargets: [(name: String, dependencies: [Target.Dependency])] = [
        ("FuzzPredicate", ["TernCore"]),
        ("FuzzModelXML", ["TernCore", "TernFormats"]),
        ("FuzzModelElements", ["TernCore", "TernFormats"]),
        ("FuzzModelCache", ["TernCore", "TernFormats"]),
        ("FuzzMetadata", ["TernCore", "TernFormats", "TernSQLite"]),
        ("FuzzValueExpression", ["TernMigration"]),
        ("FuzzMappingFile", ["TernMigration"]),
        ("FuzzDelimitedRecords", ["TernFormats"]),
        ("FuzzJSONRecords", ["TernFormats"]),
    ]
    package.targets.append(.target(name: "FuzzSupport", path: "Fuzz/FuzzSupport", swiftSettings: swiftSettings))
    for fuzz in fuzzTargets {
        package.targets.append(
            .executableTarget(
                name: fuzz.name, dependencies: ["FuzzSupport"] + fuzz.dependencies, path: "Fuzz/\(fuzz.name)",
                swiftSettings: swiftSettings))
        package.products.append(.executable(name: fuzz.name, targets: [fuzz.name]))
    }
}
