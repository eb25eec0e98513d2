/// Lets through at most one update per interval, on a fixed grid, like Core Motion's `…UpdateInterval`.
///
/// The first sample passes and starts a grid `t₀, t₀ + I, t₀ + 2I, …`; afterwards a sample passes when it is the
/// first at or after the next grid point (within a tolerance of 10⁻⁶·I for rounding). The average delivery rate
/// is therefore exactly 1/I when the input is faster, and every sample passes when the input is slower. After a
/// gap the grid skips ahead, so there is no burst of catch-up deliveries. Pure and allocation-free; it reads no
/// clock, the timestamps are its input.
public struct UpdateIntervalGate: Hashable, Sendable {
    /// The interval in seconds; 0 lets every sample through.
    public let interval: Double
    /// The next grid point in seconds, or `nil` before the first sample.
    @inlinable public var nextDue: Double? { due }

    @usableFromInline var due: Double?

    /// Creates a gate.
    /// - Parameter interval: Seconds between deliveries; 0 passes everything.
    /// - Precondition: `interval ≥ 0` and finite.
    @inlinable
    public init(interval: Double) {
        precondition(interval >= 0 && interval.isFinite, "The update interval must be ≥ 0 seconds, got \(interval).")
        self.interval = interval
    }

    /// Returns whether a sample at `timestamp` (seconds) is delivered, and advances the grid if it is.
    @inlinable
    public mutating func admit(at timestamp: Double) -> Bool {
        guard interval > 0 else { return true }
        guard var next = due else {
            due = timestamp + interval
            return true
        }
        guard timestamp >= next - interval * 1e-6 else { return false }
        next += interval
        if next <= timestamp {
            // Skip the grid points a gap has passed over.
            next += ((timestamp - next) / interval).rounded(.down) * interval + interval
        }
        due = next
        return true
    }
}
