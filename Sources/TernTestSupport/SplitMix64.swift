/// A small deterministic random number generator (SplitMix64), so that random test inputs are
/// the same on every run.
///
/// ```swift
/// var generator = SplitMix64(state: 42)
/// let n = Int.random(in: 0..<10, using: &generator)
/// ```
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed at first.
    public var state: UInt64

    /// Creates a generator from a seed.
    ///
    /// - Parameter state: The seed.
    public init(state: UInt64) { self.state = state }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
