import MotionCore
import MotionSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few system calls the trace reader and writer make, each returning `Result<_, SystemErrno>`.
///
/// `EINTR` is retried in exactly one place, `SystemErrno.retryingInterrupts(_:)`; every call below goes through it.
enum SystemCall {
    /// Opens `path` for reading (`open(2)` with `O_RDONLY | O_CLOEXEC`).
    static func openForReading(_ path: String) -> Result<Int32, SystemErrno> {
        path.withCString { cPath in SystemErrno.retryingInterrupts { open(cPath, O_RDONLY | O_CLOEXEC) } }
    }

    /// Reads at most `count` bytes into `buffer` (`read(2)`); 0 means end of file. A non-blocking descriptor
    /// that has no data yet (`EAGAIN`) is waited for with `poll(2)`.
    static func read(_ fd: Int32, into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> Result<Int, SystemErrno> {
        while true {
            let result = SystemErrno.retryingInterrupts {
                #if canImport(Glibc)
                    Glibc.read(fd, buffer, count)
                #else
                    Darwin.read(fd, buffer, count)
                #endif
            }
            guard case .failure(let error) = result, error.isWouldBlock else {
                return result
            }
            if case .failure(let pollError) = waitUntilReady(fd, for: Int16(POLLIN)) { return .failure(pollError) }
        }
    }

    /// Waits until `fd` is ready for `events` (`poll(2)`, no timeout).
    private static func waitUntilReady(_ fd: Int32, for events: Int16) -> Result<Void, SystemErrno> {
        var request = pollfd(fd: fd, events: events, revents: 0)
        return SystemErrno.retryingInterrupts { poll(&request, 1, -1) }.map { _ in () }
    }

    /// Writes all `count` bytes of `buffer` (`write(2)`), continuing after partial writes and waiting with
    /// `poll(2)` when a non-blocking descriptor reports `EAGAIN`.
    static func writeAll(_ fd: Int32, _ buffer: UnsafePointer<UInt8>, count: Int) -> Result<Void, SystemErrno> {
        var done = 0
        while done < count {
            let result = SystemErrno.retryingInterrupts {
                #if canImport(Glibc)
                    Glibc.write(fd, buffer + done, count - done)
                #else
                    Darwin.write(fd, buffer + done, count - done)
                #endif
            }
            switch result {
            case .success(let written):
                done += written
            case .failure(let error) where error.isWouldBlock:
                if case .failure(let pollError) = waitUntilReady(fd, for: Int16(POLLOUT)) { return .failure(pollError) }
            case .failure(let error):
                return .failure(error)
            }
        }
        return .success(())
    }

    /// Closes a descriptor this module opened, ignoring errors (`close(2)`; never retried, as Linux frees the
    /// descriptor even when `close` reports `EINTR`).
    static func close(_ fd: Int32) {
        #if canImport(Glibc)
            _ = Glibc.close(fd)
        #else
            _ = Darwin.close(fd)
        #endif
    }

    /// Grows the kernel buffer of a pipe to at least `size` bytes (`fcntl(2)` `F_GETPIPE_SZ` and
    /// `F_SETPIPE_SZ`, Linux only); does nothing for other descriptors or when the system refuses.
    static func growPipeBuffer(_ fd: Int32, to size: Int32) {
        #if os(Linux)
            let getPipeSize: Int32 = 1032  // F_GETPIPE_SZ, which Glibc's module map does not export
            let setPipeSize: Int32 = 1031  // F_SETPIPE_SZ
            let current = fcntl(fd, getPipeSize)
            if current > 0 && current < size { _ = fcntl(fd, setPipeSize, size) }
        #endif
    }

    /// `true` when `fd` is an open descriptor (`fcntl(2)` `F_GETFL`).
    static func isOpen(_ fd: Int32) -> Bool {
        fd >= 0 && fcntl(fd, F_GETFL) != -1
    }
}

extension MotionError {
    /// The error for a failed `open`, `read` or `write` of `name`: `EACCES`/`EPERM` become
    /// `MotionError.Code.permissionDenied`, `ENOENT` becomes `MotionError.Code.noInput`, anything else
    /// (including `EPIPE`) `MotionError.Code.ioFailure`, with the `SystemErrno` as the underlying error.
    static func system(_ error: SystemErrno, _ action: String, _ name: String) -> MotionError {
        let location = MotionError.Location(file: name)
        switch error {
        case _ where error.isPermissionDenied:
            return MotionError(
                .permissionDenied, "cannot \(action) \(name): permission denied; check the file's mode and owner",
                at: location, underlying: error)
        case .noSuchFile:
            return MotionError(
                .noInput, "cannot \(action) \(name): no such file; check the path", at: location, underlying: error)
        case .brokenPipe:
            return MotionError(
                .ioFailure, "cannot \(action) \(name): the reading end of the pipe was closed", at: location,
                underlying: error)
        default:
            return MotionError(.ioFailure, "cannot \(action) \(name): \(error.text)", at: location, underlying: error)
        }
    }
}
