import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Every real fixture store with a model bundle migrates, from the version that wrote it, to the
/// bundle's newest version, with every row accounted for.
@Suite struct FixtureStoreMigrationTests {
    /// Each bundle's versions, oldest first (Xcode records no order; these follow the names).
    static let orders: [String: [String]] = [
        "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld": ["SampleModel", "SampleModel2", "SampleModel3"],
        "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld": ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"],
        "CoreDataStack/Sample.xcdatamodeld": ["TestModel", "TestModel 2"],
    ]

    static let stores = Fixtures.stores.compactMap { store in store.model.map { (store.path, $0) } }

    /// The number of objects of exactly each concrete entity.
    static func counts(at url: URL, model: ManagedObjectModel) async throws -> [String: Int] {
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        var counts: [String: Int] = [:]
        for entity in model.entities where !entity.isAbstract {
            counts[entity.name] = try await store.count(of: entity.name)
        }
        return counts
    }

    @Test(arguments: stores)
    func migratesToTheBundlesNewestVersionWithEveryRow(path: String, bundle: String) async throws {
        let order = try #require(Self.orders[bundle])
        let model = try XcodeModel.readVersionedModel(at: Fixtures.url(bundle), order: order)
        let newest = try #require(order.last)
        let directory = try TemporaryDirectory()
        let url = try directory.copy(Fixtures.url(path))
        let plan = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model, to: newest)
        let source = try #require(model.version(named: plan.source)?.model)
        let before = try await Self.counts(at: url, model: source)

        let report = try await SQLiteStoreMigrator().migrateStore(at: url, model: model, to: newest)
        #expect(report.plan.destination == newest)
        #expect(
            report.inPlaceSteps == Array(report.plan.steps.indices),
            "every step of \(path) is inferred and runs in place")
        let target = try #require(model.version(named: newest)?.model)
        #expect(target.isCompatible(with: try SQLiteStore.metadata(at: url)))
        // Follow each object through the steps' entity mappings: every one arrives.
        var expected = before
        for step in report.plan.steps {
            var next: [String: Int] = [:]
            for mapping in step.mappings.flatMap(\.entityMappings)
            where mapping.kind == .copy || mapping.kind == .transform {
                guard let from = mapping.sourceEntityName, let to = mapping.destinationEntityName else { continue }
                next[to, default: 0] += expected[from] ?? 0
            }
            expected = next
        }
        let after = try await Self.counts(at: url, model: target)
        #expect(after.filter { $0.value > 0 } == expected.filter { $0.value > 0 })
        #expect(after.values.reduce(0, +) == before.values.reduce(0, +))
        let verification = try await StoreVerifier.verify(storeAt: url, model: target)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
    }

    /// A store whose `Z_PRIMARYKEY` numbers no longer match its rows' `Z_ENT` (the hostile case
    /// `primarykey-wrong-entity-numbers`): a rebuild used to copy none of its rows and report
    /// success, and the in-place path relabelled them. Every path now refuses it untouched. The
    /// rows of ZPERSON, whose table is Person's alone, are Person's objects whatever their `Z_ENT`
    /// (as Core Data reads them): only ZCAR, shared by Car's hierarchy, is named.
    @Test(arguments: [MigrationStrategy.automatic, .inPlace, .rebuild])
    func aStoreWithRowsNoEntityOwnsIsRefusedUntouched(strategy: MigrationStrategy) async throws {
        let bundle = "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld"
        let order = try #require(Self.orders[bundle])
        let model = try XcodeModel.readVersionedModel(at: Fixtures.url(bundle), order: order)
        let directory = try TemporaryDirectory()
        let url = try directory.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        do {
            let connection = try SQLiteStore.openExisting(url, configuration: SQLiteConfiguration())
            try connection.executeOnce("UPDATE Z_PRIMARYKEY SET Z_ENT = Z_ENT + 10")
        }
        let bytes = try Data(contentsOf: url)
        let folder = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()

        let options = MigrationOptions(strategy: strategy)
        let error = try await #require(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(at: url, model: model, to: "SampleModel3", options: options)
        }
        #expect(error.code == .storeFailure)
        #expect(error.message.hasPrefix("125 row(s) of ZCAR have an entity number (Z_ENT)"), "\(error)")
        #expect(try Data(contentsOf: url) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == folder)
    }
}
