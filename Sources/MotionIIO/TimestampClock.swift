internal import CLibIIO
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// The clock an IIO device stamps scans with (`current_timestamp_clock`), and the conversion of its timestamps
/// to `CLOCK_BOOTTIME`, the clock of live samples (`Docs/Conventions.md`).
///
/// When the attribute cannot be set to `boottime` (read-only, or the kernel refuses), the device's timestamps
/// are moved to boottime by the offset between the two clocks, measured once when the capture starts. Both
/// clocks then advance together, except that a step of the wall clock (`realtime`, `tai`: `settimeofday`, an
/// NTP step) or a suspend (`monotonic` does not count it) after the start shifts later timestamps by that much,
/// and `monotonic_raw` (not slewed by NTP) drifts by the clock's frequency error, up to 0.5 ms/s.
struct TimestampClock: Hashable, Sendable {
    /// The attribute's value, such as `realtime`.
    let name: String
    /// The clock read to measure the offset (the precise clock for the `_coarse` variants, which keep the same
    /// time at tick resolution).
    let clock: clockid_t

    /// The clock of a `current_timestamp_clock` value; `nil` for one the kernel does not define.
    init?(name: String) {
        let clocks: [String: clockid_t] = [
            "realtime": CLOCK_REALTIME, "realtime_coarse": CLOCK_REALTIME, "monotonic": CLOCK_MONOTONIC,
            "monotonic_coarse": CLOCK_MONOTONIC, "monotonic_raw": CLOCK_MONOTONIC_RAW, "boottime": CLOCK_BOOTTIME,
            "tai": CLOCK_TAI,
        ]
        guard let clock = clocks[name] else { return nil }
        self.name = name
        self.clock = clock
    }

    /// Nanoseconds to add to this clock's timestamps to get `CLOCK_BOOTTIME`: boottime − clock, measured by
    /// `clockDifference` (error typically < 1 µs).
    func offsetToBoottime() -> Int64 { -clockDifference(clock, minus: CLOCK_BOOTTIME) }
}
