import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Direct reads and writes of sysfs attribute files, each returning `Result<_, SystemErrno>` with `EINTR`
/// retried in one place, so errors can name the exact file (libiio's attribute calls cannot).
enum Sysfs {
    /// The file's contents (at most `limit` bytes) without trailing white space (sysfs values end in a newline).
    static func read(_ path: String, limit: Int = 4096) -> Result<String, SystemErrno> {
        let opened = path.withCString { name in SystemErrno.retryingInterrupts { open(name, O_RDONLY | O_CLOEXEC) } }
        let fd: Int32
        switch opened {
        case .success(let value): fd = value
        case .failure(let error): return .failure(error)
        }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: limit)
        var length = 0
        while length < buffer.count {
            let result = buffer.withUnsafeMutableBytes { raw in
                SystemErrno.retryingInterrupts { Glibc.read(fd, raw.baseAddress! + length, raw.count - length) }
            }
            switch result {
            case .success(0): return .success(trimmed(buffer[0..<length]))
            case .success(let count): length += count
            case .failure(let error): return .failure(error)
            }
        }
        return .success(trimmed(buffer[0..<length]))
    }

    /// Writes `value` in one `write(2)`, as sysfs requires, without a newline (sysfs takes it with or without
    /// one): as libiio and iio-sensor-proxy write, so an attribute read back is the value alone. `O_TRUNC`, as a
    /// shell's `>` (sysfs ignores it): an emulated attribute (a umockdev file) then holds the value alone too.
    static func write(_ path: String, _ value: String) -> Result<Void, SystemErrno> {
        let opened = path.withCString { name in SystemErrno.retryingInterrupts { open(name, O_WRONLY | O_TRUNC | O_CLOEXEC) } }
        let fd: Int32
        switch opened {
        case .success(let value): fd = value
        case .failure(let error): return .failure(error)
        }
        defer { close(fd) }
        let bytes = Array(value.utf8)
        let result = bytes.withUnsafeBytes { raw in
            SystemErrno.retryingInterrupts { Glibc.write(fd, raw.baseAddress!, raw.count) }
        }
        switch result {
        case .success(let count) where count == bytes.count: return .success(())
        case .success: return .failure(SystemErrno(EIO))
        case .failure(let error): return .failure(error)
        }
    }

    /// `true` when the process may open `path` for reading (`mode` `R_OK`) or writing (`W_OK`).
    static func isAccessible(_ path: String, mode: Int32) -> Bool {
        access(path, mode) == 0 || errno != EACCES
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var end = bytes.endIndex
        while end > bytes.startIndex, [UInt8(ascii: "\n"), UInt8(ascii: " "), 0].contains(bytes[end - 1]) { end -= 1 }
        return String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
    }
}

extension MotionError {
    /// The error for a failed system call on a device file or attribute, with the fix for permission problems.
    static func deviceAccess(_ error: SystemErrno, _ verb: String, _ path: String, attribute: String? = nil)
        -> MotionError
    {
        let location = MotionError.Location(file: path, attribute: attribute)
        switch error {
        case _ where error.isPermissionDenied:
            return MotionError(
                .permissionDenied,
                "permission denied to \(verb) \(path); install Support/udev/70-swift-motion.rules and add your user "
                    + "to the 'iio' group (see Docs/Devices.md), or run as root",
                at: location, underlying: error)
        case _ where error.isGone:
            return MotionError(
                .disconnected, "cannot \(verb) \(path): the device is gone", at: location, underlying: error)
        default:
            return MotionError(.ioFailure, "cannot \(verb) \(path)", at: location, underlying: error)
        }
    }
}
