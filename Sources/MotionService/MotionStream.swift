import DequeModule
import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionProtocol
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// One open stream: a subscription of the service's `MotionManager`, written as text lines to a pipe whose read end
/// the client holds.
///
/// Records are written on the producer's thread as the engine routes them
/// (`MotionManager.subscribeOnProducer`): the line rendered, one non-blocking `send`; no task and no queue per
/// record. While the pipe is full, records wait in the stream (at most ``StreamRequest/bufferLimit``, newest
/// kept) and a task waits, at no cost, until the client reads (`Reactor.wait(writable:)`), then sends them. A
/// client that stops reading so never slows the others nor grows the service's memory: its records are dropped,
/// and the next line it reads after a gap is a `dropped` event with the count (JSON Lines; a `# event:` comment
/// line in CSV).
///
/// A stream on a user's ``SharedRateGrid`` (raw samples or device motion of a user without the high-rate right)
/// subscribes to every device sample and keeps those on the grid, then thins them to its own interval.
final class MotionStream: Sendable {
    let id: UInt32
    let owner: String
    /// The owner's uid, as the bus told it.
    let user: UInt32
    let request: StreamRequest
    /// The grid this stream's records come from, shared with the other slow raw streams of its user; `nil` for a
    /// stream with the high-rate right, or an event stream.
    let grid: SharedRateGrid?
    /// The write end of the stream's pipe (non-blocking).
    private let descriptor: Int32
    /// The lines this stream shares with others of its variant; `variant` is `nil` for event streams.
    private let rows: SharedRows
    private let variant: SharedRows.Variant?
    private let state: LockedState<State>

    private struct State {
        var renderer: StreamRenderer
        /// Thins the records of a stream on a shared grid to its interval (the engine's gate does it otherwise).
        var gate: UpdateIntervalGate
        /// The lines rendered in the producer's current pass over a sample, written when it ends (``passEnded()``):
        /// the records of a sample go out in one burst of writes, after the work of routing and rendering them.
        var outbox: [UInt8] = []
        var outboxRecords = 0
        /// The rest of what the pipe took in part, from `partialOffset`: sent before anything else.
        var partial: [UInt8] = []
        var partialOffset = 0
        /// The records `partial` completes.
        var partialRecords = 0
        /// Records that came while the pipe was full, oldest first: at most the request's buffer.
        var waiting: Deque<MotionRecord> = []
        var delivered: UInt64 = 0
        var dropped: UInt64 = 0
        /// Records dropped since the last `dropped` event: reported before the next record.
        var unreported: UInt64 = 0
        var subscription: ProducerSubscription?
        /// The task that waits for the pipe to take `partial` and `waiting`.
        var flusher: Task<Void, Never>?
        /// Why the source ended, once it has: the stream ends once what waits is sent.
        var sourceEnd: String?
        /// Why the stream ended, once it has.
        var endReason: String?
        var ended: (@Sendable (MotionStream, String) -> Void)?

        var isBlocked: Bool { !partial.isEmpty || !waiting.isEmpty }
    }

    /// Records written to the pipe so far, and records dropped because the client did not keep up.
    var counts: (delivered: UInt64, dropped: UInt64) {
        state.withLock { ($0.delivered, $0.dropped) }
    }

    private init(
        id: UInt32, owner: String, user: UInt32, request: StreamRequest, grid: SharedRateGrid?, descriptor: Int32,
        rows: SharedRows, stepLength: StepLengthModel
    ) {
        self.id = id
        self.owner = owner
        self.user = user
        self.request = request
        self.grid = grid
        self.descriptor = descriptor
        self.rows = rows
        variant = SharedRows.Variant(request)
        state = LockedState(
            State(
                renderer: StreamRenderer(request, id: id, stepLength: stepLength),
                gate: UpdateIntervalGate(interval: grid == nil ? 0 : request.interval)))
    }

    /// Creates the pipe; returns the stream and the client's end, the read end (the caller passes it, then closes
    /// it).
    ///
    /// A pipe, not a socket pair: the client only reads, and a pipe costs the kernel about 40 % less per record
    /// (no socket buffer allocated and charged per write; `Benchmarks/DeliveryFloor`). What may wait in it for
    /// a slow reader is the kernel's default pipe capacity, 64 KiB (small writes share pages): about 600 sample
    /// lines; beyond that, records wait in the stream, then are dropped.
    static func make(
        id: UInt32, owner: String, user: UInt32, request: StreamRequest, grid: SharedRateGrid?, rows: SharedRows,
        stepLength: StepLengthModel
    ) throws(SystemErrno) -> (MotionStream, Int32) {
        let (readEnd, writeEnd) = try ClientPipe.make()
        return (
            MotionStream(
                id: id, owner: owner, user: user, request: request, grid: grid, descriptor: writeEnd, rows: rows,
                stepLength: stepLength),
            readEnd
        )
    }

    /// Starts writing; `ended` runs once, with why the stream ended, after its pipe is closed.
    func start(_ manager: MotionManager, ended: @escaping @Sendable (MotionStream, String) -> Void) {
        state.withLock { $0.ended = ended }
        let kind: MotionRecordKind =
            switch request.kind {
            case .samples: .samples(request.sensors)
            case .deviceMotion: .deviceMotion(request.frame)
            case .shake: .shake
            case .orientation: .orientation
            case .steps: .steps
            case .activity: .activity
            }
        // On a shared grid: every device sample (the device still asked for this stream's rate), kept when on the
        // grid, then thinned to this stream's interval.
        let subscription = manager.subscribeOnProducer(
            kind, interval: grid == nil ? request.interval : 0, demandInterval: request.interval,
            receive: { [self] record in receive(record) },
            passEnded: { [self] in passEnded() },
            ended: { [self] end in
                switch end {
                case .success: sourceEnded("the source ended")
                case .failure(let error): sourceEnded("error: \(error)")
                }
            })
        let endedAlready = state.withLock { state in
            if state.endReason == nil { state.subscription = subscription }
            return state.endReason != nil
        }
        if endedAlready { subscription.cancel() }
    }

    /// Ends the stream, giving `reason` for the log; its pipe is closed once nothing uses it. Idempotent.
    func close(because reason: String) {
        typealias Taken = (ProducerSubscription?, Task<Void, Never>?, (@Sendable (MotionStream, String) -> Void)?)
        let taken = state.withLock { state -> Taken? in
            guard state.endReason == nil else { return nil }
            state.endReason = reason
            state.waiting.removeAll()
            defer {
                state.subscription = nil
                state.flusher = nil
                state.ended = nil
            }
            return (state.subscription, state.flusher, state.ended)
        }
        guard let (subscription, flusher, ended) = taken else { return }
        // From here nothing writes: `receive` and the flusher see `endReason`, and the subscription is stopped (a
        // `receive` running on another thread has returned when `cancel()` does).
        subscription?.cancel()
        flusher?.cancel()
        let descriptor = self.descriptor
        Task(executorPreference: Reactor.shared) { [self] in
            await flusher?.value
            Reactor.shared.forget(descriptor)
            Glibc.close(descriptor)
            ended?(self, reason)
        }
    }

    // MARK: Writing

    /// One record from the engine, on the producer's thread: rendered into the outbox, written when the pass ends
    /// (an event at once: events may come outside a pass).
    private func receive(_ record: MotionRecord) {
        let failure: String? = state.withLock { state in
            guard state.endReason == nil, state.sourceEnd == nil else { return nil }
            if let grid {
                guard grid.admits(record.timestamp), state.gate.admit(at: record.timestamp) else { return nil }
            }
            guard !state.isBlocked else {
                state.waiting.append(record)
                if state.waiting.count > request.bufferLimit {
                    state.waiting.removeFirst()
                    state.dropped += 1
                    state.unreported += 1
                }
                return nil
            }
            if let failure = render(record, &state) { return failure }
            return variant == nil ? writeOutbox(&state) : nil
        }
        if let failure { close(because: failure) }
    }

    /// The producer's pass over a sample has ended: writes what it rendered.
    private func passEnded() {
        let failure: String? = state.withLock { state in
            guard state.endReason == nil, !state.outbox.isEmpty else { return nil }
            return writeOutbox(&state)
        }
        if let failure { close(because: failure) }
    }

    /// The end of the source (or its error): the stream ends once what waits is sent.
    private func sourceEnded(_ reason: String) {
        let endNow: Bool = state.withLock { state in
            guard state.endReason == nil, state.sourceEnd == nil else { return false }
            state.sourceEnd = reason
            if writeOutbox(&state) != nil { return true }
            guard !state.isBlocked else { return false }  // the flusher ends the stream once all is sent
            // A stream that got no record still gets its header.
            do {
                try state.renderer.finish()
            } catch {
                return true
            }
            state.renderer.writer.withTakenBytes { state.outbox.append(contentsOf: $0) }
            return writeOutbox(&state) != nil || !state.isBlocked
        }
        if endNow { close(because: reason) }
    }

    /// Renders `record` into the outbox, after a `dropped` event when records were dropped before it: the line
    /// shared with the streams of its variant, once this stream's header is out. Returns why the stream must end,
    /// if it must.
    private func render(_ record: MotionRecord, _ state: inout State) -> String? {
        state.outboxRecords += 1
        if state.unreported == 0, state.renderer.wroteHeader, let variant, let line = rows.line(variant, record) {
            state.outbox.append(contentsOf: line)
            return nil
        }
        do throws(MotionError) {
            if state.unreported > 0 {
                try state.renderer.renderDropped(state.unreported, total: state.dropped, at: record.timestamp)
                state.unreported = 0
            }
            try state.renderer.render(record)
        } catch {
            return "error: \(error)"
        }
        state.renderer.writer.withTakenBytes { state.outbox.append(contentsOf: $0) }
        return nil
    }

    /// Writes the outbox; what the pipe does not take waits in `partial`, and a task waits for the client to read.
    /// Returns why the stream must end, if it must.
    private func writeOutbox(_ state: inout State) -> String? {
        guard !state.outbox.isEmpty else { return nil }
        let records = state.outboxRecords
        defer {
            state.outbox.removeAll(keepingCapacity: true)
            state.outboxRecords = 0
        }
        switch state.outbox.withUnsafeBytes({ ClientPipe.send($0, to: descriptor) }) {
        case .all:
            state.delivered += UInt64(records)
            return nil
        case .full(let taken):
            state.partial = Array(state.outbox[taken...])
            state.partialOffset = 0
            state.partialRecords = records
            startFlusher(&state)
            return nil
        case .failed(let reason):
            return reason
        }
    }

    private func startFlusher(_ state: inout State) {
        guard state.flusher == nil else { return }
        state.flusher = Task(executorPreference: Reactor.shared) { [self] in await flushWhenWritable() }
    }

    /// Waits for the client to read, then sends what waits; returns once all is sent or the stream ends.
    private func flushWhenWritable() async {
        enum Step {
            case wait
            case done
            case end(String)
        }
        while true {
            do {
                try await Reactor.shared.wait(writable: descriptor)
            } catch {
                return  // cancelled: the stream is ending
            }
            let step: Step = state.withLock { state in
                guard state.endReason == nil else { return .done }
                if !state.partial.isEmpty {
                    let offset = state.partialOffset
                    let descriptor = self.descriptor
                    let result = state.partial.withUnsafeBytes {
                        ClientPipe.send(.init(rebasing: $0[offset...]), to: descriptor)
                    }
                    switch result {
                    case .all:
                        state.partial.removeAll()
                        state.partialOffset = 0
                        state.delivered += UInt64(state.partialRecords)
                    case .full(let taken):
                        state.partialOffset += taken
                        return .wait
                    case .failed(let reason):
                        return .end(reason)
                    }
                }
                while let record = state.waiting.popFirst() {
                    if let failure = render(record, &state) ?? writeOutbox(&state) { return .end(failure) }
                    if !state.partial.isEmpty { return .wait }
                }
                state.flusher = nil
                return state.sourceEnd.map { .end($0) } ?? .done
            }
            switch step {
            case .wait: continue
            case .done: return
            case .end(let reason):
                close(because: reason)
                return
            }
        }
    }
}

/// A stream's records as text lines: the stream's metadata and header before the first, then one line per record
/// (two for an orientation change that also changes iio-sensor-proxy's report).
struct StreamRenderer {
    /// Holds the rendered lines until the stream sends them.
    let writer: TraceWriter
    private let kind: StreamRequest.Kind
    private let iioSensorProxyNames: Bool
    /// Device motion's columns, filled per record.
    private var values: [Double]
    /// The stream's metadata and header have been rendered (with its first record).
    private(set) var wroteHeader = false

    /// A renderer of `request`'s records for stream `id`; a steps stream names the step-length model in its
    /// metadata (`step_length_m`, and `step_length_cadence` in steps/s when the step is proportional to cadence).
    init(_ request: StreamRequest, id: UInt32, stepLength: StepLengthModel) {
        var metadata = TraceMetadata()
        metadata["generator"] = "motiond"
        metadata["stream"] = "\(request.kind.rawValue) \(id)"
        metadata["clock"] = "boottime"
        switch request.kind {
        case .samples, .deviceMotion: metadata["update_interval_s"] = "\(request.interval)"
        case .shake, .orientation, .activity: break
        case .steps:
            metadata["step_length_m"] = "\(stepLength.stepLength)"
            if let cadence = stepLength.referenceCadence { metadata["step_length_cadence"] = "\(cadence)" }
        }
        if request.kind == .deviceMotion {
            metadata["frame"] = request.frame.shortName
            metadata["quaternion"] = "scalar first, device to reference: v_ref = q v_device q*"
        }
        kind = request.kind
        iioSensorProxyNames = request.iioSensorProxyNames
        values = []
        switch request.kind {
        case .samples:
            writer = TraceWriter(format: request.format, sensors: request.sensors, metadata: metadata)
        case .deviceMotion:
            let columns = OutputRecords.deviceMotionColumns
            values = [Double](repeating: 0, count: columns.count)
            // The columns are fixed names of letters and '_': the writer accepts them.
            writer = try! TraceWriter(
                format: request.format, recordType: "attitude", columns: columns, metadata: metadata)
        case .shake, .orientation, .steps, .activity:
            writer = TraceWriter(format: .jsonl, sensors: [], metadata: metadata)
        }
    }

    mutating func render(_ record: MotionRecord) throws(MotionError) {
        switch record {
        case .sample(let sample):
            try writer.write(sample)
        case .deviceMotion(let motion):
            OutputRecords.fill(&values, with: motion, all: true)
            try writer.write(recordAt: motion.timestamp, values: values)
        case .shake(let event):
            try writer.writeEvent(type: "shake", timestamp: event.timestamp, fields: OutputRecords.fields(of: event))
        case .orientation(let change):
            for report in OutputRecords.reports(of: change, iioSensorProxyNames: iioSensorProxyNames) {
                try writer.writeEvent(
                    type: report.type, timestamp: change.timestamp,
                    fields: [(report.type, .string(report.value)), ("previous", .string(report.previous))])
            }
        case .steps(let update):
            for step in OutputRecords.stepRecords(of: update) {
                try writer.writeEvent(type: "step", timestamp: step.t, fields: step.fields)
            }
        case .activity(let activity):
            try writer.writeEvent(
                type: "activity", timestamp: activity.timestamp, fields: OutputRecords.fields(of: activity))
        }
        wroteHeader = true
    }

    /// A `dropped` event: `count` records lost before the one at `timestamp`, `total` so far.
    func renderDropped(_ count: UInt64, total: UInt64, at timestamp: Double) throws(MotionError) {
        try writer.writeEvent(
            type: "dropped", timestamp: timestamp,
            fields: [("count", .number(Double(count))), ("total", .number(Double(total)))])
    }

    /// The metadata and header, if no record has been rendered.
    func finish() throws(MotionError) {
        try writer.flush()
    }
}
