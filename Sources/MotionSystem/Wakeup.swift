internal import CMotionSystem
package import MotionCore

#if canImport(Glibc)
import Glibc
#endif

/// An `eventfd` that wakes a thread blocked in `poll(2)`: any thread calls ``signal()``; the waiter polls
/// ``descriptor`` for `POLLIN` and calls ``clear()`` once woken. Signals that come before the wait are not lost
/// (the counter stays readable until cleared).
package final class Wakeup: Sendable {
    package let descriptor: Int32

    /// - Throws: `ioFailure` when the process has no descriptor left.
    package init() throws(MotionError) {
        descriptor = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard descriptor >= 0 else {
            throw MotionError(
                .ioFailure, "cannot create an eventfd (raise the open-files limit)", underlying: SystemErrno.current())
        }
    }

    deinit { _ = Glibc.close(descriptor) }

    /// Makes ``descriptor`` readable.
    package func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(descriptor, &one, 8)
    }

    /// Blocks until ``signal()`` is called (or was, since the last clear) or `milliseconds` pass, and clears.
    package func wait(milliseconds: Int32) {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        if poll(&waiting, 1, max(0, milliseconds)) > 0 { clear() }
    }

    /// Makes ``descriptor`` not readable until the next ``signal()``.
    package func clear() {
        var count: UInt64 = 0
        _ = Glibc.read(descriptor, &count, 8)
    }
}
