public import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Samples, device motion and events a store holds (``MotionStore``), oldest first, a frame (about a second) at a
/// time, with what is damaged reported rather than thrown: any number of readers may read a store while its writer
/// appends.
///
/// ```swift
/// var reader = try StoreReader(directory: "/var/lib/motiond/history", from: now - 3600)
/// while let batch = try reader.next() {
///     for sample in batch.samples { print(sample.timestamp + batch.clockOffset, sample.acceleration!) }
/// }
/// for damage in reader.damage { print("warning:", damage) }
/// ```
///
/// Everything is read as another process's input: segments are opened without following symbolic links, at most
/// ``MotionStore/Configuration/largestSegment`` bytes of each are read, and every frame is checked (checksum,
/// lengths, counts, finite numbers, known sensors, time order) before any sample of it is returned.
public struct StoreReader: Sendable {
    /// The Unix times returned, in seconds.
    private let start: Double
    private let end: Double
    /// What was found damaged so far and skipped: reported, never thrown, since the rest stays readable.
    public private(set) var damage: [StoreDamage] = []
    private var segments: [StoreDirectory.Segment]
    private var batches: [StoredSamples] = []

    /// A reader of the samples whose Unix time (timestamp plus the frame's clock offset) is in `start...end`.
    /// - Throws: `MotionError` naming the directory when it cannot be listed (`noInput` when it does not exist).
    public init(directory: String, from start: Double = -.infinity, through end: Double = .infinity) throws(MotionError) {
        guard !start.isNaN, !end.isNaN, start <= end else {
            throw MotionError(.invalidArgument, "the time range \(start) to \(end) is empty")
        }
        self.start = start
        self.end = end
        // A segment last written before `start` holds nothing from `start` on (samples are written after they
        // happen), so it is not read.
        segments = try StoreDirectory.segments(in: directory).filter { $0.modified >= start }
        segments.reverse()  // taken from the end
    }

    /// The next frame's samples in the range, or `nil` after the last.
    /// - Throws: `MotionError` when a segment cannot be read at all (`permissionDenied`, `ioFailure`); a segment
    ///   that is damaged or vanished (removed by retention meanwhile) is reported in ``damage`` or skipped instead.
    public mutating func next() throws(MotionError) -> StoredSamples? {
        while batches.isEmpty {
            guard let segment = segments.popLast() else { return nil }
            try read(segment, isNewest: segments.isEmpty)
        }
        return batches.removeFirst()
    }

    /// Reads every sample in the range at once; prefer ``next()`` for long ranges.
    public mutating func readAll() throws(MotionError) -> [MotionSample] {
        var samples: [MotionSample] = []
        while let batch = try next() { samples += batch.samples }
        return samples
    }

    /// Reads `segment`'s frames in the range. In the newest segment, a frame cut short by the file's end is the
    /// writer's `write` in progress, not damage.
    private mutating func read(_ segment: StoreDirectory.Segment, isNewest: Bool) throws(MotionError) {
        let bytes: [UInt8]
        switch StoreDirectory.read(segment.path) {
        case .success(let contents): bytes = contents
        case .failure(.gone): return  // removed by retention since it was listed
        case .failure(.notRegular):
            damage.append(StoreDamage(file: segment.path, bytes: 0..<0, reason: "not a regular file"))
            return
        case .failure(.tooLarge(let size)):
            damage.append(
                StoreDamage(
                    file: segment.path, bytes: 0..<size,
                    reason: "larger than \(MotionStore.Configuration.largestSegment) bytes: not a segment this "
                        + "library wrote"))
            return
        case .failure(.system(let error)):
            throw MotionError(
                error.isPermissionDenied ? .permissionDenied : .ioFailure,
                "cannot read the store's segment: \(error.text)", at: .init(file: segment.path), underlying: error)
        }
        let path = segment.path
        var found: [StoredSamples] = []
        var damaged: [StoreDamage] = []
        var sawHeader = false
        var label = ""
        let (start, end) = (self.start, self.end)
        bytes.withUnsafeBytes { buffer in
            // A records frame: its records in the range as a batch, or the reason it is damaged.
            func keep<Record>(
                _ decoded: Result<(Double, [Record]), FrameScan.Reason>, _ payload: Range<Int>,
                time: (Record) -> Double, batch: ([Record], Double) -> StoredSamples
            ) {
                switch decoded {
                case .success(let (offset, records)):
                    let kept = records.filter {
                        let unix = time($0) + offset
                        return unix >= start && unix <= end
                    }
                    if !kept.isEmpty { found.append(batch(kept, offset)) }
                case .failure(let reason):
                    damaged.append(StoreDamage(file: path, bytes: payload, reason: reason.text))
                }
            }
            for item in FrameScan.items(buffer) {
                switch item {
                case .damage(let range, let reason):
                    damaged.append(StoreDamage(file: path, bytes: range, reason: reason))
                case .frame(.segmentHeader, let payload):
                    switch FrameScan.header(.init(rebasing: buffer[payload])) {
                    case .success(let header):
                        sawHeader = true
                        label = header.label
                    case .failure(let reason):
                        damaged.append(StoreDamage(file: path, bytes: payload, reason: reason.text))
                    }
                case .frame(.message, let payload):
                    damaged.append(StoreDamage(file: path, bytes: payload, reason: "a spooled message, not samples"))
                case .frame(.samples, let payload):
                    keep(FrameScan.samples(.init(rebasing: buffer[payload])).map { ($0.offset, $0.samples) }, payload,
                        time: \.timestamp) { StoredSamples(samples: $0, clockOffset: $1, label: label) }
                case .frame(.deviceMotion, let payload):
                    keep(FrameScan.deviceMotion(.init(rebasing: buffer[payload])).map { ($0.offset, $0.motion) }, payload,
                        time: \.timestamp) { StoredSamples(deviceMotion: $0, clockOffset: $1, label: label) }
                case .frame(.events, let payload):
                    keep(FrameScan.events(.init(rebasing: buffer[payload])).map { ($0.offset, $0.events) }, payload,
                        time: \.timestamp) { StoredSamples(events: $0, clockOffset: $1, label: label) }
                }
            }
        }
        if isNewest, let last = damaged.last, last.bytes.upperBound == bytes.count,
            last.reason == FrameScan.cutShort
        {
            damaged.removeLast()
        }
        if !sawHeader && !bytes.isEmpty && damaged.isEmpty {
            damaged.append(StoreDamage(file: path, bytes: 0..<0, reason: "no segment header"))
        }
        damage += damaged
        batches += found
    }
}

/// One frame's records from a store: its samples, its device motion or its events (one of them not empty).
public struct StoredSamples: Sendable {
    /// The samples, oldest first, with their timestamps as recorded (the source's clock, in seconds).
    public var samples: [MotionSample]
    /// The device motion, oldest first, with its timestamps as recorded.
    public var deviceMotion: [DeviceMotion] = []
    /// The events (shakes, orientation changes), oldest first, with their timestamps as recorded.
    public var events: [StoredEvent] = []
    /// Unix time minus the samples' clock, in seconds, measured when they were written: a sample's Unix time is
    /// `timestamp + clockOffset`.
    public var clockOffset: Double
    /// The label of the segment they come from (``MotionStore/Configuration/label``).
    public var label: String

    init(samples: [MotionSample] = [], deviceMotion: [DeviceMotion] = [], events: [StoredEvent] = [], clockOffset: Double, label: String) {
        (self.samples, self.deviceMotion, self.events) = (samples, deviceMotion, events)
        (self.clockOffset, self.label) = (clockOffset, label)
    }
}

/// Bytes of a store that hold no readable frame, and why: reported by ``StoreReader`` and skipped.
public struct StoreDamage: Sendable, Hashable, CustomStringConvertible {
    /// The segment's path.
    public var file: String
    /// The damaged bytes' offsets in it.
    public var bytes: Range<Int>
    /// What is wrong with the first of them, such as `a checksum mismatch`.
    public var reason: String

    /// `FILE: bytes A–B skipped: REASON`.
    public var description: String {
        bytes.isEmpty
            ? "\(file): skipped: \(reason)"
            : "\(file): bytes \(bytes.lowerBound)–\(bytes.upperBound) skipped: \(reason)"
    }
}
