import Foundation

/// Measures wall-clock and process CPU time of the parts of a scenario that count.
///
/// CPU time (every thread of the process) is reported beside wall time because the machine
/// may be shared: other processes stretch wall time, not CPU time.
struct Stopwatch {
    private(set) var wall = Duration.zero
    private(set) var cpu = Duration.zero
    private var wallStart: ContinuousClock.Instant?
    private var cpuStart = Duration.zero

    /// Starts timing.
    mutating func start() {
        wallStart = ContinuousClock.now
        cpuStart = Self.processCPUTime()
    }

    /// Stops timing and adds the time since ``start()``.
    mutating func stop() {
        guard let began = wallStart else { return }
        wall += ContinuousClock.now - began
        cpu += Self.processCPUTime() - cpuStart
        wallStart = nil
    }

    /// The figures with a checksum.
    func timing(checksum: Int64) -> Timing {
        Timing(seconds: wall.seconds, cpuSeconds: cpu.seconds, checksum: checksum)
    }

    private static func processCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
