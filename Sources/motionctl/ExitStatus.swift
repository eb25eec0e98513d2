import ArgumentParser
import MotionCore
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// The sysexits-style exit statuses `motionctl` documents in `Docs/CLI.md`.
enum ExitStatus {
    static let usage: Int32 = 64  // EX_USAGE
    static let dataError: Int32 = 65  // EX_DATAERR
    static let noInput: Int32 = 66  // EX_NOINPUT
    static let unavailable: Int32 = 69  // EX_UNAVAILABLE
    static let software: Int32 = 70  // EX_SOFTWARE
    static let cannotCreate: Int32 = 73  // EX_CANTCREAT
    static let ioError: Int32 = 74  // EX_IOERR
    static let permission: Int32 = 77  // EX_NOPERM

    /// The status for an error code.
    static func status(for code: MotionError.Code) -> Int32 {
        switch code {
        case .invalidArgument: usage
        case .malformedTrace, .truncatedTrace, .malformedState: dataError
        case .noInput: noInput
        case .ioFailure: ioError
        case .permissionDenied: permission
        case .deviceNotFound, .disconnected, .unsupported: unavailable
        case .outputExists: cannotCreate
        case .cancelled: 0
        default: software
        }
    }
}

extension MotionError {
    /// `true` for a write to a pipe whose reader has gone (`| head`): the command ends quietly.
    var isBrokenPipe: Bool {
        code == .ioFailure && (underlying as? SystemErrno)?.rawValue == EPIPE
    }
}

/// Prints `motionctl: error: …` on one line to stderr and returns the exit code to end with; a broken output
/// pipe ends quietly with status 0.
func report(_ error: MotionError) -> ExitCode {
    if error.isBrokenPipe { return .success }
    if error.code == .cancelled && Interruption.isRequested { return .success }  // SIGINT/SIGTERM: nothing to say
    printToStandardError("motionctl: error: \(error)")
    return ExitCode(ExitStatus.status(for: error.code))
}

/// Writes one line to stderr, unbuffered.
func printToStandardError(_ line: String) {
    try? TextOutput.write(line.hasSuffix("\n") ? line : line + "\n", to: 2, name: "<stderr>")
}

/// Prints a reader's skip report (lenient mode) to stderr as one warning, when it skipped any rows.
func warnAboutSkippedRows(_ reader: TraceReader) {
    guard reader.skipReport.skippedRows > 0 else { return }
    printToStandardError("motionctl: warning: \(reader.skipReport)")
}
