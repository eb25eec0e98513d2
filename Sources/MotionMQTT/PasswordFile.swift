package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A password kept in a file, never on a command line (where `ps` shows it).
package enum PasswordFile {
    /// The first line of the file at `path` (at most 4 KiB; not through a symbolic link).
    package static func read(_ path: String) throws(MotionError) -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let error = SystemErrno.current()
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .noInput, "cannot read the password file: \(error.text)",
                at: .init(file: path), underlying: error)
        }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 4097)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0, count <= 4096 else {
            throw MotionError(.invalidArgument, "the password file must be a file of at most 4096 bytes", at: .init(file: path))
        }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }
}
