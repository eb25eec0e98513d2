import MotionAlgorithms
import Motion
import MotionCore
import MotionProtocol
import MotionStore
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// One `OpenHistory` query (`Docs/Service.md`, "History"): the store's samples, device motion or events in a range
/// of Unix time, oldest first, written as a canonical trace, `attitude` records or events (t in Unix seconds) to a
/// pipe whose read end the client holds, by a thread of the query's own. Damaged parts of the store become `damaged`
/// events (a `# event:` line in CSV).
///
/// The client may read as slowly as it likes, but not stop: after ``stallLimit`` seconds in which the pipe took
/// nothing the query ends, so that a client that went silent holds no thread for long. The store is read a frame
/// (about a second of samples) at a time, so a query holds about a second of samples and 64 KiB of lines.
final class HistoryQuery: Sendable {
    /// Seconds without progress after which a query whose client does not read ends.
    static let stallLimit = 30.0

    let owner: String
    let user: UInt32
    private let descriptor: Int32
    private let cancelled = LockedState(false)
    private let thread = SourceThread()

    struct Request: Sendable {
        var directory: String
        var start: Double
        var end: Double
        var format: TraceFormat
        var kind: Motion1Interface.HistoryKind
        var sensors: SensorSet
        /// The shortest interval between samples (or device motion) for this caller (0: as recorded), in seconds.
        var minimumInterval: Double
    }

    private init(owner: String, user: UInt32, descriptor: Int32) {
        self.owner = owner
        self.user = user
        self.descriptor = descriptor
    }

    /// Creates the pipe and starts writing; returns the query and the client's end, which the caller passes and
    /// then closes. `ended` runs once, on the query's thread, with why it ended, after the pipe is closed.
    static func start(
        _ request: Request, owner: String, user: UInt32, ended: @escaping @Sendable (HistoryQuery, String) -> Void
    ) throws(SystemErrno) -> (HistoryQuery, Int32) {
        let (readEnd, writeEnd) = try ClientPipe.make()
        let query = HistoryQuery(owner: owner, user: user, descriptor: writeEnd)
        Task(executorPreference: query.thread) {
            let reason = query.write(request)
            _ = Glibc.close(query.descriptor)
            query.thread.stop()
            ended(query, reason)
        }
        return (query, readEnd)
    }

    /// Ends the query at its next write or wait.
    func cancel() { cancelled.withLock { $0 = true } }

    private var isCancelled: Bool { cancelled.withLock { $0 } }

    /// Writes the whole answer; returns why it ended.
    private func write(_ request: Request) -> String {
        var metadata = TraceMetadata()
        metadata["generator"] = "motiond history"
        metadata["clock"] = "unix"
        if request.minimumInterval > 0 { metadata["update_interval_s"] = "\(request.minimumInterval)" }
        // (The device-motion columns are fixed names of letters: the writer accepts them.)
        let writer =
            request.kind == .samples
            ? TraceWriter(format: request.format, sensors: request.sensors, metadata: metadata)
            : try! HistoryRecords.writer(deviceMotion: request.kind == .deviceMotion, format: request.format, metadata: metadata)
        var values: [Double] = []
        var gate = UpdateIntervalGate(interval: request.minimumInterval)
        var samples = 0
        do throws(MotionError) {
            var reader = try StoreReader(directory: request.directory, from: request.start, through: request.end)
            var reported = 0
            var last = request.start.isFinite ? request.start : 0
            // Damage found since the last report, as `damaged` events.
            func reportDamage() throws(MotionError) {
                for damage in reader.damage.dropFirst(reported) {
                    try writer.writeEvent(
                        type: "damaged", timestamp: last,
                        fields: [("file", .string(damage.file)), ("reason", .string(damage.description))])
                }
                reported = reader.damage.count
            }
            while let batch = try reader.next() {
                try reportDamage()
                switch request.kind {
                case .samples:
                    for stored in batch.samples {
                        var sample = stored.restricted(to: request.sensors)
                        sample.timestamp += batch.clockOffset
                        guard !sample.sensors.isEmpty, gate.admit(at: sample.timestamp) else { continue }
                        try writer.write(sample)
                        last = sample.timestamp
                        samples += 1
                    }
                case .deviceMotion, .events:
                    let written = try HistoryRecords.write(
                        batch, deviceMotion: request.kind == .deviceMotion, to: writer, values: &values,
                        admit: { gate.admit(at: $0) })
                    samples += written.count
                    last = written.last ?? last
                }
                if let failure = send(writer) { return failure }
            }
            try reportDamage()
            try writer.flush()
        } catch {
            // The client learns why from an `error` event, then the end of the pipe.
            try? writer.writeEvent(type: "error", timestamp: 0, fields: [("message", .string(error.description))])
            return send(writer) ?? "error: \(error)"
        }
        return send(writer) ?? "done: \(samples) records"
    }

    /// Sends what the writer holds, waiting for the client to read; returns why the query must end, if it must.
    private func send(_ writer: TraceWriter) -> String? {
        writer.withTakenBytes { bytes -> String? in
            guard !bytes.isEmpty else { return nil }
            var offset = 0
            var lastProgress = monotonicNanoseconds()
            while !isCancelled {
                switch ClientPipe.send(.init(rebasing: bytes[offset...]), to: descriptor) {
                case .all:
                    return nil
                case .full(let taken):
                    offset += taken
                    if taken > 0 { lastProgress = monotonicNanoseconds() }
                    if monotonicNanoseconds() - lastProgress > nanoseconds(clamping: Self.stallLimit) {
                        return "the client read nothing for \(Int(Self.stallLimit)) s"
                    }
                    var wait = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&wait, 1, 500)  // at most half a second, to see a cancellation
                case .failed(let reason):
                    return reason
                }
            }
            return "the service is stopping"
        }
    }
}
