package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A durable outbox of messages (a topic and bytes each), kept in order until the receiver has acknowledged them:
/// a publisher's spool (`motionctl publish --spool DIR`, `Docs/History.md`, "Spool").
///
/// The messages are frames of kind `message` in segment files, the store's format (`StoreFormat`: each frame
/// checked by its CRC-32C). A message is written (one `write`) before it may be sent, and the position of the
/// first message not yet acknowledged is kept in `DIR/cursor` (replaced atomically), so a process killed at any
/// moment, started again on the spool, sends everything from that position: nothing is lost, and what was sent
/// but not known to be acknowledged goes again (receivers drop duplicates by their sequence numbers). Segments
/// wholly acknowledged are removed.
///
/// Bounded: while the messages not yet acknowledged take more than `maximumBytes`, ``append(topic:bytes:)`` refuses
/// new ones (and counts them), so a long outage costs the newest data, never memory or the disk beyond the bound.
/// One process uses a spool at a time (the store's `flock`). Thread-safe: a lock guards the state.
package final class MessageSpool: Sendable {
    /// Where a message starts: its segment's sequence number and its offset in bytes.
    package struct Position: Hashable, Comparable, Sendable, CustomStringConvertible {
        package var segment: Int
        package var offset: Int

        package static func < (a: Position, b: Position) -> Bool {
            (a.segment, a.offset) < (b.segment, b.offset)
        }

        package var description: String { "\(segment) \(offset)" }
    }

    /// A message read from the spool.
    package struct Message: Sendable {
        package var position: Position
        /// The position after it: the next message's.
        package var next: Position
        package var topic: String
        package var bytes: [UInt8]
    }

    package let directory: String
    package let maximumBytes: Int
    package let segmentBytes: Int
    private let state: LockedState<State>

    private struct State {
        var lock: Int32
        /// `DIR/cursor`, open for the spool's life.
        var cursorFile: Int32
        var segment: Int32 = -1
        var segmentSequence = 0
        /// The size of the newest segment (being written, or left by the last run): where the next message goes.
        var segmentSize = 0
        /// The first message not acknowledged.
        var cursor: Position
        /// Bytes of the segments from the cursor's on, about what waits.
        var pendingBytes = 0
        var refused = 0
        var lastCursorWrite: UInt64 = 0
        var cursorDirty = false
        var whenAppended: (@Sendable () -> Void)?
    }

    /// Opens (or creates) the spool in `directory`: at most `maximumBytes` (default 1 GiB) waiting, in segments of
    /// `segmentBytes` (default 4 MiB).
    /// - Throws: `MotionError` naming the directory (`outputExists` when another process uses it).
    package init(directory: String, maximumBytes: Int = 1 << 30, segmentBytes: Int = 4 << 20) throws(MotionError) {
        guard segmentBytes >= 4096, segmentBytes <= MotionStore.Configuration.largestSegment, maximumBytes >= 2 * segmentBytes
        else {
            throw MotionError(
                .invalidArgument,
                "the spool's size limit (\(maximumBytes) bytes) must hold two segments of \(segmentBytes) (4096 to "
                    + "\(MotionStore.Configuration.largestSegment) bytes)", at: .init(file: directory))
        }
        self.directory = directory
        self.maximumBytes = maximumBytes
        self.segmentBytes = segmentBytes
        let lock = try StoreDirectory.openForWriting(directory)
        let segments: [StoreDirectory.Segment]
        do throws(MotionError) {
            segments = try StoreDirectory.segments(in: directory)
        } catch {
            _ = Glibc.close(lock)
            throw error
        }
        let cursorFile: Int32
        do throws(MotionError) {
            cursorFile = try Self.openCursor(directory)
        } catch {
            _ = Glibc.close(lock)
            throw error
        }
        let first = Position(segment: segments.first?.sequence ?? 1, offset: 0)
        var cursor = Self.readCursor(cursorFile) ?? first
        if cursor < first { cursor = first }  // its segment was removed: everything before was acknowledged
        var state = State(lock: lock, cursorFile: cursorFile, cursor: cursor)
        state.segmentSequence = (segments.last?.sequence ?? 0)
        state.segmentSize = segments.last?.size ?? 0  // not written again: appends begin a new segment
        state.pendingBytes = segments.filter { $0.sequence >= cursor.segment }.reduce(0) { $0 + $1.size }
        self.state = LockedState(state)
    }

    deinit {
        state.withLock { state in
            if state.cursorDirty { Self.writeCursor(state.cursor, to: state.cursorFile) }
            if state.segment >= 0 { _ = Glibc.close(state.segment) }
            _ = Glibc.close(state.cursorFile)
            _ = Glibc.close(state.lock)
        }
    }

    /// Messages refused because the spool was full.
    package var refusedCount: Int { state.withLock { $0.refused } }

    /// Bytes of the segments holding messages not yet acknowledged.
    package var pendingBytes: Int { state.withLock { $0.pendingBytes } }

    /// The first message not acknowledged.
    package var cursor: Position { state.withLock { $0.cursor } }

    /// Calls `body` (on the appending thread, outside the spool's lock) after each message written: how a publisher
    /// learns of new messages without polling.
    package func whenAppended(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.whenAppended = body }
    }

    /// Writes a message at the spool's end (always to a new segment after a restart).
    /// - Returns: `false` when the spool is full (the message is counted in ``refusedCount``).
    /// - Throws: `MotionError` when the write fails (a full disk): the message is not in the spool.
    @discardableResult
    package func append(topic: String, bytes: [UInt8]) throws(MotionError) -> Bool {
        precondition(!topic.isEmpty && topic.utf8.count <= Int(UInt16.max), "A topic of 1 to 65535 bytes.")
        var payload: [UInt8] = [StoreFormat.Kind.message.rawValue]
        payload.appendLittleEndian(UInt16(topic.utf8.count))
        payload += Array(topic.utf8)
        payload += bytes
        let frame = StoreFormat.frame(payload)
        let (kept, observer) = try state.withLock { state throws(MotionError) -> (Bool, (@Sendable () -> Void)?) in
            guard state.pendingBytes + frame.count <= maximumBytes else {
                state.refused += 1
                return (false, nil)
            }
            if state.segment >= 0 && state.segmentSize + frame.count > segmentBytes {
                _ = fdatasync(state.segment)
                _ = Glibc.close(state.segment)
                state.segment = -1
            }
            if state.segment < 0 { try startSegment(&state) }
            if let failure = frame.withUnsafeBytes({ [segment = state.segment] in WriterState.writeAll($0, to: segment) }) {
                throw MotionError(
                    .ioFailure, "cannot write to the spool: \(failure.text); free space on its disk",
                    at: .init(file: directory), underlying: failure)
            }
            state.segmentSize += frame.count
            state.pendingBytes += frame.count
            return (true, state.whenAppended)
        }
        if kept { observer?() }
        return kept
    }

    private func startSegment(_ state: inout State) throws(MotionError) {
        let sequence = state.segmentSequence + 1
        let path = directory + "/" + StoreDirectory.segmentName(sequence)
        let opened = path.withCString { cPath in
            SystemErrno.retryingInterrupts { open(cPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        }
        switch opened {
        case .success(let fd): state.segment = fd
        case .failure(let error):
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot create a segment in the spool: \(error.text)", at: .init(file: path), underlying: error)
        }
        state.segmentSequence = sequence
        state.segmentSize = 0
        StoreDirectory.syncDirectory(directory)
    }

    /// Up to `limit` messages from `position` (the cursor when `nil`) on, in order. Damaged frames are skipped
    /// (and counted in `skipped`); a frame that the file's end cuts short in the newest segment is a write in
    /// progress, read at a later call.
    package func messages(from position: Position? = nil, limit: Int, skipped: inout Int) throws(MotionError) -> [Message] {
        var position = position ?? cursor
        let (newest, end) = state.withLock { ($0.segmentSequence, $0.segmentSize) }
        // At the end already (a sender woken with nothing new): no file to read.
        if position.segment > newest || (position.segment == newest && position.offset >= end) { return [] }
        var messages: [Message] = []
        while messages.count < limit && position.segment <= newest {
            let path = directory + "/" + StoreDirectory.segmentName(position.segment)
            let bytes: [UInt8]
            switch StoreDirectory.read(path, from: position.offset) {
            case .success(let read): bytes = read
            case .failure(.gone):
                position = Position(segment: position.segment + 1, offset: 0)
                continue
            case .failure(.notRegular), .failure(.tooLarge):
                // Planted, not written by the spool: its messages are lost to damage, the rest go on.
                skipped += 1
                position = Position(segment: position.segment + 1, offset: 0)
                continue
            case .failure(.system(let error)):
                throw MotionError(
                    .ioFailure, "cannot read the spool: \(error.text)", at: .init(file: path), underlying: error)
            }
            var stop = false
            var scanned = 0  // how far the scan went in `bytes`
            bytes.withUnsafeBytes { buffer in
                for item in FrameScan.items(buffer, maximumFrames: limit - messages.count + 1) {
                    if messages.count >= limit {
                        stop = true
                        return
                    }
                    switch item {
                    case .frame(.message, let payload):
                        scanned = payload.upperBound
                        guard case .success(let message) = FrameScan.message(.init(rebasing: buffer[payload])) else {
                            skipped += 1
                            continue
                        }
                        let start = Position(
                            segment: position.segment,
                            offset: position.offset + payload.lowerBound - StoreFormat.frameHeaderSize)
                        let next = Position(segment: position.segment, offset: position.offset + payload.upperBound)
                        messages.append(Message(position: start, next: next, topic: message.topic, bytes: message.bytes))
                    case .frame(_, let payload):
                        scanned = payload.upperBound
                        skipped += 1
                    case .damage(let range, let reason):
                        if position.segment == newest && range.upperBound == buffer.count && reason == FrameScan.cutShort {
                            stop = true  // a write in progress: read at a later call
                            return
                        }
                        scanned = range.upperBound
                        skipped += 1
                    }
                }
            }
            if stop { break }
            if scanned < bytes.count {
                // The scan stopped at its frame limit on frames that were not messages: go on from there.
                position = Position(segment: position.segment, offset: position.offset + scanned)
                continue
            }
            if position.segment == newest { break }
            position = Position(segment: position.segment + 1, offset: 0)
        }
        return messages
    }

    /// Every message before `position` has been acknowledged: the cursor moves there (kept in `DIR/cursor` at
    /// most every `every` seconds, and at ``Glibc.close()``), and segments wholly before it are removed.
    package func acknowledge(upTo position: Position, every: Double = 0.2) {
        state.withLock { state in
            guard position > state.cursor else { return }
            let removedBefore = state.cursor.segment
            state.cursor = position
            state.cursorDirty = true
            let now = monotonicNanoseconds()
            if now - state.lastCursorWrite >= nanoseconds(clamping: every) {
                Self.writeCursor(position, to: state.cursorFile)
                state.lastCursorWrite = now
                state.cursorDirty = false
            }
            guard position.segment > removedBefore else { return }
            for sequence in removedBefore..<position.segment {
                let path = directory + "/" + StoreDirectory.segmentName(sequence)
                var status = stat()
                if lstat(path, &status) == 0 {
                    state.pendingBytes -= Int(status.st_size)
                    _ = unlink(path)
                }
            }
            state.pendingBytes = max(0, state.pendingBytes)
        }
    }

    /// Whether every message written has been acknowledged: the cursor is at the spool's end (the end of the newest
    /// segment). A spool whose last frames are damaged never is; a sender that finds no message to send is done.
    package var isDrained: Bool {
        state.withLock { state in
            state.cursor.segment > state.segmentSequence
                || (state.cursor.segment == state.segmentSequence && state.cursor.offset >= state.segmentSize)
        }
    }

    /// Writes the cursor and flushes the segment being written.
    package func close() {
        state.withLock { state in
            if state.cursorDirty { Self.writeCursor(state.cursor, to: state.cursorFile) }
            state.cursorDirty = false
            if state.segment >= 0 {
                _ = fdatasync(state.segment)
                _ = Glibc.close(state.segment)
                state.segment = -1
            }
        }
    }

    // MARK: Files

    /// The cursor file's record: `SEGMENT OFFSET CRC` (the CRC-32C of `SEGMENT OFFSET` in decimal), padded with spaces
    /// to a fixed size and rewritten in place, so that writing it creates no file (creating one per acknowledgement
    /// cost a publisher more than its sending, in ext4's inode allocation).
    static let cursorRecordSize = 48

    /// Opens `DIR/cursor` for reading and writing, creating it; a planted link or anything but a regular file there is
    /// removed and replaced.
    static func openCursor(_ directory: String) throws(MotionError) -> Int32 {
        let path = directory + "/cursor"
        for _ in 0..<2 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                var status = stat()
                if fstat(descriptor, &status) == 0 && status.st_mode & S_IFMT == S_IFREG { return descriptor }
                _ = Glibc.close(descriptor)
            }
            _ = unlink(path)
        }
        let error = SystemErrno.current()
        throw MotionError(
            .ioFailure, "cannot open the spool's cursor file: \(error.text); remove it", at: .init(file: path),
            underlying: error)
    }

    /// The cursor file's position, or `nil` when it is empty or not a record this spool wrote (a bad checksum: a
    /// write a power loss cut, or a planted file). `nil` only costs messages sent again, never a message skipped.
    static func readCursor(_ descriptor: Int32) -> Position? {
        var bytes = [UInt8](repeating: 0, count: cursorRecordSize + 1)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0, count <= cursorRecordSize else { return nil }
        let parts = String(decoding: bytes[..<count], as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        // Two numbers alone: the cursor of a spool written before the checksum (replaced atomically then).
        guard parts.count == 2 || parts.count == 3, let segment = Int(parts[0]), let offset = Int(parts[1]),
            segment >= 1, offset >= 0, segment < 1_000_000_000_000
        else { return nil }
        if parts.count == 3 {
            guard UInt32(parts[2]) == CRC32C.checksum("\(segment) \(offset)".utf8) else { return nil }
        }
        return Position(segment: segment, offset: offset)
    }

    /// Rewrites the cursor record in place (one `pwrite` of ``cursorRecordSize`` bytes). Not flushed to the disk: a
    /// cursor that a power loss takes back or damages only sends acknowledged messages again, which receivers drop by
    /// their sequence numbers.
    static func writeCursor(_ position: Position, to descriptor: Int32) {
        let numbers = "\(position.segment) \(position.offset)"
        var record = Array("\(numbers) \(CRC32C.checksum(numbers.utf8))".utf8)
        record += [UInt8](repeating: UInt8(ascii: " "), count: max(0, cursorRecordSize - 1 - record.count))
        record.append(UInt8(ascii: "\n"))
        _ = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }
}
