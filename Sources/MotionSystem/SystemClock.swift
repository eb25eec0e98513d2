#if canImport(Glibc)
import Glibc
#endif

/// Nanoseconds on `CLOCK_MONOTONIC`.
package func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// `seconds` as nanoseconds, for deadlines and periods: 0 for NaN or a negative value, at most 2⁶² (146 years), so
/// that neither the conversion nor `now + result` can trap, whatever a configuration, sysfs or a client gave.
package func nanoseconds(clamping seconds: Double) -> UInt64 {
    guard seconds > 0 else { return 0 }
    return seconds < 4.6e9 ? UInt64(seconds * 1e9) : 1 << 62
}

/// Seconds on `CLOCK_BOOTTIME`: the clock of live samples (see `Docs/Conventions.md`).
package func boottimeSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}
