#if canImport(Glibc)
package import Glibc
#endif

/// Nanoseconds on `clock` (`clock_gettime(2)`): the one place the package reads a clock.
package func clockNanoseconds(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// `clock − reference`, in nanoseconds: `clock` read between two reads of `reference` and taken against their
/// midpoint, the closest of 5 tries. A thread preempted between two reads (milliseconds on a loaded machine) widens
/// that try's bracket, so another try is taken; the error is below half the narrowest bracket, typically < 1 µs.
/// `read` is `clockNanoseconds` except in tests.
package func clockDifference(
    _ clock: clockid_t, minus reference: clockid_t, read: (clockid_t) -> Int64 = clockNanoseconds
) -> Int64 {
    var best: (width: Int64, difference: Int64) = (.max, 0)
    for _ in 0..<5 {
        let before = read(reference)
        let value = read(clock)
        let after = read(reference)
        let width = after - before
        if width < best.width { best = (width, value - (before + width / 2)) }
    }
    return best.difference
}

/// Nanoseconds on `CLOCK_MONOTONIC`.
package func monotonicNanoseconds() -> UInt64 { UInt64(clockNanoseconds(CLOCK_MONOTONIC)) }

/// `seconds` as nanoseconds, for deadlines and periods: 0 for NaN or a negative value, at most 2⁶² (146 years), so
/// that neither the conversion nor `now + result` can trap, whatever a configuration, sysfs or a client gave.
package func nanoseconds(clamping seconds: Double) -> UInt64 {
    guard seconds > 0 else { return 0 }
    return seconds < 4.6e9 ? UInt64(seconds * 1e9) : 1 << 62
}

/// Seconds on `CLOCK_BOOTTIME`: the clock of live samples (see `Docs/Conventions.md`).
package func boottimeSeconds() -> Double {
    let nanoseconds = clockNanoseconds(CLOCK_BOOTTIME)
    return Double(nanoseconds / 1_000_000_000) + Double(nanoseconds % 1_000_000_000) * 1e-9
}
