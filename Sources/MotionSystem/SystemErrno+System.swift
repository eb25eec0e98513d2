package import MotionCore

#if canImport(Glibc)
import Glibc
#endif

extension SystemErrno {
    /// The error for an `errno` value, with the C library's text for it (`strerror(3)`).
    package init(_ code: Int32) {
        self.init(rawValue: code, text: String(cString: strerror(code)))
    }

    /// The current `errno`.
    package static func current() -> SystemErrno { SystemErrno(errno) }

    // The values the package tells apart, by name.
    /// `EAGAIN` (also `EWOULDBLOCK` on Linux): a non-blocking call found nothing to do.
    package static let wouldBlock = SystemErrno(EAGAIN)
    /// `EINTR`: a signal interrupted the call.
    package static let interrupted = SystemErrno(EINTR)
    /// `ENOENT`: no such file or directory.
    package static let noSuchFile = SystemErrno(ENOENT)
    /// `EEXIST`: the file exists.
    package static let fileExists = SystemErrno(EEXIST)
    /// `EPIPE`: the reading end has closed.
    package static let brokenPipe = SystemErrno(EPIPE)
    /// `EBUSY`: the device or resource is in use.
    package static let busy = SystemErrno(EBUSY)
    /// `ELOOP`: a symbolic link where none is allowed (`O_NOFOLLOW`), or too many.
    package static let symbolicLinkLoop = SystemErrno(ELOOP)
    /// `ETIMEDOUT`: the operation timed out.
    package static let timedOut = SystemErrno(ETIMEDOUT)

    /// `EACCES` or `EPERM`: the process may not do it.
    package var isPermissionDenied: Bool { rawValue == EACCES || rawValue == EPERM }
    /// `ENOENT`, `ENODEV` or `ENXIO`: the file or device is not there (any more).
    package var isGone: Bool { rawValue == ENOENT || rawValue == ENODEV || rawValue == ENXIO }
    /// `EAGAIN` or `EWOULDBLOCK`.
    package var isWouldBlock: Bool { rawValue == EAGAIN || rawValue == EWOULDBLOCK }

    /// Matches by value (the text does not count): `case .wouldBlock:` in a `switch` over a `SystemErrno`.
    package static func ~= (pattern: SystemErrno, value: SystemErrno) -> Bool { pattern.rawValue == value.rawValue }

    /// Calls `body` until it does not fail with `EINTR`; a negative result becomes the current `errno`, read
    /// immediately after the call. The one place in the package where `EINTR` is retried.
    package static func retryingInterrupts<Value: FixedWidthInteger>(
        _ body: () -> Value
    ) -> Result<Value, SystemErrno> {
        while true {
            let result = body()
            if result >= 0 { return .success(result) }
            let error = SystemErrno.current()
            if case .interrupted = error { continue }
            return .failure(error)
        }
    }
}
