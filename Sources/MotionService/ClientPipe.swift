import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// The pipes the service answers clients on (a stream, a history query): the client holds the read end, the
/// service writes the other without blocking, so that a client that stops reading never holds a service thread.
enum ClientPipe {
    /// A new pipe, both ends close-on-exec, the write end non-blocking.
    static func make() throws(SystemErrno) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemErrno.current() }
        // Close-on-exec set after the fact (Glibc's module lacks pipe2): the service never forks or executes.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        return (ends[0], ends[1])
    }

    enum SendResult {
        case all
        /// The pipe is full after taking this many bytes.
        case full(Int)
        case failed(String)
    }

    /// Writes `bytes` without blocking, as far as the pipe takes them. (`SIGPIPE` is ignored: `MotionDaemon`.)
    ///
    /// One `writev(2)` of one buffer per call: the same single system call as `write(2)`, which umockdev's preload
    /// (the tests' and the benchmarks' emulated devices) interposes on every descriptor with two `sigprocmask`
    /// calls and a lock. Those would be counted as the service's own cost (`Docs/Performance.md`, "motiond").
    static func send(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> SendResult {
        var offset = 0
        while offset < bytes.count {
            var piece = iovec(
                iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + offset), iov_len: bytes.count - offset)
            let written = Glibc.writev(descriptor, &piece, 1)
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN: return .full(offset)
            case EPIPE: return .failed("the client closed its end")
            default: return .failed("write failed: \(SystemErrno(code))")
            }
        }
        return .all
    }
}
