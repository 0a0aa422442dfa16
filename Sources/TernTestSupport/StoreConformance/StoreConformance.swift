public import TernCore
import Testing

/// Makes fresh, empty stores of one type for the conformance suite.
///
/// ```swift
/// let sqlite = StoreFactory("SQLite") { model in try SQLiteStore(creatingAt: tmp.path("x.sqlite"), model: model) }
/// ```
public struct StoreFactory: Sendable, CustomStringConvertible {
    /// The store type's name, shown in test results.
    public var name: String
    /// Makes a new empty store for a model.
    public var make: @Sendable (ManagedObjectModel) async throws -> any PersistentStore

    /// Creates a factory.
    ///
    /// - Parameters:
    ///   - name: The store type's name.
    ///   - make: Makes a new empty store for a model.
    public init(_ name: String, make: @escaping @Sendable (ManagedObjectModel) async throws -> any PersistentStore) {
        self.name = name
        self.make = make
    }

    /// The store type's name.
    public var description: String { name }

    /// In-memory stores.
    public static let inMemory = StoreFactory("in-memory") { InMemoryStore(model: $0) }
}

/// The behaviours every ``PersistentStore`` must show, run through contexts and directly,
/// for any store type (fluent-kit's benchmarker, for Tern's stores).
///
/// Each behaviour is one method; ``run(_:)`` runs one by name, so a test target covers every
/// store type and behaviour with one parameterised test:
///
/// ```swift
/// @Test(arguments: [StoreFactory.inMemory], StoreConformance.Behaviour.allCases)
/// func conforms(factory: StoreFactory, behaviour: StoreConformance.Behaviour) async throws {
///     try await StoreConformance(factory).run(behaviour)
/// }
/// ```
public struct StoreConformance: Sendable {
    /// One behaviour of the suite.
    public enum Behaviour: String, CaseIterable, Sendable {
        /// Every attribute type saves and reads back unchanged.
        case everyAttributeTypeRoundTrips
        /// Keys are unique within an inheritance root; fetching a parent finds subentities.
        case inheritance
        /// Metadata reads back as written.
        case metadataRoundTrips
        /// Rows are read by reference; missing ones are left out; counts agree.
        case rowsByReference
        /// Sorting, offset and limit.
        case sortOffsetLimit
        /// Predicates on attributes and through relationships, in the store and on pending changes.
        case predicates
        /// A table of predicates and sorts gives the same rows in the same order as in-memory evaluation.
        case predicatesMatchInMemoryEvaluation
        /// A one-to-one relationship keeps both sides.
        case toOneRelationship
        /// A one-to-many relationship keeps both sides.
        case toManyRelationship
        /// An ordered relationship keeps its order.
        case orderedRelationship
        /// A many-to-many relationship keeps both sides.
        case manyToManyRelationship
        /// Deleting cascades to the destinations.
        case cascadeDeleteRule
        /// Deleting clears the inverse.
        case nullifyDeleteRule
        /// Deleting is refused while destinations exist.
        case denyDeleteRule
        /// Deleting leaves the destinations untouched.
        case noActionDeleteRule
        /// Every validation failure is reported, and nothing is saved.
        case validationFailures
        /// Uniqueness constraints are enforced by the context and by the store.
        case uniquenessConstraints
        /// A stale version is refused by the store itself.
        case staleVersionIsRefused
        /// Each merge policy resolves a conflict between two contexts.
        case mergePolicies
        /// Pages of any size give the rows of a plain fetch, in order.
        case pagingMatchesFetch
        /// Rows saved or deleted between pages are seen as documented.
        case pagingSeesChangesBetweenPages
        /// A context's batched iteration hands every object once, in order, in batches.
        case batchedIteration
        /// Objects of a batch that are kept, looked up or changed stay the context's only
        /// instances of their rows; the others go.
        case batchedIterationKeepsIdentity
        /// Reading or writing a property of a fault loads it at once.
        case faultsFireOnAccess
        /// A fault whose row was deleted elsewhere becomes inaccessible instead of failing.
        case faultsOfDeletedRowsBecomeInaccessible
        /// A child context's faults see its parent's unsaved changes.
        case childContextFaultsSeeTheParentsChanges
        /// Objects a child pushed up get their permanent IDs when the parent saves.
        case childContextsAdoptPermanentIDs
        /// Batch inserts and updates check types always, and the model's rules when asked.
        case batchValidation
        /// Batch deletes apply cascade, nullify, deny and no-action rules when asked.
        case batchDeleteRules
    }

    /// The factory of the stores under test.
    public let factory: StoreFactory

    /// Creates the suite for one store type.
    ///
    /// - Parameter factory: Makes the stores under test.
    public init(_ factory: StoreFactory) {
        self.factory = factory
    }

    /// Runs one behaviour on a fresh store.
    ///
    /// - Parameter behaviour: The behaviour to check.
    /// - Throws: When the store fails unexpectedly; broken expectations are recorded as issues.
    public func run(_ behaviour: Behaviour) async throws {
        switch behaviour {
        case .everyAttributeTypeRoundTrips: try await everyAttributeTypeRoundTrips()
        case .inheritance: try await inheritance()
        case .metadataRoundTrips: try await metadataRoundTrips()
        case .rowsByReference: try await rowsByReference()
        case .sortOffsetLimit: try await sortOffsetLimit()
        case .predicates: try await predicates()
        case .predicatesMatchInMemoryEvaluation: try await predicatesMatchInMemoryEvaluation()
        case .toOneRelationship: try await toOneRelationship()
        case .toManyRelationship: try await toManyRelationship()
        case .orderedRelationship: try await orderedRelationship()
        case .manyToManyRelationship: try await manyToManyRelationship()
        case .cascadeDeleteRule: try await cascadeDeleteRule()
        case .nullifyDeleteRule: try await nullifyDeleteRule()
        case .denyDeleteRule: try await denyDeleteRule()
        case .noActionDeleteRule: try await noActionDeleteRule()
        case .validationFailures: try await validationFailures()
        case .uniquenessConstraints: try await uniquenessConstraints()
        case .staleVersionIsRefused: try await staleVersionIsRefused()
        case .mergePolicies: try await mergePolicies()
        case .pagingMatchesFetch: try await pagingMatchesFetch()
        case .pagingSeesChangesBetweenPages: try await pagingSeesChangesBetweenPages()
        case .batchedIteration: try await batchedIteration()
        case .batchedIterationKeepsIdentity: try await batchedIterationKeepsIdentity()
        case .faultsFireOnAccess: try await faultsFireOnAccess()
        case .faultsOfDeletedRowsBecomeInaccessible: try await faultsOfDeletedRowsBecomeInaccessible()
        case .childContextFaultsSeeTheParentsChanges: try await childContextFaultsSeeTheParentsChanges()
        case .childContextsAdoptPermanentIDs: try await childContextsAdoptPermanentIDs()
        case .batchValidation: try await batchValidation()
        case .batchDeleteRules: try await batchDeleteRules()
        }
    }

    // MARK: - Non public

    /// A coordinator over a fresh store with the conformance model.
    func makeCoordinator() async throws -> (PersistentStoreCoordinator, any PersistentStore) {
        let store = try await factory.make(ConformanceModel.model)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(store)
        return (coordinator, store)
    }
}
