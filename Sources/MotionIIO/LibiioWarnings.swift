import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// libiio 0.x prints this on stderr each time it opens a buffer on a kernel without Analog Devices' out-of-tree
/// mmap interface, that is on every mainline kernel. It is harmless (libiio then reads with `read(2)`, as
/// swift-motion expects) but looks like a fault, and libiio offers no way to turn it off: it is removed here.
let libiioHighSpeedWarning = "WARNING: High-speed mode not enabled"

/// One redirection of stderr at a time: held by every code that moves descriptor 2 (tests included), since a
/// redirection restored out of order sends another's output to the wrong place.
let standardErrorRedirection = LockedState(())

/// Runs `body` with stderr (descriptor 2) sent to an unnamed temporary file, then writes what arrived to the real
/// stderr, less the lines equal to ``libiioHighSpeedWarning``. Nothing else is dropped: another thread's stderr
/// output during the call is written out just after it (a file never blocks or refuses a writer, as a full or
/// closed pipe would). When the file cannot be made, `body` runs with stderr as it is. Also returns whether the
/// warning came (libiio then reads the buffer with `read(2)`); `false` when stderr could not be redirected.
func withoutLibiioHighSpeedWarning<Result>(_ body: () -> Result) -> (result: Result, warned: Bool) {
    standardErrorRedirection.withLock { _ in withoutLibiioHighSpeedWarningHoldingLock(body) }
}

/// ``withoutLibiioHighSpeedWarning(_:)`` for a caller that holds `standardErrorRedirection`.
func withoutLibiioHighSpeedWarningHoldingLock<Result>(_ body: () -> Result) -> (result: Result, warned: Bool) {
    guard let file = tmpfile() else { return (body(), false) }
    defer { fclose(file) }
    let captured = fileno(file)
    guard case .success(let saved) = SystemErrno.retryingInterrupts({ fcntl(2, F_DUPFD_CLOEXEC, 3) }) else {
        return (body(), false)
    }
    _ = SystemErrno.retryingInterrupts { dup2(captured, 2) }
    let result = body()
    _ = SystemErrno.retryingInterrupts { dup2(saved, 2) }
    close(saved)

    var text: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    var offset: off_t = 0
    while case .success(let count) = chunk.withUnsafeMutableBytes({ raw in
        SystemErrno.retryingInterrupts { pread(captured, raw.baseAddress!, raw.count, offset) }
    }), count > 0 {
        text += chunk[0..<count]
        offset += off_t(count)
    }
    let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    let keptLines = lines.filter { !$0.elementsEqual(libiioHighSpeedWarning.utf8) }
    var remaining = Array(keptLines.joined(separator: [UInt8(ascii: "\n")]))[...]
    while !remaining.isEmpty,
        case .success(let written) = remaining.withUnsafeBytes({ raw in
            SystemErrno.retryingInterrupts { write(2, raw.baseAddress!, raw.count) }
        }), written > 0
    {
        remaining = remaining.dropFirst(written)
    }
    return (result, keptLines.count < lines.count)
}
