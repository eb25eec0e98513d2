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

    /// Calls `body` until it does not fail with `EINTR`; a negative result becomes the current `errno`, read
    /// immediately after the call. The one place in the package where `EINTR` is retried.
    package static func retryingInterrupts<Value: FixedWidthInteger>(
        _ body: () -> Value
    ) -> Result<Value, SystemErrno> {
        while true {
            let result = body()
            if result >= 0 { return .success(result) }
            let code = errno
            if code == EINTR { continue }
            return .failure(SystemErrno(code))
        }
    }
}
