#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system calls Tern's own durable file code makes (writes, flushes, renames), behind
/// a seam so that tests can make any one of them fail.
///
/// Code that writes store files calls ``current`` instead of the C library. It is a task-local
/// value: a test runs an operation inside `FileOperationsScope.$current.withValue(injector) { … }`
/// and only that task's calls go through the injector; everything else uses the system.
/// Each call returns what the C function returns and sets `errno` the same way.
package protocol FileOperations: Sendable {
    /// `write(2)`: writes up to `count` bytes; returns how many, or -1 with `errno` set.
    func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int
    /// `fsync(2)`: flushes a file or folder; returns 0, or -1 with `errno` set.
    func synchronize(_ descriptor: Int32) -> Int32
    /// `rename(2)`: replaces `destination` with `source` atomically; returns 0, or -1 with `errno` set.
    func rename(_ source: String, _ destination: String) -> Int32
}

/// The file operations the current task uses.
package enum FileOperationsScope {
    /// The system's calls, unless a test set another implementation for its task.
    @TaskLocal package static var current: any FileOperations = SystemFileOperations()
}

/// The C library's calls.
package struct SystemFileOperations: FileOperations {
    /// Creates the system's operations.
    package init() {}

    package func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }

    package func synchronize(_ descriptor: Int32) -> Int32 { fsync(descriptor) }

    package func rename(_ source: String, _ destination: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.rename(source, destination)
        #elseif canImport(Musl)
        Musl.rename(source, destination)
        #else
        Darwin.rename(source, destination)
        #endif
    }
}
