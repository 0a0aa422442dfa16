import Synchronization

/// What a context shows its child contexts when their faults fire.
///
/// A child's fault cannot wait for its parent (firing happens inside a property getter), so
/// each context keeps a copy of its unsaved states behind a lock. A child's ``perform(_:)`` has
/// every ancestor refresh its copy first; a fault then reads the nearest ancestor that changed
/// the object, and the store for objects no ancestor changed.
extension ObjectContext {
    // MARK: - Non public

    /// How an ancestor answers a child's fault.
    enum PublishedState {
        /// The ancestor has unsaved changes of the object: its state.
        case state(ObjectState)
        /// The ancestor deleted the object.
        case deleted
        /// The ancestor has no unsaved change of the object, known there by this ID.
        case unknown(ObjectID)
    }

    /// Refreshes the copy of the unsaved states child contexts read.
    ///
    /// - Complexity: O(*c*) in the number of changed objects.
    func publishUnsavedStates() {
        var states: [ObjectID: ObjectState] = [:]
        var deleted: Set<ObjectID> = []
        for (id, object) in graph.changed where object.isLoaded {
            if object.isDeleted {
                deleted.insert(id)
            } else if object.isInserted || object.hasChanges {
                states[id] = object.state
            }
        }
        let formerIDs = graph.formerIDs
        publication.withLock { publication in
            publication.states = states
            publication.deleted = deleted
            publication.formerIDs = formerIDs
        }
    }

    /// What this context last published about an object, for a child's fault.
    nonisolated func publishedState(for id: ObjectID) -> PublishedState {
        publication.withLock { publication in
            let canonical = publication.formerIDs[id] ?? id
            if publication.deleted.contains(canonical) { return .deleted }
            if var state = publication.states[canonical] {
                state.id = id
                return .state(state)
            }
            return .unknown(canonical)
        }
    }
}

/// A context's unsaved states as its children see them.
struct Publication {
    /// The states of inserted and updated objects.
    var states: [ObjectID: ObjectState] = [:]
    /// The IDs of deleted objects.
    var deleted: Set<ObjectID> = []
    /// The permanent ID of each object saved under a temporary one.
    var formerIDs: [ObjectID: ObjectID] = [:]
}

/// A context held weakly, so that a parent does not keep its children alive.
struct WeakContext {
    weak var context: ObjectContext?
}
