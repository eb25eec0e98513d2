import Motion
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Paces a replay like a live device, by `ReplaySchedule` (the rule `MotionManager`'s replays use) on
/// `CLOCK_MONOTONIC`: each sample waits for its absolute deadline (so waiting errors do not accumulate). A speed of
/// `nil` (`--speed max`) never waits.
struct Pacer {
    private var schedule: ReplaySchedule?
    /// `CLOCK_MONOTONIC` seconds when the first sample was due.
    private var anchor = 0.0

    init(speed: Double?) {
        schedule = speed.map(ReplaySchedule.init(factor:))
    }

    /// The `CLOCK_MONOTONIC` time in seconds at which a sample stamped `timestamp` is due, or `nil` when it is due
    /// now (the first sample, a late one, or no pacing).
    mutating func deadline(for timestamp: Double) -> Double? {
        guard schedule != nil else { return nil }
        let now = Pacer.monotonicNow()
        guard let offset = schedule!.offset(of: timestamp) else {
            anchor = now
            return nil
        }
        let due = anchor + offset
        return due > now ? due : nil
    }

    /// Sleeps until `deadline` (seconds on `CLOCK_MONOTONIC`); returns at once when SIGINT or SIGTERM arrives,
    /// whatever the gap or the speed (``Interruption/waitUntil(monotonic:)``).
    static func sleep(until deadline: Double) {
        Interruption.waitUntil(monotonic: deadline)
    }

    /// Seconds on `CLOCK_MONOTONIC`.
    static func monotonicNow() -> Double { Double(monotonicNanoseconds()) * 1e-9 }
}
