public import MotionCore
import MotionDBus
package import MotionProtocol
import MotionSystem
package import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

extension MotionSource {
    /// The raw samples of the motion service (`motiond`, `Docs/Service.md`): a device shared with every other
    /// program, with the same API and outputs as `MotionSource.device(_:includeBase:batchDuration:)` (MotionIIO), since device motion,
    /// shakes and orientation are computed here from the service's samples.
    ///
    /// The service's stream opens when the first subscription starts, at the subscriptions' fastest interval
    /// (every sample of the device when one needs them all: events and `interval: 0`), and reopens when that
    /// or the sensors change. Raw samples faster than 25 Hz need root or the service's high-rate group
    /// (`MotionError.Code.permissionDenied` says so). When the service is not running the subscriptions end with
    /// `MotionError.Code.deviceNotFound`; when it stops, with `MotionError.Code.disconnected`.
    /// - Parameter busAddress: The bus (`unix:path=…`); `nil` for the system bus (`DBUS_SYSTEM_BUS_ADDRESS`
    ///   when set).
    public static func service(busAddress: String? = nil) -> MotionSource {
        MotionSource(ServiceSampleProvider(busAddress: busAddress))
    }
}

/// `MotionSource.service(busAddress:)`: the motion service's raw samples.
struct ServiceSampleProvider: RightLimitedSampleProvider {
    let busAddress: String?
    var isLive: Bool { true }
    var description: String { "motion service" + (busAddress.map { " at \($0)" } ?? "") }
    func makeReader() -> any MotionSampleReader { ServiceInput(busAddress: busAddress) }
    /// 0.04 s: raw samples above 25 Hz need the service's high-rate right (`Docs/Service.md`, "Rate rights").
    var openInterval: Double { Motion1Interface.highRateInterval }
}

/// What a client asks the motion service before it subscribes.
package enum MotionServiceQuery {
    /// The period, in seconds, of the service's device for `sensors` at its current rate (`ListDevices`'
    /// `sampling_frequency_hz`; the fastest when several devices have them), or `nil` when the service does not
    /// say (not running: the subscription then reports it).
    package static func currentDeviceInterval(for sensors: SensorSet, busAddress: String? = nil) -> Double? {
        guard let client = try? ServiceClient(busAddress: busAddress),
            case .array(_, let devices)? = try? client.call(Motion1Interface.Method.listDevices).first
        else { return nil }
        var fastest: Double?
        for device in devices {
            guard let entries = device.propertyEntries else { continue }
            let properties = Dictionary(entries, uniquingKeysWith: { first, _ in first })
            guard case .array(_, let names)? = properties["sensors"],
                let rate = properties["sampling_frequency_hz"]?.doubleValue, rate > 0, rate.isFinite
            else { continue }
            let has = names.compactMap(\.stringValue).compactMap(SensorSet.init(shortNames:))
                .reduce(into: SensorSet()) { $0.formUnion($1) }
            guard !has.isDisjoint(with: sensors) else { continue }
            fastest = max(fastest ?? 0, rate)
        }
        return fastest.map { 1 / $0 }
    }

    /// Asks the service for the samples it recorded (`motiond --history`) from `start` to `end` (Unix seconds;
    /// infinite for open ends) in `format`, with `sensors` (`nil`: all it recorded); returns the read end of the
    /// pipe the answer comes on (the caller reads it to its end and closes it). A caller without the high-rate
    /// right gets the history at most at 25 Hz.
    /// - Throws: `unsupported` when the service records no history, `deviceNotFound` when it is not running,
    ///   `permissionDenied` when polkit refuses, `invalidArgument` for a range the service refuses.
    package static func openHistory(
        from start: Double, to end: Double, format: TraceFormat, kind: Motion1Interface.HistoryKind = .samples,
        sensors: SensorSet?, busAddress: String? = nil
    ) throws(MotionError) -> Int32 {
        let client = try ServiceClient(busAddress: busAddress)
        var options: [(String, DBusValue)] = sensors.map { [(Motion1Interface.OptionKey.sensors, .strings($0.shortNameList))] } ?? []
        if kind != .samples { options.append((Motion1Interface.OptionKey.kind, .string(kind.rawValue))) }
        let reply: [DBusValue]
        do {
            reply = try client.call(
                Motion1Interface.Method.openHistory,
                [.double(start), .double(end), .string(format.rawValue), .properties(options)])
        } catch {
            if let cause = error.underlying as? DBusErrorReply, cause.name == Motion1Interface.noHistoryError {
                throw MotionError(.unsupported, cause.message, underlying: error)
            }
            throw error
        }
        guard case .fileDescriptor(let descriptor)? = reply.first, descriptor >= 0 else {
            throw MotionError(.ioFailure, "the motion service's OpenHistory replied \(reply)")
        }
        return descriptor
    }
}

/// A connection to the motion service on a D-Bus loop of its own.
final class ServiceClient: Sendable {
    static let name = Motion1Interface.name
    static let path = Motion1Interface.path

    private let loop: DBusEventLoop
    private let connection: LoopBound<DBusConnection>

    init(busAddress: String?) throws(MotionError) {
        let loop = try DBusEventLoop()
        self.loop = loop
        connection = try loop.submitAndWait { () throws(MotionError) -> LoopBound<DBusConnection> in
            let connection =
                if let busAddress {
                    try DBusConnection.client(address: busAddress, on: loop)
                } else {
                    try DBusConnection.system(on: loop)
                }
            return LoopBound(connection, loop: loop)
        }
    }

    deinit {
        let connection = self.connection
        loop.execute { connection.value.close() }
        loop.stop()
    }

    /// Calls a method of the service (blocking this thread, not the loop's, for at most 10 s).
    func call(_ member: String, _ arguments: [DBusValue] = [], interface: String = ServiceClient.name)
        throws(MotionError) -> [DBusValue]
    {
        let connection = self.connection
        do {
            return try loop.submitAndWait { () throws(MotionError) -> [DBusValue] in
                try connection.value.call(
                    destination: Self.name, path: Self.path, interface: interface, member: member,
                    arguments: arguments, timeout: 10)
            }
        } catch where error.code == .deviceNotFound {
            throw MotionError(
                .deviceNotFound,
                "the motion service is not running (\(Self.name) has no owner on the bus): start it "
                    + "(systemctl start motiond, Docs/Service.md), or read the device directly",
                underlying: error)
        }
    }

    /// The sensors the service's devices have.
    func sensors() throws(MotionError) -> SensorSet {
        let reply = try call(
            "Get", [.string(Self.name), .string(Motion1Interface.Property.sensors)],
            interface: "org.freedesktop.DBus.Properties")
        guard case .variant(.array(_, let names))? = reply.first else { return [] }
        return names.reduce(into: SensorSet()) { set, name in
            if let text = name.stringValue, let sensor = SensorSet(shortNames: text) { set.formUnion(sensor) }
        }
    }
}

/// The service's samples stream, read like a device: opened on demand, reopened when the wanted interval or
/// sensors change, read without blocking (the task waits on the reactor for the stream's descriptor). Used by
/// one producer at a time (`MotionSampleReader`), hence `@unchecked Sendable`.
final class ServiceInput: MotionSampleReader, @unchecked Sendable {
    let busAddress: String?
    /// The connection, made at the first call; locked: ``availableSensors()`` may come from any thread.
    private let client = LockedState<ServiceClient?>(nil)
    private var stream: Int32 = -1
    private var openedFor: (interval: Double, sensors: SensorSet)?
    /// The stream's CSV header line, once received.
    private var header: [UInt8]?
    private var pendingBytes: [UInt8] = []
    private var batch: [MotionSample] = []
    private var nextInBatch = 0
    private var lastTimestamp = -Double.infinity

    init(busAddress: String?) {
        self.busAddress = busAddress
    }

    deinit { close() }

    /// The sensors the service has (a call on the bus); empty when it cannot be asked.
    func availableSensors() -> SensorSet {
        (try? connectedClient().sensors()) ?? []
    }

    /// The reactor's thread: the task that reads wakes there when the stream has data.
    var preferredExecutor: (any TaskExecutor)? { Reactor.shared }

    func next(_ demand: SourceDemand) -> SampleSourceStep {
        nextAtHand(fastestInterval: demand.fastestInterval, sensors: demand.sensors).map { .sample($0) } ?? .wait
    }

    func wait(_ demand: SourceDemand) async throws(MotionError) {
        try await fetch(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
    }

    /// Dropped: stale once the stream has closed.
    func putBack(_ sample: MotionSample) {}

    /// Closes the stream; the next wait opens it again.
    func pause() { close() }

    private func connectedClient() throws(MotionError) -> ServiceClient {
        try client.withLock { (client) throws(MotionError) -> ServiceClient in
            if let client { return client }
            let connected = try ServiceClient(busAddress: busAddress)
            client = connected
            return connected
        }
    }

    /// The next sample of the current batch, or `nil` (the stream is closed when the wanted interval or sensors
    /// changed, to reopen at the next ``fetch(fastestInterval:sensors:)``).
    func nextAtHand(fastestInterval interval: Double, sensors: SensorSet) -> MotionSample? {
        if let openedFor, openedFor.interval != interval || openedFor.sensors != sensors { close() }
        guard nextInBatch < batch.count else { return nil }
        defer { nextInBatch += 1 }
        return batch[nextInBatch]
    }

    /// Waits for the next samples, opening the stream if needed.
    func fetch(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) {
        while nextInBatch >= batch.count {
            if stream < 0 { try open(interval: interval, sensors: sensors) }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = buffer.withUnsafeMutableBytes { read(stream, $0.baseAddress, $0.count) }
            if count > 0 {
                pendingBytes += buffer[..<count]
                try parseLines()
                continue
            }
            if count == 0 {
                close()
                throw MotionError(.disconnected, "the motion service ended the stream (it stopped or restarted)")
            }
            let code = errno
            guard code == EAGAIN || code == EINTR else {
                close()
                throw MotionError(.ioFailure, "reading the motion service's stream failed", underlying: SystemErrno(code))
            }
            do {
                _ = try await Reactor.shared.wait(readable: [stream])
            } catch {
                throw MotionError(.cancelled, "reading the motion service's stream was cancelled")
            }
        }
    }

    private func open(interval: Double, sensors: SensorSet) throws(MotionError) {
        let wanted = sensors.isEmpty ? SensorSet.all : sensors
        let available = try connectedClient().sensors()
        let chosen = wanted.intersection(available)
        guard !chosen.isEmpty else {
            throw MotionError(
                .deviceNotFound, "the motion service has no \(wanted) sensor; it has \(available.isEmpty ? "none" : "\(available)")")
        }
        // Every sample of the device: an interval shorter than any device's period.
        let asked = interval > 0 ? interval : 0.0005
        let reply = try connectedClient().call(
            Motion1Interface.Method.openStream,
            [
                .string(Motion1Interface.StreamKind.samples.rawValue), .double(asked), .string(TraceFormat.csv.rawValue),
                .properties([(Motion1Interface.OptionKey.sensors, .strings(chosen.shortNameList))]),
            ])
        guard case .fileDescriptor(let descriptor)? = reply.first, descriptor >= 0 else {
            throw MotionError(.ioFailure, "the motion service's OpenStream replied \(reply)")
        }
        stream = descriptor
        // Non-blocking: the descriptor is ours alone (the service closed its copy of the read end).
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        openedFor = (interval, sensors)
        header = nil
        pendingBytes = []
    }

    /// Turns the complete lines received into samples, through the trace reader (`TraceReader`, the canonical
    /// format's one parser, with its checks and errors): the stream's header line, kept from its start, is put
    /// before each batch of rows; `#` lines (metadata, a `dropped` event) are comments to it.
    private func parseLines() throws(MotionError) {
        guard let lastNewline = pendingBytes.lastIndex(of: UInt8(ascii: "\n")) else { return }
        var lines = pendingBytes[...lastNewline]
        pendingBytes.removeFirst(lastNewline + 1)
        if header == nil {
            var start = lines.startIndex
            while let newline = lines[start...].firstIndex(of: UInt8(ascii: "\n")) {
                if lines[start] != UInt8(ascii: "#") {
                    header = Array(lines[start...newline])
                    lines = lines[(newline + 1)...]
                    break
                }
                start = newline + 1
            }
            guard header != nil else { return }  // only metadata so far
        }
        let reader = try TraceReader(bytes: header! + lines, name: "the motion service's stream")
        var samples: [MotionSample] = []
        while var sample = try reader.next() {
            sample.timestamp = max(sample.timestamp, lastTimestamp)
            lastTimestamp = sample.timestamp
            samples.append(sample)
        }
        batch = samples
        nextInBatch = 0
    }

    /// Closes the stream (the service sees its pipe closed and ends it); the next fetch reopens it.
    func close() {
        if stream >= 0 {
            Reactor.shared.forget(stream)  // before the close: the number may be reused by another wait
            Glibc.close(stream)
        }
        stream = -1
        openedFor = nil
        batch = []
        nextInBatch = 0
    }
}
