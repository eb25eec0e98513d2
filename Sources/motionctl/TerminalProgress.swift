import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display on stderr for long work (`record`, `--evaluate`), shown only when stderr is a
/// terminal (`isatty(2)`): each update rewrites the line (carriage return, the text, erase to the end of the line),
/// at most 4 times a second, and ``finish()`` erases it, so nothing of it stays on the terminal. When stderr is not a
/// terminal (a file, a pipe, the tests) it writes nothing at all.
final class TerminalProgress {
    /// The shortest time between two updates, s (at most 4 updates a second).
    static let minimumInterval = 0.25

    private let isActive: Bool
    /// `CLOCK_MONOTONIC` seconds of the last update shown.
    private var lastUpdate = -Double.infinity
    /// `true` while a progress line is on the terminal.
    private var isShown = false

    /// A display on stderr when it is a terminal (`isTerminal` is for the tests of this type).
    init(isTerminal: Bool = isatty(2) == 1) {
        isActive = isTerminal
    }

    /// Shows `text` unless the last update was less than ``minimumInterval`` ago; the first update is always shown.
    /// `text` is only built when shown.
    func update(_ text: @autoclosure () -> String) {
        guard isActive else { return }
        let now = Double(monotonicNanoseconds()) * 1e-9
        guard now - lastUpdate >= Self.minimumInterval else { return }
        lastUpdate = now
        var line = text()
        let width = Self.terminalWidth()
        if line.count >= width { line = String(line.prefix(max(width - 2, 1))) + "…" }
        write("\r" + line + "\u{1B}[K")
        isShown = true
    }

    /// Erases the progress line (before other output on stderr, and at the end); the next update shows at once.
    func clear() {
        guard isActive, isShown else { return }
        write("\r\u{1B}[K")
        isShown = false
        lastUpdate = -.infinity
    }

    /// Prints a message line on stderr without mixing it into the progress line.
    func print(_ message: String) {
        clear()
        printToStandardError(message)
    }

    /// Erases the progress line for good.
    func finish() { clear() }

    private func write(_ text: String) {
        try? TextOutput.write(text, to: 2, name: "<stderr>")
    }

    /// The terminal's width in columns (80 when it cannot be read); a longer line would wrap, and `\r` would then
    /// rewrite only its last part.
    private static func terminalWidth() -> Int {
        var size = winsize()
        guard ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
