internal import UMockdevPreload

#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal pair in raw mode (no newline translation, no echo), for tests of what a program does when its
/// output is a terminal (`isatty`).
public enum PseudoTerminal {
    /// Opens a pair: a program given `terminal` sees a terminal `columns` wide, and what it writes there is read from
    /// `controller`. The caller closes both.
    ///
    /// - Throws: ``TestbedError`` when `openpty(3)` fails.
    public static func open(columns: UInt16 = 200) throws(TestbedError) -> (controller: Int32, terminal: Int32) {
        var controller: Int32 = -1
        var terminal: Int32 = -1
        guard openpty(&controller, &terminal, nil, nil, nil) == 0 else {
            throw TestbedError("openpty failed: errno \(errno)")
        }
        var settings = termios()
        tcgetattr(terminal, &settings)
        cfmakeraw(&settings)
        tcsetattr(terminal, TCSANOW, &settings)
        var size = winsize(ws_row: 50, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(terminal, UInt(TIOCSWINSZ), &size)
        return (controller, terminal)
    }
}
