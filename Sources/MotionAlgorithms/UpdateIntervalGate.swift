/// Lets through at most one update per interval, on a fixed grid, like Core Motion's `…UpdateInterval`; never holds
/// back a sample of an input that is no faster than the interval, even when its timestamps jitter.
///
/// The first sample passes and starts a grid of cells `[t₀ + kI − w, t₀ + (k+1)I − w)`, k ≥ 1. The first sample in
/// each cell passes, and only that one, so a faster input is delivered at exactly one update per interval on
/// average, with no bursts. When the input is no more than twice as fast as the interval, the cells open early by
/// the tolerance `w = 0.9 · s`, where `s` is the longest of the last three spacings between consecutive samples,
/// each counted at most I (a spacing of 2 I or more is a gap, and says nothing of the input's period). An input at
/// the interval's own period, or slower, whose timestamps jitter by up to ±30 % of its period, then has every
/// sample inside its cell (three spacings add up to at least 2.4 periods, so `w ≥ 0.72 I`). A faster input, with
/// `s ≤ I/2`, gets no tolerance: each delivery is the first sample at or after its grid point, and a whole
/// multiple of its period is cut exactly. As `w` changes, the cells open a little earlier or later: at most
/// `k + 2` deliveries in any `k` intervals.
///
/// A sample that comes a whole interval or more after its cell opened (a gap in the input, or an input slower than
/// the interval) passes and starts a new grid there, so there is no burst of catch-up deliveries.
///
/// One case cannot be told apart: the second sample, coming less than `I / 1.9 ≈ 0.53 I` after the first, may be a
/// faster input or an early, jittered sample at the interval's period; it is held back, as for a faster input.
///
/// Pure and allocation-free; it reads no clock, the timestamps (seconds) are its input.
public struct UpdateIntervalGate: Hashable, Sendable {
    /// The interval in seconds; 0 lets every sample through.
    public let interval: Double
    /// The next grid point in seconds (a sample from `nextDue − tolerance` on passes), or `nil` before the first
    /// sample.
    @inlinable public var nextDue: Double? { origin.map { $0 + cells * interval } }

    /// The fraction of the longest recent input spacing (at most the interval) by which each cell opens early.
    @usableFromInline static var toleranceFraction: Double { 0.9 }

    /// The grid's first sample, in seconds; `nil` before the first sample.
    @usableFromInline var origin: Double?
    /// The next grid point's number: it is `cells` intervals after `origin`. The grid is kept as a count, not as
    /// a running sum, and samples are placed on it by their time since `origin` (exact between nearby times), so
    /// timestamps as large as Unix times (a 238 ns step) stay on their grid points however long the input runs.
    @usableFromInline var cells: Double = 0
    /// The previous sample's timestamp, passed or not.
    @usableFromInline var last = -Double.infinity
    /// The last three spacings of consecutive samples shorter than two intervals, each at most ``interval``.
    @usableFromInline var spacings = SIMD3<Double>(repeating: 0)

    /// Creates a gate.
    /// - Parameter interval: Seconds between deliveries; 0 passes everything.
    /// - Precondition: `interval ≥ 0` and finite.
    @inlinable
    public init(interval: Double) {
        precondition(interval >= 0 && interval.isFinite, "The update interval must be ≥ 0 seconds, got \(interval).")
        self.interval = interval
    }

    /// Returns whether a sample at `timestamp` (seconds) is delivered, and advances the grid if it is. A sample
    /// with a non-finite timestamp never passes.
    @inlinable
    public mutating func admit(at timestamp: Double) -> Bool {
        guard interval > 0 else { return true }
        guard timestamp.isFinite else { return false }
        guard let origin else { return start(at: timestamp) }
        let spacing = timestamp - last
        if spacing > 0 && spacing < 2 * interval {
            spacings = SIMD3(spacings.y, spacings.z, min(spacing, interval))
        }
        last = max(last, timestamp)
        // An input more than twice as fast needs no tolerance: its deliveries stay at or after their grid points.
        // Two steps of the timestamp's own resolution still (a sample meant for a grid point may be rounded just
        // before it), and a millionth of the interval (grid times such as 0.03·k are not exact in binary).
        let longest = spacings.max()
        let tolerance =
            longest > interval / 2
            ? Self.toleranceFraction * longest : max(interval * 1e-6, 2 * timestamp.ulp)
        let sinceOrigin = timestamp - origin
        let opens = cells * interval - tolerance
        guard sinceOrigin >= opens else { return false }
        if sinceOrigin - opens < interval {
            cells += 1
            return true
        }
        return start(at: timestamp)  // after its whole cell: a gap, or a slower input
    }

    @inlinable
    mutating func start(at timestamp: Double) -> Bool {
        origin = timestamp
        cells = 1
        last = timestamp
        return true
    }
}
