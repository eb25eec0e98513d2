import ArgumentParser
import MotionCore
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `--output FILE` of the commands that write a trace file (`simulate`, `record`): checked before any work, its
/// format taken from its extension unless `--format` says (`Docs/CLI.md`).
enum OutputPath {
    /// The format of `path`: `--format` when given, else the extension's (`.csv`, `.jsonl`), else CSV.
    ///
    /// - Throws: A `ValidationError` naming both when `--format` contradicts the extension.
    static func format(of path: String, given: TraceFormat?) throws -> TraceFormat {
        let implied = TraceFormat.allCases.first { path != "-" && path.lowercased().hasSuffix(".\($0.rawValue)") }
        if let given, let implied, given != implied {
            throw ValidationError(
                "--format \(given.rawValue) contradicts the extension of --output \(path) (\(implied.rawValue)); "
                    + "drop --format, or name the file .\(given.rawValue).")
        }
        return given ?? implied ?? .csv
    }

    /// Checks that `path` can be written before anything is computed or waited for: `-` (stdout) takes no
    /// `--overwrite`; a directory, a missing folder, a folder this user cannot write and (without `overwrite`) an
    /// existing file each fail at once, naming the path and the fix.
    static func check(_ path: String, overwrite: Bool) throws(MotionError) {
        if path == "-" {
            if overwrite {
                throw MotionError(.invalidArgument, "--overwrite applies to a file; --output - is stdout, which is never replaced")
            }
            return
        }
        guard !path.isEmpty else { throw MotionError(.invalidArgument, "--output needs a file name, or - for stdout") }
        var status = stat()
        if path.hasSuffix("/") || (stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR) {
            let example = (path.hasSuffix("/") ? path : path + "/") + "trace.csv"
            throw MotionError(
                .invalidArgument, "--output names a directory; give a file name, such as \(example)",
                at: .init(file: path))
        }
        if !overwrite { try TraceOutputFile.checkAbsent(path) }
        let folder = path.lastIndex(of: "/").map { String(path[...$0]) } ?? "./"
        guard stat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw MotionError(
                .ioFailure, "the folder \(folder) does not exist (or is not a folder); create it first",
                at: .init(file: path))
        }
        // The output is written to a new file beside `path` and moved there: the folder must take new files.
        if access(folder, W_OK | X_OK) != 0 {
            let error = systemError(errno)
            throw MotionError(
                error.rawValue == EROFS ? .ioFailure : .permissionDenied,
                "cannot create files in the folder \(folder); choose a folder you can write", at: .init(file: path),
                underlying: error)
        }
    }

    /// Commits `file`; when that fails the output is discarded (``TraceOutputFile/close()`` removes the temporary
    /// file), and the error says so instead of naming a temporary file that is gone.
    static func commit(_ file: TraceOutputFile, path: String) throws(MotionError) {
        do {
            try file.commit()
        } catch {
            let reason =
                error.code == .outputExists
                ? "a file appeared there meanwhile" : (error.underlying.map { "\($0)" } ?? error.message)
            throw MotionError(
                error.code, "cannot put the output at this path: \(reason); nothing was written",
                at: .init(file: path))
        }
    }
}

/// The error for an `errno` value, with the C library's text (`strerror(3)`), through `SystemErrno`'s public
/// initialiser (the package one moves between modules).
func systemError(_ code: Int32) -> SystemErrno {
    SystemErrno(rawValue: code, text: String(cString: strerror(code)))
}
