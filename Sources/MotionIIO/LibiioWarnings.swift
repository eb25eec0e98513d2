import MotionCore

#if canImport(Glibc)
import Glibc
#endif

/// libiio 0.x prints this on stderr each time it opens a buffer on a kernel without Analog Devices' out-of-tree
/// mmap interface, that is on every mainline kernel. It is harmless (libiio then reads with `read(2)`, as
/// swift-motion expects) but looks like a fault, and libiio offers no way to turn it off: it is removed here.
let libiioHighSpeedWarning = "WARNING: High-speed mode not enabled"

/// One redirection of stderr at a time.
private let standardErrorRedirection = LockedState(())

/// Runs `body` with stderr (descriptor 2) sent to a pipe, then writes what arrived to the real stderr, less the
/// lines equal to ``libiioHighSpeedWarning``. Nothing else is dropped: another thread's stderr output during the
/// call is written out just after it. When the pipe cannot be made, `body` runs with stderr as it is.
func withoutLibiioHighSpeedWarning<Result>(_ body: () -> Result) -> Result {
    standardErrorRedirection.withLock { _ in
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return body() }
        let (reader, writer) = (fds[0], fds[1])
        _ = fcntl(reader, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writer, F_SETFD, FD_CLOEXEC)
        defer { close(reader) }
        guard case .success(let saved) = SystemErrno.retryingInterrupts({ fcntl(2, F_DUPFD_CLOEXEC, 3) }) else {
            close(writer)
            return body()
        }
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        _ = SystemErrno.retryingInterrupts { dup2(writer, 2) }
        close(writer)
        let result = body()
        _ = SystemErrno.retryingInterrupts { dup2(saved, 2) }  // the pipe's last writer is gone: reads end
        close(saved)

        var captured: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case .success(let count) = chunk.withUnsafeMutableBytes({ raw in
            SystemErrno.retryingInterrupts { read(reader, raw.baseAddress!, raw.count) }
        }), count > 0 {
            captured += chunk[0..<count]
        }
        let kept = captured.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .filter { !$0.elementsEqual(libiioHighSpeedWarning.utf8) }
            .joined(separator: [UInt8(ascii: "\n")])
        var remaining = Array(kept)[...]
        while !remaining.isEmpty,
            case .success(let written) = remaining.withUnsafeBytes({ raw in
                SystemErrno.retryingInterrupts { write(2, raw.baseAddress!, raw.count) }
            }), written > 0
        {
            remaining = remaining.dropFirst(written)
        }
        return result
    }
}
