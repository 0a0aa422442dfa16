import Synchronization

/// Permanent IDs before a save, and handing them down to child contexts.
extension ObjectContext {
    // MARK: - Permanent IDs

    /// Gives inserted objects their permanent IDs now, before they are saved: Core Data's
    /// `obtainPermanentIDs(for:)`.
    ///
    /// The keys are reserved in the stores that will hold the objects; the objects stay inserted
    /// and are saved under these IDs. Their temporary IDs keep working with ``object(with:)``.
    /// Child contexts that know the objects under their temporary IDs switch to the permanent
    /// ones too. Saving to the stores does all this by itself; call this to hand IDs to other
    /// contexts before the save.
    ///
    /// ```swift
    /// let soup = context.insert("Recipe")
    /// try await context.obtainPermanentIDs(for: [soup])
    /// let id = soup.objectID        // permanent: "x-coredata://<store UUID>/Recipe/p42"
    /// ```
    ///
    /// - Parameter objects: Objects of this context; those not inserted, or with permanent IDs
    ///   already, are left as they are.
    /// - Throws: ``TernError/Code/objectNotFound`` when no store holds an object's entity; any
    ///   store error.
    /// - Complexity: One key reservation per entity.
    public func obtainPermanentIDs(for objects: [ManagedObject]) async throws {
        let inserted = objects.filter {
            $0.graph === graph && $0.isInserted && !$0.isDeleted && $0.objectID.isTemporary
        }
        let mapping = try await permanentIDs(for: inserted)
        graph.replaceIDs(mapping, objectsAreKnown: true)
        await handPermanentIDsToChildren(mapping)
    }

    // MARK: - Non public

    /// Replaces temporary IDs with permanent ones here and in the child contexts, after an
    /// ancestor saved the objects or obtained their IDs.
    func adoptPermanentIDs(_ mapping: [ObjectID: ObjectID]) async {
        graph.replaceIDs(mapping)
        await handPermanentIDsToChildren(mapping)
    }

    /// Tells every live child context about new permanent IDs.
    func handPermanentIDsToChildren(_ mapping: [ObjectID: ObjectID]) async {
        guard !mapping.isEmpty else { return }
        let contexts = children.withLock { children in
            children.removeAll { $0.context == nil }
            return children.compactMap(\.context)
        }
        for child in contexts { await child.adoptPermanentIDs(mapping) }
    }
}
