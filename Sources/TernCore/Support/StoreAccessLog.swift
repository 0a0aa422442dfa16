import Synchronization

/// Counts, per file, how often the layers above a store detect its type and open a database
/// connection to it, while a test has counting on: the evidence that loading a container opens
/// a store as few times as it says.
///
/// Off by default, when it records nothing and costs one lock per event (events are store opens,
/// not rows).
package enum StoreAccessLog {
    /// What is counted.
    package enum Event: String, Sendable {
        /// A store file's first bytes were read to tell its type.
        case typeDetected
        /// A database connection was opened to the file.
        case connectionOpened
    }

    /// The counts by path and event; nil while counting is off.
    private static let counts = Mutex<[String: [Event: Int]]?>(nil)

    /// Starts counting, from zero.
    package static func start() { counts.withLock { $0 = [:] } }

    /// Stops counting and returns what was counted, by path.
    package static func stop() -> [String: [Event: Int]] {
        counts.withLock { counts in
            defer { counts = nil }
            return counts ?? [:]
        }
    }

    /// Counts one event for a file, when counting is on.
    ///
    /// - Parameters:
    ///   - event: What happened.
    ///   - path: The file's path.
    package static func record(_ event: Event, path: String) {
        counts.withLock { counts in counts?[path, default: [:]][event, default: 0] += 1 }
    }
}
