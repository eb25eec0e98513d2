#if canImport(Glibc)
package import Glibc
#endif

/// Nanoseconds on `clock` (`clock_gettime(2)`): the one place the package reads a clock.
package func clockNanoseconds(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
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
