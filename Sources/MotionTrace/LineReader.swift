import MotionCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Splits a byte stream into lines, reading with `read(2)` into one reused buffer.
///
/// Memory stays at the buffer size (256 KiB by default) whatever the input size; the buffer grows only for a
/// line longer than itself, up to ``maximumLineLength``. A line ends at `\n`; a `\r` just before it is dropped,
/// so both LF and CRLF files read the same.
final class LineReader {
    /// Where the bytes come from.
    enum Source {
        /// A file descriptor, closed on deinit when `owned`.
        case descriptor(Int32, owned: Bool)
        /// Bytes in memory, served from `position` onwards.
        case memory([UInt8], position: Int)
    }

    /// One line, valid until the next call to ``nextLine()``. At least ``LineReader/padding`` readable bytes
    /// follow `end`, and the byte at `end` is `\r`, `\n` or 0.
    struct Line {
        /// The first byte.
        var start: UnsafePointer<UInt8>
        /// One past the last byte, line terminator excluded.
        var end: UnsafePointer<UInt8>
        /// `false` for a last line that ends without `\n`.
        var terminated: Bool

        /// The bytes of the line.
        var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: start, count: end - start) }
    }

    /// The longest line accepted, in bytes (1 MiB); longer lines are an error, which bounds memory use.
    static let maximumLineLength = 1 << 20

    /// The file name used in errors.
    let name: String
    /// The 1-based number of the line last returned (0 before the first).
    private(set) var lineNumber = 0
    /// The number of bytes read so far.
    private(set) var bytesRead = 0

    private var source: Source
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var start = 0  // first byte not yet returned
    private var end = 0  // one past the last byte read
    private var scanned = 0  // bytes before this index are known not to hold `\n`
    private var atEnd = false
    /// `true` when a read never waits for another process: memory, or a regular file (not a pipe, a terminal, a
    /// socket).
    let neverWaits: Bool

    init(source: Source, name: String, bufferSize: Int) {
        self.source = source
        self.name = name
        switch source {
        case .memory:
            neverWaits = true
        case .descriptor(let fd, _):
            var info = stat()
            neverWaits = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        }
        capacity = max(bufferSize, 1)
        buffer = LineReader.allocateBuffer(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
        if case .descriptor(let fd, owned: true) = source { SystemCall.close(fd) }
    }

    /// The next line, or `nil` at the end of the input.
    ///
    /// - Throws: `MotionError.Code.ioFailure` when reading fails, `MotionError.Code.malformedTrace` for a
    ///   line longer than ``maximumLineLength``.
    @inline(__always)
    func nextLine() throws(MotionError) -> Line? {
        while true {
            let from = max(start, scanned)
            if from < end, let found = memchr(buffer + from, Int32(UInt8(ascii: "\n")), end - from) {
                let newline = found.assumingMemoryBound(to: UInt8.self) - buffer
                let line = makeLine(upTo: newline, terminated: true)
                start = newline + 1
                scanned = start
                return line
            }
            scanned = end
            if atEnd {
                guard start < end else { return nil }
                let line = makeLine(upTo: end, terminated: false)
                start = end
                return line
            }
            try refill()
        }
    }

    /// Bytes after the buffer's capacity that may be read but hold no data: the number parser reads 16 bytes
    /// at a time and may look past the end of the last line.
    static let padding = DecimalParser.padding

    /// A zero-filled buffer of `capacity` bytes plus ``padding``.
    private static func allocateBuffer(capacity: Int) -> UnsafeMutablePointer<UInt8> {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + padding)
        buffer.initialize(repeating: 0, count: capacity + padding)
        return buffer
    }

    @inline(__always)
    private func makeLine(upTo lineEnd: Int, terminated: Bool) -> Line {
        lineNumber += 1
        var contentEnd = lineEnd
        if contentEnd > start, buffer[contentEnd - 1] == UInt8(ascii: "\r") { contentEnd -= 1 }
        return Line(
            start: UnsafePointer(buffer + start), end: UnsafePointer(buffer + contentEnd), terminated: terminated)
    }

    /// Moves the unfinished line to the front of the buffer, grows the buffer if that line fills it, and reads.
    @inline(never)
    private func refill() throws(MotionError) {
        if start > 0 {
            let pending = end - start
            if pending > 0 { memmove(buffer, buffer + start, pending) }
            end = pending
            scanned -= start
            start = 0
        }
        if end == capacity {
            guard capacity <= LineReader.maximumLineLength else {
                throw MotionError(
                    .malformedTrace,
                    "line is longer than \(LineReader.maximumLineLength) bytes; trace rows are at most a few hundred bytes",
                    at: MotionError.Location(file: name, line: lineNumber + 1))
            }
            let newCapacity = min(capacity * 2, LineReader.maximumLineLength + 1)
            let newBuffer = LineReader.allocateBuffer(capacity: newCapacity)
            newBuffer.update(from: buffer, count: end)
            buffer.deallocate()
            buffer = newBuffer
            capacity = newCapacity
        }
        let count = try read(into: buffer + end, count: capacity - end)
        if count == 0 {
            atEnd = true
        } else {
            end += count
            bytesRead += count
        }
        buffer[end] = 0  // the sentinel the number parser relies on after the last line (padding holds it)
    }

    private func read(into destination: UnsafeMutablePointer<UInt8>, count: Int) throws(MotionError) -> Int {
        switch source {
        case .descriptor(let fd, _):
            switch SystemCall.read(fd, into: destination, count: count) {
            case .success(let n): return n
            case .failure(let error): throw MotionError.system(error, "read", name)
            }
        case .memory(let bytes, let position):
            let n = min(count, bytes.count - position)
            guard n > 0 else { return 0 }
            bytes.withUnsafeBufferPointer { destination.update(from: $0.baseAddress! + position, count: n) }
            source = .memory(bytes, position: position + n)
            return n
        }
    }
}
