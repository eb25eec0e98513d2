public import MotionCore
public import MotionTrace
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Motion kept on disk: samples appended as they come, in a directory that any program can query
/// (``StoreReader``), crash-safe and bounded. `Docs/History.md` gives the format and the guarantees.
///
/// The store is a segmented append-only log: files of at most ``Configuration/segmentBytes`` each, holding frames
/// of about a second of samples, each frame checked by a CRC-32C. Samples wait in memory until a frame is due
/// (``Configuration/flushInterval``, 1 s by default), then go to the file in one `write`: a process killed with
/// SIGKILL loses at most that second (what was written is in the kernel's page cache), and at most
/// ``Configuration/syncInterval`` more when the machine loses power (the file is flushed to the disk at that
/// interval). A frame cut short or damaged is reported by readers and skipped; the frames after it stay readable.
///
/// Retention: whole segments go, oldest first, once they are older than ``Configuration/maximumAge`` (their last
/// write) or while all segments together could exceed ``Configuration/maximumBytes`` (the one being written
/// counted whole): the store stays within that size, or a frame more when a single frame is larger than a
/// segment.
///
/// When a write fails (a full disk, say), recording pauses: `append(_:)` returns ``Event/paused(_:)`` once,
/// samples are kept in memory up to ``Configuration/maximumPendingSamples`` and later ones counted and dropped,
/// and the write is tried again every ``Configuration/retryInterval``; ``Event/resumed(droppedSamples:)`` says
/// when it works again. Nothing else stops.
///
/// One process writes a store at a time (an exclusive `flock` on `DIR/lock`); any number may read it meanwhile.
/// Thread-safe: a lock guards the state, and no call blocks on anything but the store's own files.
public final class MotionStore: Sendable {
    /// How a store keeps and bounds its data.
    public struct Configuration: Hashable, Sendable {
        /// How long segments are kept after their last write, in seconds. Default 259 200 s (3 days, as Core
        /// Motion's `CMSensorRecorder` keeps its data).
        public var maximumAge: Double
        /// The most bytes all segments together may take. Default 512 MiB: 3 days of the accelerometer at 50 Hz
        /// take about 430 MB (33 bytes a sample).
        public var maximumBytes: Int
        /// The size at which a segment is closed and the next one begun, in bytes: the unit of retention. Default
        /// 4 MiB (about 21 minutes of one sensor at 100 Hz), at most 64 MiB.
        public var segmentBytes: Int
        /// The longest a sample waits in memory before it is written, in seconds: what a SIGKILL can lose.
        /// Default 1 s.
        public var flushInterval: Double
        /// How long written data may wait before it is flushed to the disk (`fdatasync`, at the first write after
        /// it), in seconds: with `flushInterval`, what a power loss can lose. Default 10 s.
        public var syncInterval: Double
        /// How often a failed write is tried again while recording is paused, in seconds. Default 5 s.
        public var retryInterval: Double
        /// The most samples kept in memory while writes fail, beyond which new ones are dropped (and counted).
        /// Default 10 000 (100 s at 100 Hz, 330 KB).
        public var maximumPendingSamples: Int
        /// A label kept in each segment's header, such as the device's name (at most 1 024 bytes of UTF-8).
        public var label: String

        /// A configuration; every parameter has the documented default.
        public init(
            maximumAge: Double = 259_200, maximumBytes: Int = 512 << 20, segmentBytes: Int = 4 << 20,
            flushInterval: Double = 1, syncInterval: Double = 10, retryInterval: Double = 5,
            maximumPendingSamples: Int = 10_000, label: String = ""
        ) {
            self.maximumAge = maximumAge
            self.maximumBytes = maximumBytes
            self.segmentBytes = segmentBytes
            self.flushInterval = flushInterval
            self.syncInterval = syncInterval
            self.retryInterval = retryInterval
            self.maximumPendingSamples = maximumPendingSamples
            self.label = label
        }

        /// The largest ``segmentBytes``: 64 MiB, so that a reader holds at most that much of a segment at once.
        public static let largestSegment = 64 << 20

        /// Throws `invalidArgument` naming the first value out of its range.
        func validate() throws(MotionError) {
            func check(_ valid: Bool, _ text: String) throws(MotionError) {
                if !valid { throw MotionError(.invalidArgument, "the store's \(text)") }
            }
            try check(maximumAge > 0 && maximumAge.isFinite, "maximum age must be a finite number of seconds > 0, not \(maximumAge)")
            try check(
                segmentBytes >= 4096 && segmentBytes <= Self.largestSegment,
                "segment size must be 4096 to \(Self.largestSegment) bytes, not \(segmentBytes)")
            try check(
                maximumBytes >= 2 * segmentBytes,
                "size limit (\(maximumBytes) bytes) must hold at least two segments of \(segmentBytes) bytes")
            try check(
                flushInterval > 0 && flushInterval <= 60, "flush interval must be in (0, 60] s, not \(flushInterval)")
            try check(syncInterval > 0 && syncInterval <= 3600, "sync interval must be in (0, 3600] s, not \(syncInterval)")
            try check(retryInterval > 0 && retryInterval <= 3600, "retry interval must be in (0, 3600] s, not \(retryInterval)")
            try check(
                maximumPendingSamples >= 1 && maximumPendingSamples <= 10_000_000,
                "pending-sample limit must be 1 to 10 000 000, not \(maximumPendingSamples)")
        }
    }

    /// How the samples' timestamps relate to Unix time, which queries use.
    public enum Clock: Hashable, Sendable {
        /// `CLOCK_BOOTTIME` seconds, as live devices and the motion service stamp samples: the offset to Unix time
        /// is measured when each frame is written, to within about a microsecond however loaded the machine, so
        /// samples 20 ms apart stay 20 ms apart across frames (unless the wall clock is set or slewed between them).
        case boottime
        /// A fixed offset, in seconds: a sample's Unix time is its timestamp plus this (0: the timestamps are Unix
        /// time already).
        case offset(Double)
    }

    /// What a call changed in the store's recording, for the caller to report.
    public enum Event: Sendable, CustomStringConvertible {
        /// A write failed: recording is paused until a retry works.
        case paused(MotionError)
        /// Writing works again; `droppedSamples` samples came while paused and were not kept.
        case resumed(droppedSamples: Int)

        public var description: String {
            switch self {
            case .paused(let error):
                "recording paused: \(error)"
            case .resumed(let dropped):
                "recording resumed; \(dropped) sample\(dropped == 1 ? "" : "s") that came meanwhile not kept"
            }
        }
    }

    private let state: LockedState<WriterState>

    /// Opens the store in `directory` for writing, creating the directory (mode 0700) when it does not exist,
    /// and applies retention. Appends go to a new segment: segments already there are never written again.
    ///
    /// - Throws: `MotionError` naming the directory: `invalidArgument` for a configuration value out of range,
    ///   `outputExists` when another process writes the store, `permissionDenied` or `ioFailure` when the
    ///   directory cannot be created or used.
    public init(directory: String, clock: Clock = .boottime, configuration: Configuration = Configuration())
        throws(MotionError)
    {
        try configuration.validate()
        let lock = try StoreDirectory.openForWriting(directory)
        var writer = WriterState(directory: directory, lockDescriptor: lock, configuration: configuration, clock: clock)
        do throws(MotionError) {
            writer.nextSequence = try StoreDirectory.segments(in: directory).map(\.sequence).max().map { $0 + 1 } ?? 1
            try writer.applyRetention(now: wallSeconds())
        } catch {
            writer.closeFiles()
            throw error
        }
        state = LockedState(writer)
    }

    deinit {
        state.withLock { state in
            _ = try? state.flush(now: monotonicNanoseconds())
            state.closeFiles()
        }
    }

    /// Appends `sample`, and writes the frame when it is due. A sample without a reading, with a reading that is not
    /// finite, or older than the last one kept, is not kept (``rejectedSamples``).
    /// - Returns: An event when recording pauses or resumes.
    @discardableResult
    public func append(_ sample: MotionSample) -> Event? {
        state.withLock { $0.append(sample, now: monotonicNanoseconds()) }
    }

    /// Appends device motion, and writes the frame when it is due. Motion with a value that is not finite, or older
    /// than the last kept, is not kept (``rejectedSamples``).
    /// - Returns: An event when recording pauses or resumes.
    @discardableResult
    public func append(_ motion: DeviceMotion) -> Event? {
        state.withLock { $0.append(motion, now: monotonicNanoseconds()) }
    }

    /// Appends an event (a shake, an orientation change: what `stream --format jsonl` prints as
    /// `{"type":TYPE,"t":…,FIELDS}`), and writes the frame when it is due. An event with a time that is not finite or
    /// older than the last event kept, a type or a key of more than 255 bytes (or none), more than 255 fields or a
    /// string of more than 65 535 bytes is not kept (``rejectedSamples``).
    /// - Returns: An event of the store when recording pauses or resumes.
    @discardableResult
    public func appendEvent(type: String, timestamp: Double, fields: [(String, EventValue)]) -> Event? {
        state.withLock { $0.append(StoredEvent(type: type, timestamp: timestamp, fields: fields), now: monotonicNanoseconds()) }
    }

    /// Appends `samples` in order, under one lock; see `append(_:)` of a sample.
    /// - Returns: The last event, when recording paused or resumed.
    @discardableResult
    public func append(contentsOf samples: some Sequence<MotionSample>) -> Event? {
        // An array or a slice is read through a buffer of concrete samples: iterating the generic sequence itself,
        // unspecialised in this module, cost two allocations a sample.
        if let event = samples.withContiguousStorageIfAvailable({ append(buffer: $0) }) { return event }
        return append(buffer: UnsafeBufferPointer(start: nil, count: 0), then: samples)
    }

    private func append(
        buffer: UnsafeBufferPointer<MotionSample>, then rest: some Sequence<MotionSample> = EmptyCollection()
    ) -> Event? {
        state.withLock { state in
            let now = monotonicNanoseconds()
            var last: Event?
            for sample in buffer { last = state.append(sample, now: now) ?? last }
            for sample in rest { last = state.append(sample, now: now) ?? last }
            return last
        }
    }

    /// Writes the pending frame when it is due (its first sample waited ``Configuration/flushInterval``), or
    /// tries again a write that failed when ``Configuration/retryInterval`` has passed: call it about once a
    /// second, so that samples do not wait longer when none come after them.
    @discardableResult
    public func flushIfDue() -> Event? {
        state.withLock { $0.flushIfDue(now: monotonicNanoseconds()) }
    }

    /// Writes what is pending now (a writer that batches samples itself calls this after each batch), and flushes
    /// the file to the disk when ``Configuration/syncInterval`` has passed; while paused, tries again only when
    /// ``Configuration/retryInterval`` has passed.
    /// - Returns: An event when recording pauses or resumes.
    @discardableResult
    public func flush() -> Event? {
        state.withLock { $0.flushIfDue(now: monotonicNanoseconds(), force: true) }
    }

    /// Writes what is pending now and flushes the file to the disk.
    /// - Throws: `MotionError` (`ioFailure`, naming the segment) when it cannot; the samples stay pending.
    public func synchronize() throws(MotionError) {
        try state.withLock { state throws(MotionError) in
            try state.flush(now: monotonicNanoseconds())
            try state.sync(now: monotonicNanoseconds())
        }
    }

    /// Writes what is pending, flushes it to the disk and releases the store; later appends are ignored.
    /// - Throws: `MotionError` when the last write fails: its samples are lost, what was written before is kept.
    public func close() throws(MotionError) {
        try state.withLock { state throws(MotionError) in
            defer { state.closeFiles() }
            guard !state.isClosed else { return }
            try state.flush(now: monotonicNanoseconds())
            try state.sync(now: monotonicNanoseconds())
        }
    }

    /// Samples, device motion and events not kept because they had no finite reading, went back in time or were
    /// malformed.
    public var rejectedSamples: Int { state.withLock { $0.rejected } }

    /// Whether recording is paused by a failed write, and by which error.
    public var pausedBy: MotionError? { state.withLock { $0.pausedBy } }
}

/// Unix time in seconds (`CLOCK_REALTIME`).
func wallSeconds() -> Double { Double(clockNanoseconds(CLOCK_REALTIME)) / 1e9 }

/// The writer's state, under the store's lock.
struct WriterState {
    let directory: String
    let configuration: MotionStore.Configuration
    let clock: MotionStore.Clock
    var lockDescriptor: Int32
    var frame = RecordFrameBuilder(.samples)
    var motionFrame = RecordFrameBuilder(.deviceMotion)
    var eventsFrame = RecordFrameBuilder(.events)
    /// The monotonic time the frames' first record came, in nanoseconds.
    var frameStarted: UInt64 = 0
    var segment: Int32 = -1
    var segmentPath = ""
    var segmentSize = 0
    var nextSequence = 1
    var unsynced = false
    var lastSync: UInt64 = 0
    var lastTime = -Double.infinity
    var lastMotionTime = -Double.infinity
    var lastEventTime = -Double.infinity
    var rejected = 0
    var pausedBy: MotionError?
    var lastAttempt: UInt64 = 0
    var dropped = 0

    init(directory: String, lockDescriptor: Int32, configuration: MotionStore.Configuration, clock: MotionStore.Clock) {
        self.directory = directory
        self.lockDescriptor = lockDescriptor
        self.configuration = configuration
        self.clock = clock
    }

    var isClosed: Bool { lockDescriptor < 0 }

    mutating func append(_ sample: MotionSample, now: UInt64) -> MotionStore.Event? {
        guard !isClosed else { return nil }
        let hasReading = !sample.sensors.isEmpty
        let finite =
            (sample.acceleration?.isFinite ?? true) && (sample.rotationRate?.isFinite ?? true)
            && (sample.magneticField?.isFinite ?? true)
        guard sample.timestamp.isFinite, sample.timestamp >= lastTime, hasReading, finite else {
            rejected += 1
            return nil
        }
        return admit(now: now) { state in
            state.frame.append(sample)
            state.lastTime = sample.timestamp
        }
    }

    mutating func append(_ motion: DeviceMotion, now: UInt64) -> MotionStore.Event? {
        guard !isClosed else { return nil }
        let q = motion.attitude.quaternion
        let finite =
            motion.timestamp.isFinite && q.w.isFinite && q.x.isFinite && q.y.isFinite && q.z.isFinite
            && motion.rotationRate.isFinite && motion.gravity.isFinite && motion.userAcceleration.isFinite
            && motion.heading.isFinite && (motion.magneticField?.field.isFinite ?? true)
        guard finite, motion.timestamp >= lastMotionTime else {
            rejected += 1
            return nil
        }
        return admit(now: now) { state in
            state.motionFrame.append(motion)
            state.lastMotionTime = motion.timestamp
        }
    }

    mutating func append(_ event: StoredEvent, now: UInt64) -> MotionStore.Event? {
        guard !isClosed else { return nil }
        func fits(_ text: String) -> Bool { !text.isEmpty && text.utf8.count <= 255 }
        let wellFormed =
            event.timestamp.isFinite && event.timestamp >= lastEventTime && fits(event.type) && event.fields.count <= 255
            && event.fields.allSatisfy { field in
                guard fits(field.0) else { return false }
                if case .string(let text) = field.1 { return text.utf8.count <= Int(UInt16.max) }
                return true
            }
        guard wellFormed else {
            rejected += 1
            return nil
        }
        return admit(now: now) { state in
            state.eventsFrame.append(event: event.type, timestamp: event.timestamp, fields: event.fields)
            state.lastEventTime = event.timestamp
        }
    }

    /// Adds a checked record with `add` when there is room (see ``makeRoom(now:)``), and writes the frames when due.
    private mutating func admit(now: UInt64, _ add: (inout WriterState) -> Void) -> MotionStore.Event? {
        let (room, event) = makeRoom(now: now)
        guard room else { return event }
        if pending == 0 { frameStarted = now }
        add(&self)
        return event ?? flushIfDue(now: now)
    }

    /// Records waiting in memory.
    var pending: Int { frame.count + motionFrame.count + eventsFrame.count }

    /// Makes room for one more record at the pending limit, by writing the frames at once (unless paused).
    /// - Returns: Whether there is room (when not, the record is dropped and counted), and an event to report.
    mutating func makeRoom(now: UInt64) -> (room: Bool, event: MotionStore.Event?) {
        guard pending >= configuration.maximumPendingSamples else { return (true, nil) }
        var event: MotionStore.Event?
        if pausedBy == nil {
            frameStarted = 0  // full frames are due at once
            event = flushIfDue(now: now)
        }
        guard pending >= configuration.maximumPendingSamples else { return (true, event) }
        dropped += 1
        return (false, event ?? flushIfDue(now: now))
    }

    /// Writes the frame when due (or now, `force`), and syncs when that is due.
    mutating func flushIfDue(now: UInt64, force: Bool = false) -> MotionStore.Event? {
        guard !isClosed else { return nil }
        let wasPaused = pausedBy != nil
        if wasPaused {
            guard now >= lastAttempt + nanoseconds(clamping: configuration.retryInterval) else { return nil }
        } else {
            guard pending > 0, force || now >= frameStarted + nanoseconds(clamping: configuration.flushInterval) else {
                return nil
            }
        }
        do {
            try flush(now: now)
            if unsynced && now >= lastSync + nanoseconds(clamping: configuration.syncInterval) { try sync(now: now) }
        } catch {
            lastAttempt = now
            guard !wasPaused else { return nil }
            pausedBy = error
            return .paused(error)
        }
        guard wasPaused else { return nil }
        defer {
            pausedBy = nil
            dropped = 0
        }
        return .resumed(droppedSamples: dropped)
    }

    /// Writes the frames that are not empty, each in one `write`, starting a segment first when needed. A frame
    /// written is emptied, so that after a failure only what was not written is tried again.
    mutating func flush(now: UInt64) throws(MotionError) {
        guard pending > 0 else { return }
        let offset: Double =
            switch clock {
            case .boottime: Double(clockDifference(CLOCK_REALTIME, minus: CLOCK_BOOTTIME)) / 1e9
            case .offset(let offset): offset
            }
        var size = 0
        if !frame.isEmpty { frame.finish(clockOffset: offset); size += frame.bytes.count }
        if !motionFrame.isEmpty { motionFrame.finish(clockOffset: offset); size += motionFrame.bytes.count }
        if !eventsFrame.isEmpty { eventsFrame.finish(clockOffset: offset); size += eventsFrame.bytes.count }
        if segment >= 0 && segmentSize + size > configuration.segmentBytes {
            try finishSegment(now: now)
        }
        if segment < 0 { try startSegment(now: now) }
        try account(Self.write(&frame, to: segment))
        try account(Self.write(&motionFrame, to: segment))
        try account(Self.write(&eventsFrame, to: segment))
    }

    /// Counts a frame's write in the segment, or throws its failure.
    private mutating func account(_ result: Result<Int, SystemErrno>) throws(MotionError) {
        switch result {
        case .success(let written):
            segmentSize += written
            unsynced = unsynced || written > 0
        case .failure(let error):
            throw writeFailed(error)
        }
    }

    /// Writes a finished frame unless it is empty, and empties it; the bytes written.
    private static func write(_ builder: inout RecordFrameBuilder, to segment: Int32) -> Result<Int, SystemErrno> {
        guard !builder.isEmpty else { return .success(0) }
        if let failure = builder.bytes.withUnsafeBytes({ writeAll($0, to: segment) }) { return .failure(failure) }
        defer { builder.reset() }
        return .success(builder.bytes.count)
    }

    /// Writes `bytes` at the end of the file `descriptor`; on a failure, cuts what was written of them off again.
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> SystemErrno? {
        var written = 0
        let start = lseek(descriptor, 0, SEEK_CUR)
        while written < bytes.count {
            switch SystemErrno.retryingInterrupts({ Glibc.write(descriptor, bytes.baseAddress! + written, bytes.count - written) }) {
            case .success(let count):
                written += count
            case .failure(let error):
                if written > 0 && start >= 0 {
                    _ = ftruncate(descriptor, start)
                    _ = lseek(descriptor, start, SEEK_SET)
                }
                return error
            }
        }
        return nil
    }

    func writeFailed(_ error: SystemErrno) -> MotionError {
        MotionError(
            error.isPermissionDenied ? .permissionDenied : .ioFailure,
            "cannot write the store's segment: \(error.text); free space on its disk or lower the store's size limit",
            at: .init(file: segmentPath), underlying: error)
    }

    /// Flushes the segment to the disk.
    mutating func sync(now: UInt64) throws(MotionError) {
        guard segment >= 0, unsynced else { return }
        if case .failure(let error) = SystemErrno.retryingInterrupts({ fdatasync(segment) }) {
            throw MotionError(
                .ioFailure, "cannot flush the store's segment to the disk: \(error.text)", at: .init(file: segmentPath),
                underlying: error)
        }
        unsynced = false
        lastSync = now
    }

    mutating func startSegment(now: UInt64) throws(MotionError) {
        let name = StoreDirectory.segmentName(nextSequence)
        let path = directory + "/" + name
        let descriptor = path.withCString { cPath in
            SystemErrno.retryingInterrupts { open(cPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) }
        }
        switch descriptor {
        case .success(let fd):
            segment = fd
        case .failure(let error):
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot create a segment in the store: \(error.text)", at: .init(file: path), underlying: error)
        }
        segmentPath = path
        segmentSize = 0
        nextSequence += 1
        let header = StoreFormat.headerFrame(created: wallSeconds(), label: configuration.label)
        if let failure = header.withUnsafeBytes({ [segment] in Self.writeAll($0, to: segment) }) {
            let error = writeFailed(failure)
            closeSegment()
            _ = unlink(path)
            throw error
        }
        segmentSize = header.count
        StoreDirectory.syncDirectory(directory)  // the new name survives a power loss
        try applyRetention(now: wallSeconds())
    }

    mutating func finishSegment(now: UInt64) throws(MotionError) {
        try sync(now: now)
        closeSegment()
    }

    mutating func closeSegment() {
        if segment >= 0 { _ = Glibc.close(segment) }
        segment = -1
        unsynced = false
    }

    /// Removes whole segments, never the one being written: those last written before `now − maximumAge` (Unix
    /// seconds), then the oldest while the others and a whole segment for the one being written (or about to be)
    /// exceed `maximumBytes`.
    mutating func applyRetention(now: Double) throws(MotionError) {
        let active = segment >= 0 ? segmentPath : nil
        var segments = try StoreDirectory.segments(in: directory).filter { $0.path != active }
        var total = segments.reduce(0) { $0 + $1.size }
        var removed = false
        while let oldest = segments.first,
            oldest.modified < now - configuration.maximumAge || total + configuration.segmentBytes > configuration.maximumBytes
        {
            if unlink(oldest.path) != 0 && errno != ENOENT {
                let error = SystemErrno.current()
                throw MotionError(
                    .ioFailure, "cannot remove an expired segment of the store: \(error.text)",
                    at: .init(file: oldest.path), underlying: error)
            }
            total -= oldest.size
            segments.removeFirst()
            removed = true
        }
        if removed { StoreDirectory.syncDirectory(directory) }
    }

    mutating func closeFiles() {
        closeSegment()
        if lockDescriptor >= 0 { _ = Glibc.close(lockDescriptor) }
        lockDescriptor = -1
    }
}
