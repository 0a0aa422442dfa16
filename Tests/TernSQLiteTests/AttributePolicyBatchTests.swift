import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// The SQLite engine's page-at-a-time stage 1 of attribute policies, against the same policies
/// run one engine call per value and against the in-memory reference engine: relationships set
/// in stage 2 from the associations, filters, nil values, values converted to their attribute's
/// type, and a failure on the 17th object.
@Suite struct AttributePolicyBatchTests {
    static func model() throws -> VersionedModel {
        try VersionedModel("Orders") {
            ModelVersion("v1") {
                Entity("Customer") {
                    Attribute("name", .string)
                    Attribute("age", .integer64)
                    Relationship("orders", to: "Order", inverse: "customer").toMany()
                }
                Entity("Order") {
                    Attribute("total", .double)
                    Attribute("placed", .date)
                    Attribute("note", .string)
                    Relationship("customer", to: "Customer", inverse: "orders")
                }
            }
            ModelVersion("v2") {
                Entity("Client") {
                    Attribute("name", .string)
                    Attribute("years", .integer16)
                    Attribute("label", .string)
                    Attribute("rank", .integer64).default(.integer(3))
                    Relationship("purchases", to: "Purchase", inverse: "client").toMany()
                }
                Entity("Purchase") {
                    Attribute("amount", .integer32)
                    Attribute("day", .string)
                    Attribute("placed", .date)
                    Attribute("note", .string)
                    Attribute("big", .boolean)
                    Relationship("client", to: "Client", inverse: "purchases")
                }
            }
        }
    }

    /// 40 customers (every fifth without an age) and 300 orders (every ninth without a date,
    /// every fourth without a note, every eleventh without a customer), keys with gaps.
    static func rows() -> [StoreRow] {
        var orders: [StoreRow] = []
        var ordersOfCustomer: [Int64: [RowReference]] = [:]
        for index in 1...300 {
            var attributes: [String: AttributeValue] = ["total": .double(Double(index) * 1.75)]
            if index % 9 != 0 {
                attributes["placed"] = .date(Date(timeIntervalSinceReferenceDate: Double(index) * 86_400.5))
            }
            if index % 4 != 0 { attributes["note"] = .string("note \(index)") }
            let reference = RowReference(entityName: "Order", primaryKey: Int64(index + index / 50))
            var toOne: [String: RowReference] = [:]
            if index % 11 != 0 {
                let customer = Int64((index % 40 + 1) * 3)
                toOne["customer"] = RowReference(entityName: "Customer", primaryKey: customer)
                ordersOfCustomer[customer, default: []].append(reference)
            }
            orders.append(StoreRow(reference: reference, version: 1, attributes: attributes, toOne: toOne))
        }
        var customers: [StoreRow] = []
        for index in 1...40 {
            var attributes: [String: AttributeValue] = ["name": .string("customer \(index)")]
            if index % 5 != 0 { attributes["age"] = .integer(Int64(20 + index)) }
            let key = Int64(index * 3)
            customers.append(
                StoreRow(
                    reference: RowReference(entityName: "Customer", primaryKey: key), version: 2,
                    attributes: attributes,
                    toMany: ["orders": ordersOfCustomer[key] ?? []]))
        }
        return customers + orders
    }

    /// Customer to Client: the age becomes an Integer 16 (converted), a label only with an age.
    struct ClientPolicy: AttributeMigrationPolicy {
        let sourceAttributeNames = ["name", "age"]
        let destinationAttributeNames = ["name", "years", "label"]

        func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
            throws(MigrationError)
        {
            destination[0] = source[0]
            destination[1] = source[1]
            if case .integer(let age)? = source[1] { destination[2] = .string("aged \(age)") }
        }
    }

    /// Order to Purchase: the total becomes an Integer 32 (a double converted), the date text;
    /// on the object whose total is `failingTotal`, it throws or gives text for the integer.
    struct PurchasePolicy: AttributeMigrationPolicy {
        enum Failure: Sendable { case none, throwing, wrongType }
        var failure = Failure.none
        static let failingTotal = 17 * 1.75

        let sourceAttributeNames = ["total", "placed", "note"]
        let destinationAttributeNames = ["amount", "day", "placed", "note", "big"]

        func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
            throws(MigrationError)
        {
            guard case .double(let total)? = source[0] else { return }
            if total == Self.failingTotal, failure == .throwing {
                throw MigrationError(.evaluationFailed, "The 17th order fails")
            }
            destination[0] = total == Self.failingTotal && failure == .wrongType ? .string("seventeen") : .double(total)
            if case .date(let date)? = source[1] {
                destination[1] = .string(String(Int(date.timeIntervalSinceReferenceDate / 86_400)))
            }
            destination[2] = source[1]
            destination[3] = source[2]
            destination[4] = .bool(total > 100)
        }
    }

    /// Runs an attribute policy's stage 1 one engine call per value, as an ``EntityMigrationPolicy``.
    struct PerValue<Policy: AttributeMigrationPolicy>: EntityMigrationPolicy {
        let policy: Policy

        func sourceAttributes(for mapping: EntityMapping) -> Set<String>? { Set(policy.sourceAttributeNames) }

        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            var values: [AttributeValue?] = []
            for name in policy.sourceAttributeNames {
                guard case .value(let value) = try manager.sourceValue(forKeyPath: [name], of: source) else { return }
                values.append(value)
            }
            var computed = [AttributeValue?](repeating: nil, count: policy.destinationAttributeNames.count)
            do throws(MigrationError) {
                try policy.destinationValues(from: values, into: &computed)
            } catch {
                throw error.located(mapping: mapping.name, property: nil)
            }
            let destination = try manager.insertDestinationInstance(ofEntity: mapping.destinationEntityName ?? "")
            for (name, value) in zip(policy.destinationAttributeNames, computed) {
                do throws(MigrationError) {
                    try manager.setDestinationValue(value, forAttribute: name, of: destination)
                } catch {
                    throw error.located(mapping: mapping.name, property: name)
                }
            }
            manager.associate(source: source, withDestination: destination, mapping: mapping)
        }
    }

    /// One pass: customers to clients, orders over 5 to purchases linked to their client.
    static func mapping() throws -> StepMapping {
        let pass = MappingModel(
            name: "Split",
            entityMappings: [
                EntityMapping(
                    name: "CustomerToClient", kind: .custom, source: "Customer", destination: "Client",
                    policy: "Clients"),
                EntityMapping(
                    name: "OrderToPurchase", kind: .custom, source: "Order", destination: "Purchase",
                    filter: try FetchPredicate("total > 5"),
                    relationships: [
                        PropertyMapping(
                            "client",
                            .call(
                                .destinationInstances,
                                [.literal(.string("CustomerToClient")), .source(keyPath: ["customer"])]))
                    ],
                    policy: "Purchases"),
            ])
        return StepMapping(from: "v1", to: "v2", passes: [pass])
    }

    static func policies(perValue: Bool, failure: PurchasePolicy.Failure = .none) -> MigrationPolicyRegistry {
        var policies = MigrationPolicyRegistry()
        let purchases = PurchasePolicy(failure: failure)
        if perValue {
            policies.register(PerValue(policy: ClientPolicy()), named: "Clients")
            policies.register(PerValue(policy: purchases), named: "Purchases")
        } else {
            policies.register(ClientPolicy(), named: "Clients")
            policies.register(purchases, named: "Purchases")
        }
        return policies
    }

    /// A store of ``rows()`` in a new directory.
    static func store(in directory: TemporaryDirectory, named name: String) async throws -> URL {
        let url = directory.path(name)
        try await MigrationStores.make(at: url, model: try model().versions[0].model, rows: rows())
        return url
    }

    @Test(arguments: [1, 7, 1000])
    func thePageAtATimePathGivesWhatCallsPerValueGive(batchSize: Int) async throws {
        let model = try Self.model()
        let directory = try TemporaryDirectory()
        let batched = try await Self.store(in: directory, named: "Batched.sqlite")
        let perValue = try await Self.store(in: directory, named: "PerValue.sqlite")
        for (url, isPerValue) in [(batched, false), (perValue, true)] {
            var options = MigrationOptions(batchSize: batchSize)
            options.policies = Self.policies(perValue: isPerValue)
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, mappings: [try Self.mapping()], options: options)
        }
        let reference = InMemoryMigrationManager(
            source: model.versions[0].model, rows: Self.rows(), destination: model.versions[1].model)
        try MappingRunner(policies: Self.policies(perValue: false)).run(try Self.mapping().passes, manager: reference)

        let v2 = model.versions[1].model
        for entity in ["Client", "Purchase"] {
            let rows = try await MigrationStores.rows(of: entity, at: batched, model: v2)
            let expected = try await MigrationStores.rows(of: entity, at: perValue, model: v2)
            let inMemory = reference.destinationRows.filter { $0.reference.entityName == entity }
            #expect(rows.count == (entity == "Client" ? 40 : 298))  // totals of 1.75 and 3.5 fail the filter
            #expect(rows.map(\.reference) == expected.map(\.reference), "\(entity)")
            #expect(rows.map(\.version) == expected.map(\.version), "\(entity)")
            #expect(rows.map(\.attributes) == expected.map(\.attributes), "\(entity)")
            #expect(rows.map(\.toOne) == expected.map(\.toOne), "\(entity)")
            #expect(rows.map(\.reference) == inMemory.map(\.reference), "\(entity)")
            #expect(rows.map(\.attributes) == inMemory.map(\.attributes), "\(entity)")
            #expect(rows.map(\.toOne) == inMemory.map(\.toOne), "\(entity)")
        }
        let clients = try await MigrationStores.rows(of: "Client", at: batched, model: v2)
        #expect(
            clients[0].attributes == [
                "name": .string("customer 1"), "years": .integer(21), "label": .string("aged 21"), "rank": .integer(3),
            ])
        // No age: no years, no label.
        #expect(clients[4].attributes == ["name": .string("customer 5"), "rank": .integer(3)])
        let purchases = try await MigrationStores.rows(of: "Purchase", at: batched, model: v2)
        // The third order (5.25) is the first to pass the filter; 5.25 is stored as the integer 5.
        #expect(purchases[0].attributes["amount"] == .integer(5) && purchases[0].attributes["big"] == .bool(false))
        #expect(purchases.filter { $0.toOne["client"] == nil }.count == purchases.count / 11)
        #expect(purchases.contains { $0.attributes["note"] == nil && $0.attributes["placed"] == nil })
    }

    @Test(arguments: [PurchasePolicy.Failure.throwing, .wrongType])
    func aFailureOnTheSeventeenthObjectStopsTheMigrationAsCallsPerValueDo(failure: PurchasePolicy.Failure) async throws
    {
        let model = try Self.model()
        let directory = try TemporaryDirectory()
        var errors: [MigrationError] = []
        for isPerValue in [false, true] {
            let url = try await Self.store(in: directory, named: isPerValue ? "PerValue.sqlite" : "Batched.sqlite")
            let before = try Data(contentsOf: url)
            var options = MigrationOptions(batchSize: 7)
            options.policies = Self.policies(perValue: isPerValue, failure: failure)
            let error = await #expect(throws: MigrationError.self) {
                try await SQLiteStoreMigrator().migrateStore(
                    at: url, model: model, mappings: [try Self.mapping()], options: options)
            }
            #expect(try Data(contentsOf: url) == before)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: directory.url.path).allSatisfy {
                    !$0.contains("migrating")
                })
            if let error { errors.append(error) }
        }
        let (batched, perValue) = try (#require(errors.first), #require(errors.last))
        #expect(errors.count == 2)
        #expect(batched.code == .evaluationFailed)
        #expect(batched.mappingName == "OrderToPurchase" && batched.mappingName == perValue.mappingName)
        #expect(batched.propertyName == perValue.propertyName && batched.entityName == perValue.entityName)
        #expect(batched.propertyName == (failure == .wrongType ? "amount" : nil))
    }

    /// A seeds' split policy that records each object it computes.
    struct RecordingSplitPolicy: AttributeMigrationPolicy {
        let log: StageOneLog
        let name: String
        let sourceAttributeNames = ["timeStamp"]
        let destinationAttributeNames: [String]

        func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
            throws(MigrationError)
        {
            guard case .date(let date)? = source[0] else { return }
            log.record(name)
            destination[0] =
                name == "printed"
                ? .string("\(date.timeIntervalSinceReferenceDate)") : .double(date.timeIntervalSinceReferenceDate)
        }
    }

    @Test func twoAttributePoliciesOfTwoPassesShareOneWalk() async throws {
        let events = try XcodeModel.readVersionedModel(at: MigrationFiles.eventModel)
        let directory = try TemporaryDirectory()
        let url = try await StoreMigratorSharedWalkTests().eventStore(in: directory)
        var mapping = try StepMapping(contentsOf: MigrationFiles.eventSplit)
        mapping.passes[0].entityMappings[0].kind = .custom
        mapping.passes[0].entityMappings[0].policyName = "Printed"
        mapping.passes[1].entityMappings[0].kind = .custom
        mapping.passes[1].entityMappings[0].policyName = "Stamped"
        let log = StageOneLog()
        var options = MigrationOptions(batchSize: 1_000)
        options.policies.register(
            RecordingSplitPolicy(log: log, name: "printed", destinationAttributeNames: ["printedDate"]),
            named: "Printed")
        options.policies.register(
            RecordingSplitPolicy(log: log, name: "stamped", destinationAttributeNames: ["timeStamp"]), named: "Stamped")
        let progress = Progress(totalUnitCount: 0)
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: events, mappings: [mapping], options: options, progress: progress)
        // Every seventh of the 2,500 events has no date; the others give one object of each, in turns.
        let dated = (1...2_500).filter { $0 % 7 != 0 }.count
        #expect(log.entries == Array(repeating: ["printed", "stamped"], count: dated).flatMap { $0 })
        #expect(progress.completedUnitCount == progress.totalUnitCount)
        let target = events.versions[1].model
        let stamps = try await MigrationStores.rows(of: "TimeStampEvent", at: url, model: target)
        #expect(stamps.count == 2_500)
        #expect(stamps[0].attributes["timeStamp"] == .double(3_601.5))
    }
}
