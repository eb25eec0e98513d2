import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// One open stream: a subscription of the service's `MotionManager`, written as text lines to the client's end
/// of a socket pair.
///
/// The subscription has its own bounded buffer (``StreamRequest/bufferLimit`` records, newest kept), so a client
/// that stops reading never slows the others nor grows the service's memory: its records are dropped, and the
/// next line it reads after a gap is a `dropped` event with the count (JSON Lines; a `# event:` comment line in
/// CSV). The socket is written without blocking; a full socket waits, at no cost, until the client reads
/// (`Reactor.wait(writable:)`).
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
    private let socket: Int32
    private let state = LockedState(State())

    private struct State {
        var delivered: UInt64 = 0
        var task: Task<Void, Never>?
        var closeReason: String?
        /// The subscription's drop count, read live (it grows while the writer waits for the client).
        var droppedCount: (@Sendable () -> Int)?
    }

    /// The send buffer asked for each stream's socket, in bytes.
    static let socketBufferBytes: Int32 = 128 * 1024

    /// Records written to the socket so far, and records dropped because the client did not keep up.
    var counts: (delivered: UInt64, dropped: UInt64) {
        let (delivered, dropped) = state.withLock { ($0.delivered, $0.droppedCount) }
        return (delivered, UInt64(dropped?() ?? 0))
    }

    private init(
        id: UInt32, owner: String, user: UInt32, request: StreamRequest, grid: SharedRateGrid?, socket: Int32
    ) {
        self.id = id
        self.owner = owner
        self.user = user
        self.request = request
        self.grid = grid
        self.socket = socket
    }

    /// Creates the socket pair; returns the stream and the client's end (the caller passes it, then closes it).
    static func make(
        id: UInt32, owner: String, user: UInt32, request: StreamRequest, grid: SharedRateGrid?
    ) throws(SystemErrno) -> (MotionStream, Int32) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw SystemErrno.current()
        }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        shutdown(pair[0], Int32(SHUT_RD))
        // What may wait in the kernel for a slow reader: 128 KiB asked (Linux doubles it, and counts each write's
        // overhead): about 340 records written one by one; beyond that, records wait in the stream's bounded
        // buffer, then are dropped.
        var size: Int32 = Self.socketBufferBytes
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        return (
            MotionStream(id: id, owner: owner, user: user, request: request, grid: grid, socket: pair[0]), pair[1]
        )
    }

    /// Starts writing; `ended` runs once, off the loop, with why the stream ended.
    ///
    /// The stream's task prefers the device's thread (`IIOCapture.executor`), on which the manager's producer
    /// runs: the producer's delivery resumes it there, after the batch, with no other thread to wake (a stream's
    /// work per record is short: render the line, one non-blocking `send`).
    func start(_ manager: MotionManager, ended: @escaping @Sendable (MotionStream, String) -> Void) {
        let task = Task(executorPreference: IIOCapture.executor) { [self] in
            let reason = await run(manager)
            Reactor.shared.forget(socket)
            Glibc.close(socket)
            ended(self, state.withLock { $0.closeReason } ?? reason)
        }
        state.withLock { $0.task = task }
    }

    /// Ends the stream (the socket is closed once its task has stopped), giving `reason` for the log.
    func close(because reason: String) {
        let task = state.withLock { state -> Task<Void, Never>? in
            if state.closeReason == nil { state.closeReason = reason }
            return state.task
        }
        task?.cancel()
    }

    private var metadata: TraceMetadata {
        var metadata = TraceMetadata()
        metadata["generator"] = "motiond"
        metadata["stream"] = "\(request.kind.rawValue) \(id)"
        metadata["clock"] = "boottime"
        switch request.kind {
        case .samples, .deviceMotion: metadata["update_interval_s"] = "\(request.interval)"
        case .shake, .orientation: break
        }
        if request.kind == .deviceMotion {
            metadata["frame"] = request.frame.shortName
            metadata["quaternion"] = "scalar first, device to reference: v_ref = q v_device q*"
        }
        return metadata
    }

    private func run(_ manager: MotionManager) async -> String {
        let policy = MotionBufferingPolicy.bufferingNewest(request.bufferLimit)
        // On a shared grid: every device sample (the device still asked for this stream's rate), kept when on the
        // grid, then thinned to this stream's interval.
        var gate = UpdateIntervalGate(interval: grid == nil ? 0 : request.interval)
        let admit = { [grid] (timestamp: Double) -> Bool in
            guard let grid else { return true }
            return grid.admits(timestamp) && gate.admit(at: timestamp)
        }
        do throws(MotionError) {
            switch request.kind {
            case .samples:
                let writer = TraceWriter(format: request.format, sensors: request.sensors, metadata: metadata)
                let updates =
                    grid == nil
                    ? manager.sampleUpdates(sensors: request.sensors, interval: request.interval, bufferingPolicy: policy)
                    : manager.sampleUpdates(
                        sensors: request.sensors, everySampleAskingRateOf: request.interval, bufferingPolicy: policy)
                return try await pump(
                    updates, writer, timestamp: \.timestamp, admit: admit
                ) { sample, writer throws(MotionError) in try writer.write(sample) }
            case .deviceMotion:
                let columns = OutputRecords.deviceMotionColumns
                let writer = try TraceWriter(
                    format: request.format, recordType: "attitude", columns: columns, metadata: metadata)
                var values = [Double](repeating: 0, count: columns.count)
                return try await pump(
                    grid == nil
                        ? manager.deviceMotionUpdates(
                            using: request.frame, interval: request.interval, bufferingPolicy: policy)
                        : manager.deviceMotionUpdates(
                            using: request.frame, everySampleAskingRateOf: request.interval, bufferingPolicy: policy),
                    writer, timestamp: \.timestamp, admit: admit
                ) { motion, writer throws(MotionError) in
                    OutputRecords.fill(&values, with: motion, all: true)
                    try writer.write(recordAt: motion.timestamp, values: values)
                }
            case .shake:
                let writer = TraceWriter(format: .jsonl, sensors: [], metadata: metadata)
                return try await pump(manager.shakeEvents(bufferingPolicy: policy), writer, timestamp: \.timestamp) {
                    event, writer throws(MotionError) in
                    try writer.writeEvent(type: "shake", timestamp: event.timestamp, fields: OutputRecords.fields(of: event))
                }
            case .orientation:
                let writer = TraceWriter(format: .jsonl, sensors: [], metadata: metadata)
                let names = request.iioSensorProxyNames
                return try await pump(
                    manager.deviceOrientationChanges(bufferingPolicy: policy), writer, timestamp: \.timestamp
                ) { change, writer throws(MotionError) in
                    for report in OutputRecords.reports(of: change, iioSensorProxyNames: names) {
                        try writer.writeEvent(
                            type: report.type, timestamp: change.timestamp,
                            fields: [(report.type, .string(report.value)), ("previous", .string(report.previous))])
                    }
                }
            }
        } catch {
            return "error: \(error)"
        }
    }

    /// Renders each update that `admit` keeps (by its timestamp) with `render` and sends the lines; returns why it
    /// ended.
    private func pump<Element: Sendable>(
        _ updates: MotionUpdates<Element>, _ writer: TraceWriter, timestamp: (Element) -> Double,
        admit: (Double) -> Bool = { _ in true }, _ render: (Element, TraceWriter) throws(MotionError) -> Void
    ) async throws(MotionError) -> String {
        var reported = 0
        state.withLock { $0.droppedCount = { updates.droppedCount } }
        var iterator = updates.makeAsyncIterator()
        while let element = try await iterator.next() {
            guard admit(timestamp(element)) else { continue }
            let dropped = updates.droppedCount
            if dropped > reported {
                // Before the record that follows the gap: how many records this client lost, at that record's time.
                try writer.writeEvent(
                    type: "dropped", timestamp: timestamp(element),
                    fields: [("count", .number(Double(dropped - reported))), ("total", .number(Double(dropped)))])
                reported = dropped
            }
            try render(element, writer)
            if let ended = await send(writer.takeWrittenBytes()) { return ended }
            state.withLock { $0.delivered += 1 }
        }
        try writer.flush()
        if let ended = await send(writer.takeWrittenBytes()) { return ended }
        return "the source ended"
    }

    /// Writes all of `bytes`; `nil` when done, else why the stream must end.
    private func send(_ bytes: [UInt8]) async -> String? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBufferPointer { buffer in
                Glibc.send(socket, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                offset += written
                continue
            }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN:
                // The client is not reading: wait until it does. The subscription's buffer drops meanwhile.
                do { try await Reactor.shared.wait(writable: socket) } catch { return "closed" }
            case EPIPE, ECONNRESET: return "the client closed its end"
            default: return "write failed: \(SystemErrno(code))"
            }
        }
        return Task.isCancelled ? "closed" : nil
    }
}
