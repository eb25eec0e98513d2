package import MotionCore
import MotionSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file to write a trace to that never loses data: nothing is written at `path` until `commit()`.
///
/// The trace is written to a temporary file beside `path` (`.NAME.PID.partial`, same folder, so the final
/// step is a rename on one file system), created new (`O_CREAT | O_EXCL | O_NOFOLLOW`): an existing file or
/// symbolic link at that name is never written to nor followed, and the next name (`.NAME.PID.1.partial`, …) is
/// used instead. `commit()` puts it at `path`: with ``ExistingFile/refuse`` only if
/// nothing is there (`link(2)`, which never replaces), with ``ExistingFile/replace`` atomically over the old
/// file (`rename(2)`). `close()` before a commit removes the temporary file, so a failed recording leaves the
/// folder as it was. A process killed before its commit leaves the `.partial` file, never a damaged `path`.
/// After the commit the same descriptor goes on writing the file at `path`.
///
/// `-` is standard output: written directly, and `commit()` does nothing.
public final class TraceOutputFile {
    /// What to do when a file already exists at the path.
    public enum ExistingFile: Sendable {
        /// Fail with `MotionError.Code.outputExists`: the existing file is kept.
        case refuse
        /// Replace the existing file, atomically, at `TraceOutputFile.commit()`.
        case replace
    }

    /// The descriptor to write to (the temporary file until the commit).
    package let fileDescriptor: Int32
    /// The path as given, or `<stdout>`.
    package let name: String
    private let path: String
    private let partialPath: String?
    private let existing: ExistingFile
    private var isCommitted = false
    private var isClosed = false
    /// A failed commit said the recording is kept in the temporary file: `close()` leaves it there.
    private var keepsPartial = false

    /// Opens the temporary file for `path`, or standard output for `-`.
    ///
    /// - Throws: `MotionError.Code.outputExists` when `existing` is ``ExistingFile/refuse`` and `path` exists
    ///   (checked again at the commit); `MotionError.Code.permissionDenied` or `MotionError.Code.ioFailure`
    ///   when the folder cannot take the file.
    package init(path: String, existing: ExistingFile) throws(MotionError) {
        self.path = path
        self.existing = existing
        if path == "-" {
            fileDescriptor = 1
            name = "<stdout>"
            partialPath = nil
            return
        }
        name = path
        if existing == .refuse { try Self.checkAbsent(path) }
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? ""
        let base = slash.map { String(path[path.index(after: $0)...]) } ?? path
        // A new file, never an existing one (`O_EXCL`; with `O_NOFOLLOW`, not through a symbolic link planted at the
        // name either): a file already there, a process's leftover with the same id or anything put there on
        // purpose, is left as it is, and the next name is tried.
        var result: Result<Int32, SystemErrno> = .failure(SystemErrno(EEXIST))
        var partial = ""
        for attempt in 0..<Self.partialNameAttempts {
            partial = "\(folder).\(base).\(getpid())\(attempt == 0 ? "" : ".\(attempt)").partial"
            result = partial.withCString { cPath in
                SystemErrno.retryingInterrupts {
                    open(cPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                }
            }
            guard case .failure(.fileExists) = result else { break }
        }
        switch result {
        case .success(let fd):
            fileDescriptor = fd
            partialPath = partial
        case .failure(let error):
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot create a file in the output's folder; check that the folder exists and is writable",
                at: .init(file: path), underlying: error)
        }
    }

    /// How many temporary names are tried (`.NAME.PID.partial`, then `.NAME.PID.1.partial`, …) before giving up.
    static let partialNameAttempts = 16

    /// Fails with `MotionError.Code.outputExists` when something exists at `path` (`-` never does).
    package static func checkAbsent(_ path: String) throws(MotionError) {
        guard path != "-" else { return }
        var status = stat()
        if lstat(path, &status) == 0 {
            throw MotionError(
                .outputExists, "the file already exists; choose another file, or pass --overwrite to replace it",
                at: .init(file: path))
        }
    }

    /// Puts the file written so far at the path (once; later calls do nothing). Call it when the output holds
    /// data worth keeping: before, a failure leaves any old file as it was. What was written is flushed to the
    /// disk first, and the folder after, so a crash at any moment leaves the old file or the new one, whole.
    package func commit() throws(MotionError) {
        guard !isCommitted, let partialPath else { return }
        if case .failure(let error) = SystemErrno.retryingInterrupts({ fsync(fileDescriptor) }) {
            keepsPartial = true
            throw MotionError(
                .ioFailure, "cannot flush \(partialPath) to the disk: \(error.text); it is kept there",
                at: .init(file: path), underlying: error)
        }
        let result: Int32
        switch existing {
        case .replace:
            result = rename(partialPath, path)
        case .refuse:
            result = link(partialPath, path)
            if result == 0 { unlink(partialPath) }
        }
        guard result == 0 else {
            let code = errno
            keepsPartial = true  // the error says where the recording is
            if code == EEXIST {
                throw MotionError(
                    .outputExists,
                    "a file appeared at this path while recording; the recording is kept in \(partialPath)",
                    at: .init(file: path))
            }
            throw MotionError(
                code == EACCES || code == EPERM ? .permissionDenied : .ioFailure,
                "cannot move the recording to \(path); it is kept in \(partialPath)", at: .init(file: path),
                underlying: SystemErrno(code))
        }
        isCommitted = true
        // The new name reaches the disk with the folder's entry.
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[...$0]) } ?? "."
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            SystemCall.close(directory)
        }
    }

    /// Closes the file; before a `commit()`, also removes the temporary file, unless a failed commit said the
    /// recording is kept there.
    package func close() {
        guard !isClosed, partialPath != nil else { return }
        isClosed = true
        SystemCall.close(fileDescriptor)
        if !isCommitted && !keepsPartial, let partialPath { unlink(partialPath) }
    }

    deinit { close() }
}
