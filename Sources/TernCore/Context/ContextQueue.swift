import Dispatch

/// Which executor a context runs on.
///
/// ```swift
/// let viewContext = ObjectContext(coordinator: coordinator, queue: .main)
/// let background = ObjectContext(coordinator: coordinator)   // .private
/// ```
public struct ContextQueue: Hashable, Sendable {
    let isMain: Bool

    /// The main actor's executor: the context for user interface code.
    public static let main = ContextQueue(isMain: true)
    /// A serial executor of the context's own.
    public static let `private` = ContextQueue(isMain: false)
}

/// A serial executor over a private dispatch queue: one per private context.
final class ContextExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
