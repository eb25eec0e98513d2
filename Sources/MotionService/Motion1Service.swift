import Motion
import MotionAlgorithms
import MotionCore
import MotionDBus
import MotionProtocol
import MotionIIO
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `org.swiftmotion.Motion1` served from the service's `MotionManager`, on the D-Bus loop's thread: devices, and
/// streams over passed pipes, one subscription each, off one shared device that runs at the fastest rate asked
/// and only while a stream or claim needs it.
///
/// Who may do what: raw samples and device motion faster than 25 Hz (``StreamRequest/highRateInterval``) need
/// root, membership in ``highRateGroup`` or polkit's high-rate action; everything else is open to every caller
/// the bus policy and polkit's claim-sensor let through. The slower raw streams of a user without root or the
/// group share one 25 Hz grid (``SharedRateGrid``). Each client and user is held to ``limits``.
final class Motion1Service {
    let connection: DBusConnection
    let manager: MotionManager
    let includeBase: Bool
    /// The group whose members may open high-rate raw streams (`motion` by default).
    let highRateGroup: String
    let limits: ServiceLimits
    let log: @Sendable (String) -> Void
    let authorizer: PolkitAuthorizer
    /// What the service records (`--history`), or `nil`.
    let history: HistoryConfiguration?

    private var streams: [UInt32: MotionStream] = [:]
    private var owners: [String: DBusPeerWatch] = [:]
    /// The 25 Hz grid of each user with slow raw streams open.
    private var grids: [UInt32: SharedRateGrid] = [:]
    /// The lines the streams share, rendered once per variant.
    private let rows = SharedRows()
    private var nextID: UInt32 = 1
    /// The history queries running.
    private var queries: [ObjectIdentifier: HistoryQuery] = [:]

    init(
        connection: DBusConnection, manager: MotionManager, includeBase: Bool, highRateGroup: String,
        limits: ServiceLimits, authorizer: PolkitAuthorizer, history: HistoryConfiguration? = nil,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.history = history
        self.limits = limits
        self.authorizer = authorizer
        self.connection = connection
        self.manager = manager
        self.includeBase = includeBase
        self.highRateGroup = highRateGroup
        self.log = log
    }

    func register() throws(MotionError) {
        try connection.addObject(
            path: Motion1Interface.path, interface: Motion1Interface.interface,
            method: { [unowned self] call throws(DBusErrorReply) in try self.handle(call) },
            property: { [unowned self] name in self.property(name) })
    }

    func property(_ name: String) -> DBusValue {
        switch name {
        case Motion1Interface.Property.version: .string(SwiftMotion.version)
        case Motion1Interface.Property.sensors: .strings(manager.availableSensors.shortNameList)
        case Motion1Interface.Property.referenceFrames: .strings(manager.availableAttitudeReferenceFrames.map(\.shortName))
        case Motion1Interface.Property.highRateInterval: .double(StreamRequest.highRateInterval)
        default: .uint32(UInt32(streams.count))
        }
    }

    func handle(_ call: DBusMethodCall) throws(DBusErrorReply) {
        switch call.member {
        case Motion1Interface.Method.listDevices: call.reply([try listDevices()])
        case Motion1Interface.Method.openStream: try open(call)
        case Motion1Interface.Method.closeStream:
            let stream = try ownStream(call)
            stream.close(because: "closed by CloseStream")
            remove(stream)
            call.reply()
        case Motion1Interface.Method.openHistory: try openHistory(call)
        case Motion1Interface.Method.streamStatistics:
            let counts = try ownStream(call).counts
            call.reply([.uint64(counts.delivered), .uint64(counts.dropped)])
        default:
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "unknown method \(call.member)")
        }
    }

    private func listDevices() throws(DBusErrorReply) -> DBusValue {
        let devices: [IIODevice]
        do {
            devices = try IIODeviceDiscovery.devices(includeBase: includeBase)
        } catch {
            throw .failed("cannot list the devices: \(error.message)")
        }
        return .array(
            elementSignature: "a{sv}",
            devices.map { device in
                var entries: [(String, DBusValue)] = [
                    ("id", .string(device.id)), ("name", .string(device.name)),
                    ("sysfs_path", .string(device.sysfsPath)),
                    ("location", .string("\(device.location.value)")),
                    ("sensors", .strings(device.sensorSet.shortNameList)),
                    ("buffered", .boolean(device.buffer != nil)),
                ]
                if let label = device.label { entries.append(("label", .string(label))) }
                if let node = device.deviceNode { entries.append(("device_node", .string(node))) }
                if let rate = device.sensors.compactMap(\.samplingFrequency).first {
                    entries.append(("sampling_frequency_hz", .double(rate.value)))
                }
                return DBusValue.properties(entries)
            })
    }

    private func ownStream(_ call: DBusMethodCall) throws(DBusErrorReply) -> MotionStream {
        guard case .uint32(let id)? = call.arguments.first else {
            throw .invalidArguments("\(call.member) takes a stream id (u)")
        }
        guard let stream = streams[id], stream.owner == call.sender else {
            throw DBusErrorReply(
                Motion1Interface.unknownStreamError, "\(call.sender) has no open stream \(id)")
        }
        return stream
    }

    private func open(_ call: DBusMethodCall) throws(DBusErrorReply) {
        guard call.arguments.count == 4, let kind = call.arguments[0].stringValue,
            case .double(let interval) = call.arguments[1], let format = call.arguments[2].stringValue,
            let options = call.arguments[3].propertyEntries
        else {
            throw .invalidArguments("OpenStream takes (s kind, d interval, s format, a{sv} options)")
        }
        let request = try StreamRequest(
            kind: kind, interval: interval, format: format, options: options, available: manager.availableSensors,
            frames: manager.availableAttitudeReferenceFrames)
        // Who the caller is, asked of the bus without waiting; then the limits, before polkit is asked (a flood
        // costs no question); then polkit's claim-sensor for every stream and the high-rate right for fast raw ones,
        // asked without blocking: the stream opens once allowed.
        claimAuthorized(call, limits: { [weak self] user throws(DBusErrorReply) in
            try self?.checkLimits(call.sender, user, request)
        }) { [weak self] user, privileged in
            guard let self else { return }
            guard request.needsHighRateRight, !privileged else {
                return self.open(call, request, user: user, onSharedGrid: !privileged && request.isRaw)
            }
            self.authorizer.check(PolkitAuthorizer.highRate, for: call.sender, user: user) { decision in
                switch decision {
                case .allowed: self.open(call, request, user: user, onSharedGrid: false)
                case .overLimit(let reason): call.fail(.limitsExceeded(reason))
                default: call.fail(self.highRateRefusal(request))
                }
            }
        }
    }

    /// Asks the bus who sent `call`, then checks `limits` for that user (before polkit is asked: a flood costs no
    /// question), then polkit's claim-sensor, all without blocking; `allowed` runs with the caller's uid and whether
    /// it has the high-rate right by root or group. A refusal at any step answers the call.
    private func claimAuthorized(
        _ call: DBusMethodCall, limits: @escaping (UInt32) throws(DBusErrorReply) -> Void,
        allowed: @escaping (_ user: UInt32, _ privileged: Bool) -> Void
    ) {
        connection.credentials(of: call.sender) { [weak self] lookup in
            guard let self else { return }
            guard case .found(let credentials) = lookup else { return call.fail(lookup.refusal(call.sender)!) }
            let user = credentials.userID
            do throws(DBusErrorReply) {
                try limits(user)
            } catch {
                return call.fail(error)
            }
            let privileged = self.inHighRateGroup(credentials)
            self.authorizer.authorizeClaim(for: call.sender, user: user) { refusal in
                if let refusal { return call.fail(refusal) }
                allowed(user, privileged)
            }
        }
    }

    /// `OpenHistory`: checked, then the limits, then polkit's claim-sensor; the answer is written by a
    /// ``HistoryQuery``. A caller without the high-rate right gets the history at most at 25 Hz.
    private func openHistory(_ call: DBusMethodCall) throws(DBusErrorReply) {
        guard let history else {
            throw DBusErrorReply(
                Motion1Interface.noHistoryError,
                "the service keeps no history: an administrator starts it with --history DIR (Docs/Service.md, "
                    + "\"History\")")
        }
        guard call.arguments.count == 4, case .double(let start) = call.arguments[0],
            case .double(let end) = call.arguments[1], let formatName = call.arguments[2].stringValue,
            let options = call.arguments[3].propertyEntries
        else {
            throw .invalidArguments("OpenHistory takes (d from, d to, s format, a{sv} options)")
        }
        guard !start.isNaN, !end.isNaN, start <= end, start < .infinity, end > -.infinity else {
            throw .invalidArguments(
                "from and to are Unix times in seconds (-inf and +inf for open ends), from at most to; got \(start) "
                    + "and \(end)")
        }
        guard let format = TraceFormat(rawValue: formatName) else {
            throw .invalidArguments("unknown format '\(StreamRequest.excerpt(formatName))': use csv or jsonl")
        }
        guard options.count <= 2 else {
            throw .invalidArguments("\(options.count) options: OpenHistory takes kind (s) and sensors (as) only")
        }
        var sensors = history.sensors
        var kind = Motion1Interface.HistoryKind.samples
        for (key, value) in options {
            switch (key, value) {
            case (Motion1Interface.OptionKey.kind, .string(let name)):
                guard let chosen = Motion1Interface.HistoryKind(rawValue: name) else {
                    throw .invalidArguments(
                        "unknown history kind '\(StreamRequest.excerpt(name))': use samples, device-motion or events")
                }
                kind = chosen
            case (Motion1Interface.OptionKey.sensors, .array("s", let names)) where names.count <= StreamRequest.maximumSensorNames:
                var chosen: SensorSet = []
                for case .string(let name) in names {
                    guard let sensor = SensorSet(shortNames: name), history.sensors.isSuperset(of: sensor) else {
                        throw DBusErrorReply(
                            Motion1Interface.unknownSensorError,
                            "the history holds \(history.sensors), not '\(StreamRequest.excerpt(name))'")
                    }
                    chosen.formUnion(sensor)
                }
                guard !chosen.isEmpty else { throw .invalidArguments("the sensors option lists no sensor") }
                sensors = chosen
            default:
                throw .invalidArguments(
                    "unknown option '\(StreamRequest.excerpt(key))' of type \(StreamRequest.excerpt(value.signature)): "
                        + "OpenHistory takes kind (s) and sensors (as, at most 3 names)")
            }
        }
        switch kind {
        case .deviceMotion where history.deviceMotion == nil:
            throw DBusErrorReply(
                Motion1Interface.noHistoryError, "the service records no device motion (motiond --history-device-motion)")
        case .events where !history.events:
            throw DBusErrorReply(Motion1Interface.noHistoryError, "the service records no events (motiond --history-events)")
        default:
            break
        }
        claimAuthorized(call, limits: { [weak self] user throws(DBusErrorReply) in
            try self?.checkHistoryLimits(user)
        }) { [weak self] user, privileged in
            guard let self else { return }
            let request = HistoryQuery.Request(
                directory: history.directory, start: start, end: end, format: format, kind: kind, sensors: sensors,
                // Events come at no rate: like orientation streams, they need no right.
                minimumInterval: privileged || kind == .events || history.interval >= StreamRequest.highRateInterval
                    ? 0 : StreamRequest.highRateInterval)
            do throws(DBusErrorReply) {
                try self.checkHistoryLimits(user)  // again: others may have started queries meanwhile
                try self.startHistory(call, request, user: user)
            } catch {
                call.fail(error)
            }
        }
    }

    private func checkHistoryLimits(_ user: UInt32) throws(DBusErrorReply) {
        let theirs = queries.values.filter { $0.user == user }.count
        if theirs >= limits.historyQueriesPerUser {
            throw .limitsExceeded(
                "uid \(user) has \(theirs) history queries running, the most one user may: read them to their end first")
        }
        if queries.count >= limits.historyQueries {
            throw .limitsExceeded("the service runs \(queries.count) history queries, its limit: try again later")
        }
    }

    private func startHistory(_ call: DBusMethodCall, _ request: HistoryQuery.Request, user: UInt32)
        throws(DBusErrorReply)
    {
        let bound = LoopBound(self, loop: connection.loop)
        let (query, clientEnd): (HistoryQuery, Int32)
        do {
            (query, clientEnd) = try HistoryQuery.start(request, owner: call.sender, user: user) { query, reason in
                bound.loop.execute {
                    bound.value.queries[ObjectIdentifier(query)] = nil
                    bound.value.log("history query of \(query.owner) ended: \(reason)")
                }
            }
        } catch where error.rawValue == EMFILE || error.rawValue == ENFILE {
            throw .limitsExceeded("the service has no file descriptor left for a history query: try again later")
        } catch {
            throw .failed("cannot create the history query's pipe: \(error)")
        }
        defer { close(clientEnd) }  // the reply carries a duplicate
        queries[ObjectIdentifier(query)] = query
        log(
            "\(call.sender) opened a history query from \(request.start) to \(request.end) as \(request.format.rawValue)"
                + (request.minimumInterval > 0 ? ", at most 25 Hz" : ""))
        call.reply([.fileDescriptor(clientEnd)])
    }

    /// Refuses a stream over the caller's, its user's or the service's limits (``ServiceLimits``).
    private func checkLimits(_ client: String, _ user: UInt32, _ request: StreamRequest) throws(DBusErrorReply) {
        let own = streams.values.filter { $0.owner == client }.count
        if own >= limits.streamsPerClient {
            throw .limitsExceeded(
                "\(client) has \(own) streams open, the most one client may: close one (CloseStream) first")
        }
        let theirs = streams.values.filter { $0.user == user }
        if theirs.count >= limits.streamsPerUser {
            throw .limitsExceeded(
                "uid \(user) has \(theirs.count) streams open, the most one user may: close one first")
        }
        let buffered = theirs.reduce(0) { $0 + $1.request.bufferLimit }
        if buffered + request.bufferLimit > limits.bufferedRecordsPerUser {
            throw .limitsExceeded(
                "uid \(user)'s streams buffer \(buffered) records; \(request.bufferLimit) more would pass the "
                    + "\(limits.bufferedRecordsPerUser) one user may have buffered: ask a smaller buffer option, "
                    + "or close a stream")
        }
        if streams.count >= limits.streams {
            throw .limitsExceeded("the service has \(streams.count) streams open, its limit: try again later")
        }
    }

    private func open(_ call: DBusMethodCall, _ request: StreamRequest, user: UInt32, onSharedGrid: Bool) {
        do throws(DBusErrorReply) {
            try checkLimits(call.sender, user, request)  // again: others may have opened streams meanwhile
            try openAuthorized(call, request, user: user, onSharedGrid: onSharedGrid)
        } catch {
            call.fail(error)
        }
    }

    private func openAuthorized(
        _ call: DBusMethodCall, _ request: StreamRequest, user: UInt32, onSharedGrid: Bool
    ) throws(DBusErrorReply) {
        if let twin = streams.values.first(where: { $0.owner == call.sender && $0.request == request }) {
            throw DBusErrorReply(
                Motion1Interface.alreadyOpenError,
                "\(call.sender) already has this stream open (id \(twin.id)): read it, or close it first")
        }
        if owners[call.sender] == nil {
            let client = call.sender
            do {
                owners[client] = try connection.watchPeer(client) { [weak self] in self?.clientLeft(client) }
            } catch {
                throw .failed("cannot follow the client \(client) on the bus: \(error.message)")
            }
        }
        let id = nextID
        nextID = nextID == UInt32.max ? 1 : nextID + 1
        var grid: SharedRateGrid? = nil
        if onSharedGrid {
            grid = grids[user] ?? SharedRateGrid(interval: StreamRequest.highRateInterval)
            grids[user] = grid
        }
        let (stream, clientEnd): (MotionStream, Int32)
        do {
            (stream, clientEnd) = try MotionStream.make(
                id: id, owner: call.sender, user: user, request: request, grid: grid, rows: rows,
                stepLength: manager.configuration.stepLength)
        } catch where error.rawValue == EMFILE || error.rawValue == ENFILE {
            throw .limitsExceeded("the service has no file descriptor left for a stream: try again later")
        } catch {
            throw .failed("cannot create the stream's pipe: \(error)")
        }
        defer { close(clientEnd) }  // the reply carries a duplicate
        streams[id] = stream
        let bound = LoopBound(self, loop: connection.loop)
        stream.start(manager) { stream, reason in
            bound.loop.execute {
                let service = bound.value
                service.log("stream \(stream.id) (\(stream.request.kind.rawValue)) of \(stream.owner) ended: \(reason)")
                service.remove(stream)
            }
        }
        log(
            "\(call.sender) opened stream \(id): \(request.kind.rawValue) every \(request.interval) s as "
                + request.format.rawValue + (grid == nil ? "" : ", on uid \(user)'s 25 Hz grid"))
        call.reply([.fileDescriptor(clientEnd), .uint32(id)])
    }

    /// Root, or a member of the high-rate group (the groups the bus reports for the caller).
    private func inHighRateGroup(_ credentials: PeerCredentials) -> Bool {
        if credentials.userID == 0 { return true }
        guard let group = getgrnam(highRateGroup) else { return false }
        return credentials.groupIDs.contains(group.pointee.gr_gid)
    }

    private func highRateRefusal(_ request: StreamRequest) -> DBusErrorReply {
        .accessDenied(
            "\(request.kind.rawValue) faster than 25 Hz (an interval below \(StreamRequest.highRateInterval) s; "
                + "asked \(request.interval) s) needs membership in the group '\(highRateGroup)', root, or polkit's "
                + "\(PolkitAuthorizer.highRate): motion data at high rates can reveal typing and speech. Ask for an "
                + "interval of \(StreamRequest.highRateInterval) s or more, or have an administrator run "
                + "'usermod --append --groups \(highRateGroup) USER'")
    }

    private func remove(_ stream: MotionStream) {
        guard streams[stream.id] === stream else { return }
        streams[stream.id] = nil
        if !streams.values.contains(where: { $0.owner == stream.owner }) { owners[stream.owner] = nil }
        if !streams.values.contains(where: { $0.user == stream.user && $0.grid != nil }) { grids[stream.user] = nil }
    }

    private func clientLeft(_ client: String) {
        for stream in streams.values where stream.owner == client {
            stream.close(because: "the client left the bus")
        }
        owners[client] = nil
    }

    /// Closes every stream: the service is stopping.
    func shutdown() {
        for query in queries.values { query.cancel() }
        for stream in streams.values { stream.close(because: "the service is stopping") }
        owners.removeAll()
    }
}
