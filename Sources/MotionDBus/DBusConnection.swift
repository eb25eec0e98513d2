internal import CSystemd
package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A connection to a D-Bus bus through sd-bus, served by a ``DBusEventLoop``: objects with their interfaces,
/// a well-known name, signals (broadcast or to one peer) and watches on peers that may leave.
///
/// Create it, and use it, only on its loop's thread (sd-bus is not thread-safe); hold it in a ``LoopBound``
/// to reach it from elsewhere.
package final class DBusConnection {
    /// The loop that serves the connection.
    package let loop: DBusEventLoop
    let bus: OpaquePointer
    private var objects: [ObjectRegistration] = []
    private var nameLost: SignalMatch?

    /// Connects to the system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else `/run/dbus/system_bus_socket`
    /// (`sd_bus_open_system`). The loop ends if the bus goes away.
    /// Throws `ioFailure` naming the address when the bus cannot be reached.
    package static func system(on loop: DBusEventLoop) throws(MotionError) -> DBusConnection {
        loop.preconditionInEventLoop()
        var bus: OpaquePointer?
        let status = sd_bus_open_system(&bus)
        guard status >= 0, let bus else {
            let address = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
                ?? "unix:path=/run/dbus/system_bus_socket"
            throw MotionError(
                .ioFailure,
                "cannot connect to the D-Bus system bus at \(address): is dbus-daemon running? "
                    + "(DBUS_SYSTEM_BUS_ADDRESS selects another bus)",
                underlying: SystemErrno(-status))
        }
        return try DBusConnection(bus: bus, loop: loop)
    }

    /// Connects, as a client, to the bus at `address` (`unix:path=…`), such as a test's private bus.
    /// Throws `ioFailure` naming the address when it cannot be reached.
    package static func client(address: String, on loop: DBusEventLoop) throws(MotionError) -> DBusConnection {
        loop.preconditionInEventLoop()
        var bus: OpaquePointer?
        var status = sd_bus_new(&bus)
        if status >= 0 { status = sd_bus_set_address(bus, address) }
        if status >= 0 { status = sd_bus_set_bus_client(bus, 1) }
        if status >= 0 { status = sd_bus_negotiate_fds(bus, 1) }
        if status >= 0 { status = sd_bus_start(bus) }
        guard status >= 0, let bus else {
            sd_bus_unref(bus)
            throw MotionError(
                .ioFailure, "cannot connect to the D-Bus bus at \(address)", underlying: SystemErrno(-status))
        }
        return try DBusConnection(bus: bus, loop: loop)
    }

    private init(bus: OpaquePointer, loop: DBusEventLoop) throws(MotionError) {
        self.bus = bus
        self.loop = loop
        let status = sd_bus_attach_event(bus, loop.context.event, 0)
        guard status >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw MotionError(.ioFailure, "cannot attach the bus to its event loop", underlying: SystemErrno(-status))
        }
        sd_bus_set_exit_on_disconnect(bus, 1)
    }

    deinit {
        close()
    }

    /// Flushes what is queued, leaves the bus (names are released) and frees every object.
    package func close() {
        guard !closed else { return }
        closed = true
        nameLost = nil
        ownerChanges = nil
        peerWatchers.removeAll()
        sd_bus_flush_close_unref(bus)
        objects.removeAll()
    }
    private var closed = false

    /// The method calls to this connection's objects that are held, not yet answered (a claim waiting for its
    /// first value, a call waiting for polkit): each keeps its message, and the descriptors a caller attached to
    /// it, until it is answered.
    let heldCalls = HeldCalls()

    /// The most calls this connection holds unanswered; a call beyond is refused at once with `LimitsExceeded`, so
    /// that held messages, up to 16 descriptors each on the system bus, never take the process's last descriptors.
    package var maximumHeldCalls: Int {
        get { heldCalls.limit }
        set { heldCalls.limit = newValue }
    }

    /// This connection's unique name, such as `:1.42`.
    package var uniqueName: String {
        var name: UnsafePointer<CChar>? = nil
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Takes the well-known `name` (call after adding the objects, so that no client sees the name without
    /// them). `replaceExisting` takes it from an owner that allows replacement (`--replace`);
    /// `allowReplacement` lets a later owner take it from us, after which `onLost` runs.
    /// Throws `permissionDenied` when the bus policy refuses, `unsupported` when another process owns it.
    package func requestName(
        _ name: String, replaceExisting: Bool = false, allowReplacement: Bool = false,
        onLost: @escaping () -> Void = {}
    ) throws(MotionError) {
        if nameLost == nil {
            nameLost = try? SignalMatch(bus: bus, member: "NameLost") { [weak self] message in
                guard let self, let message, case .string(let lost)? = try? Message.readAll(message).first,
                    let handler = self.nameLostHandlers.removeValue(forKey: lost)
                else { return }
                handler()
            }
        }
        nameLostHandlers[name] = onLost
        var flags: UInt64 = 0
        if replaceExisting { flags |= UInt64(swift_motion_name_replace_existing()) }
        if allowReplacement { flags |= UInt64(swift_motion_name_allow_replacement()) }
        let status = sd_bus_request_name(bus, name, flags)
        if status >= 0 { return }
        switch -status {
        case EEXIST, EALREADY:
            let owner = ownerDescription(of: name)
            // With --replace, the owner does not allow replacement: iio-sensor-proxy 3.0 (Debian 12) owns its name
            // so; 3.1 and later, and motiond, allow it.
            throw MotionError(
                .unsupported,
                replaceExisting
                    ? "the bus name \(name) is owned by \(owner), which does not let another process take it over "
                        + "(iio-sensor-proxy 3.0 does not; 3.1 and later, and motiond, do): --replace cannot take it; "
                        + "stop that process first (for iio-sensor-proxy: systemctl stop iio-sensor-proxy, and "
                        + "systemctl mask iio-sensor-proxy to keep it stopped), then start again"
                    : "the bus name \(name) is owned by \(owner); stop it, or take the name over with --replace "
                        + "(iio-sensor-proxy 3.1 and later, and motiond, allow it; iio-sensor-proxy 3.0 does not)",
                underlying: SystemErrno(-status))
        case EACCES, EPERM:
            throw MotionError(
                .permissionDenied,
                "the bus policy does not allow this user to own \(name): install its D-Bus policy file "
                    + "(Docs/Service.md) or run as the service's user", underlying: SystemErrno(-status))
        default:
            throw MotionError(.ioFailure, "cannot take the bus name \(name)", underlying: SystemErrno(-status))
        }
    }
    private var nameLostHandlers: [String: () -> Void] = [:]

    /// `/usr/sbin/iio-sensor-proxy (pid 1234)` for the owner of `name`, from the bus and `/proc` (its command name,
    /// 15 characters at most, when its executable cannot be read); `another process` when neither can be had.
    private func ownerDescription(of name: String) -> String {
        var creds: OpaquePointer?
        let mask = swift_motion_creds_pid() | swift_motion_creds_exe() | swift_motion_creds_comm()
            | swift_motion_creds_augment()
        guard sd_bus_get_name_creds(bus, name, mask, &creds) >= 0 else { return "another process" }
        defer { sd_bus_creds_unref(creds) }
        var pid: pid_t = 0
        var text: UnsafePointer<CChar>? = nil
        var process = "another process"
        if sd_bus_creds_get_exe(creds, &text) >= 0, let text {
            process = String(cString: text)
        } else if sd_bus_creds_get_comm(creds, &text) >= 0, let text {
            process = String(cString: text)
        }
        return process + (sd_bus_creds_get_pid(creds, &pid) >= 0 ? " (pid \(pid))" : "")
    }

    /// Serves `interface` at `path`: `method` handles its calls (reply with ``DBusMethodCall/reply(_:)``, now or
    /// later on the loop, or throw ``DBusErrorReply``), `property` gives a property's current value by name.
    /// Unknown methods and properties are answered by sd-bus (`UnknownMethod`, `UnknownProperty`).
    package func addObject(
        path: String, interface: DBusInterface,
        method: @escaping (DBusMethodCall) throws(DBusErrorReply) -> Void,
        property: @escaping (String) -> DBusValue
    ) throws(MotionError) {
        let registration = ObjectRegistration(
            interface: interface, heldCalls: heldCalls, method: method, property: property)
        var slot: OpaquePointer?
        let status = sd_bus_add_object_vtable(
            bus, &slot, path, interface.name, registration.vtable,
            Unmanaged.passUnretained(registration).toOpaque())
        guard status >= 0 else {
            throw MotionError(
                .invalidArgument, "cannot serve \(interface.name) at \(path)", underlying: SystemErrno(-status))
        }
        registration.slot = slot
        objects.append(registration)
    }

    /// Sends a signal; to `destination` only (a unique name) or, when `nil`, to every matching listener.
    package func emitSignal(
        path: String, interface: String, member: String, arguments: [DBusValue], destination: String? = nil
    ) throws(MotionError) {
        var message: OpaquePointer?
        var status = sd_bus_message_new_signal(bus, &message, path, interface, member)
        defer { sd_bus_message_unref(message) }
        if status >= 0, let destination { status = sd_bus_message_set_destination(message, destination) }
        if status >= 0 { status = Message.append(arguments, to: message) }
        if status >= 0 { status = sd_bus_send(bus, message, nil) }
        if status < 0 {
            throw MotionError(
                .ioFailure, "cannot send \(interface).\(member) from \(path)", underlying: SystemErrno(-status))
        }
    }

    /// Sends `org.freedesktop.DBus.Properties.PropertiesChanged` for `interface` at `path` with the new values
    /// of `changed`; to `destination` only, or to every listener when `nil`.
    package func emitPropertiesChanged(
        path: String, interface: String, changed: [(String, DBusValue)], destination: String? = nil
    ) throws(MotionError) {
        try emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(interface), .properties(changed), .strings([])], destination: destination)
    }

    /// Calls a method and waits (at most `timeout` seconds, blocking the loop's thread) for its reply: a
    /// client's call. File descriptors in the reply are duplicated: the caller owns and closes them.
    /// An error reply throws `MotionError` with the D-Bus error's name and message (`permissionDenied` for
    /// `AccessDenied`, `invalidArgument` for `InvalidArgs`, `deviceNotFound` for a service that is not running,
    /// `ioFailure` otherwise) and the ``DBusErrorReply`` as its cause.
    package func call(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Double = 25
    ) throws(MotionError) -> [DBusValue] {
        let what = "\(interface).\(member) on \(destination)"
        let message = try methodCall(destination, path, interface, member, arguments, what: what)
        defer { sd_bus_message_unref(message) }
        var error = swift_motion_error_null()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let status = sd_bus_call(bus, message, UInt64(max(timeout, 0.001) * 1e6), &error, &reply)
        defer { sd_bus_message_unref(reply) }
        guard status >= 0 else {
            if sd_bus_error_is_set(&error) == 0 { _ = sd_bus_error_set_errno(&error, status) }
            throw Self.failure(of: error, what: what)
        }
        return try Self.values(of: reply, what: what).get()
    }

    /// A method call message, ready to send; the caller unrefs it.
    private func methodCall(
        _ destination: String, _ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue],
        what: String
    ) throws(MotionError) -> OpaquePointer? {
        var message: OpaquePointer?
        var status = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        if status >= 0 { status = Message.append(arguments, to: message) }
        guard status >= 0 else {
            sd_bus_message_unref(message)
            throw MotionError(.invalidArgument, "cannot build the call \(what)", underlying: SystemErrno(-status))
        }
        return message
    }

    /// A D-Bus error as `MotionError`: its code from the error's name, its name and message kept as the cause.
    private static func failure(of error: sd_bus_error, what: String) -> MotionError {
        let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let text = error.message.map { String(cString: $0) } ?? name
        let code: MotionError.Code =
            switch name {
            case "org.freedesktop.DBus.Error.AccessDenied": .permissionDenied
            case "org.freedesktop.DBus.Error.InvalidArgs": .invalidArgument
            case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner": .deviceNotFound
            default: .ioFailure
            }
        return MotionError(code, "\(what) failed: \(text)", underlying: DBusErrorReply(name, text))
    }

    /// The values of a reply; its file descriptors are duplicated for the caller, who owns and closes them.
    private static func values(of reply: OpaquePointer?, what: String) -> Result<[DBusValue], MotionError> {
        do {
            return .success(try Message.readAll(reply).map { value in
                guard case .fileDescriptor(let descriptor) = value else { return value }
                return .fileDescriptor(fcntl(descriptor, F_DUPFD_CLOEXEC, 3))
            })
        } catch {
            return .failure(MotionError(.ioFailure, "the reply of \(what) cannot be read", underlying: error))
        }
    }

    /// Calls a method without waiting: `completion` runs on the loop's thread with the reply's values, or with
    /// an error as ``call(destination:path:interface:member:arguments:timeout:)`` throws it (a call with no reply
    /// within `timeout` seconds fails with `TimedOut`). A service that answers slowly holds up nothing else.
    package func callAsync(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = [],
        timeout: Double = 25, completion: @escaping (Result<[DBusValue], MotionError>) -> Void
    ) {
        let what = "\(interface).\(member) on \(destination)"
        let message: OpaquePointer?
        do {
            message = try methodCall(destination, path, interface, member, arguments, what: what)
        } catch {
            completion(.failure(error))
            return
        }
        defer { sd_bus_message_unref(message) }
        let box = Unmanaged.passRetained(ClosureBox { reply in
            completion(Self.result(of: reply, what: what))
        })
        let status = sd_bus_call_async(bus, nil, message, { reply, userdata, _ in
            let box = Unmanaged<ClosureBox>.fromOpaque(userdata!)
            box.takeUnretainedValue().body(reply)
            box.release()
            return 1
        }, box.toOpaque(), UInt64(max(timeout, 0.001) * 1e6))
        if status < 0 {
            box.release()
            completion(.failure(MotionError(.ioFailure, "cannot send the call \(what)", underlying: SystemErrno(-status))))
        }
    }

    /// The values of a method reply, or its error as `MotionError`.
    private static func result(of reply: OpaquePointer?, what: String) -> Result<[DBusValue], MotionError> {
        if let error = sd_bus_message_get_error(reply), sd_bus_error_is_set(error) != 0 {
            return .failure(failure(of: error.pointee, what: what))
        }
        return values(of: reply, what: what)
    }

    /// Runs `onVanish` once when the peer `uniqueName` leaves the bus; the watch lasts while the returned value is
    /// kept.
    ///
    /// One match for every peer, whatever the number of watches: `NameOwnerChanged` from the bus, added at the
    /// first watch. A bus limits each connection's match rules (512 on the system bus), so a rule per client, as
    /// `sd_bus_track` adds, would let enough clients exhaust them. A peer watched for the first time is also looked
    /// up (`GetNameOwner`, without waiting), so one that left before its watch began is reported too.
    package func watchPeer(_ uniqueName: String, onVanish: @escaping () -> Void) throws(MotionError) -> DBusPeerWatch {
        try watchOwnerChanges()
        nextPeerWatchID &+= 1
        let id = nextPeerWatchID
        let first = peerWatchers[uniqueName] == nil
        peerWatchers[uniqueName, default: [:]][id] = onVanish
        if first {
            callAsync(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", arguments: [.string(uniqueName)], timeout: 25
            ) { [weak self] result in
                if case .failure(let error) = result, error.code == .deviceNotFound { self?.peerLeft(uniqueName) }
            }
        }
        return DBusPeerWatch(connection: self, name: uniqueName, id: id)
    }

    /// The peers watched, by unique name: each watch's `onVanish`, by its id.
    private var peerWatchers: [String: [UInt64: () -> Void]] = [:]
    private var nextPeerWatchID: UInt64 = 0
    private var ownerChanges: SignalMatch?

    private func watchOwnerChanges() throws(MotionError) {
        guard ownerChanges == nil else { return }
        do {
            ownerChanges = try SignalMatch(bus: bus, member: "NameOwnerChanged") { [weak self] message in
                guard let self, let message, let values = try? Message.readAll(message), values.count == 3,
                    case .string(let name) = values[0], case .string(let newOwner) = values[2], newOwner.isEmpty
                else { return }
                self.peerLeft(name)
            }
        } catch {
            throw MotionError(.ioFailure, "cannot watch the bus for peers leaving", underlying: error)
        }
    }

    /// The user and groups of the peer `uniqueName`, as the bus knows them (`GetConnectionCredentials`: its
    /// `UnixUserID` and `UnixGroupIDs`), asked without waiting; `completion` runs on the loop with
    /// ``PeerLookup/unknown`` when the bus cannot tell (the peer left). Remembered while the peer stays on the bus, and one question at a time per
    /// peer: a client's flood of calls costs one answer, and the loop never waits for the bus while calls (and the
    /// descriptors they may carry) pile up behind it.
    ///
    /// At most ``callsWaitingForCredentials`` calls of a peer wait for its answer; beyond, `completion` gets
    /// ``PeerLookup/tooManyWaiting`` at once.
    package func credentials(of uniqueName: String, _ completion: @escaping (PeerLookup) -> Void) {
        if let known = knownCredentials[uniqueName] { return completion(.found(known)) }
        if credentialQuestions[uniqueName] != nil {
            guard credentialQuestions[uniqueName]!.count < Self.callsWaitingForCredentials else {
                return completion(.tooManyWaiting(Self.callsWaitingForCredentials))
            }
            credentialQuestions[uniqueName]!.append(completion)
            return
        }
        do {
            try watchOwnerChanges()  // before asking, so that a peer leaving later is forgotten
        } catch {
            return completion(.unknown)
        }
        credentialQuestions[uniqueName] = [completion]
        callAsync(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials", arguments: [.string(uniqueName)], timeout: 25
        ) { [weak self] result in
            guard let self else { return }
            var credentials: PeerCredentials?
            if case .success(let values) = result, let entries = values.first?.propertyEntries {
                var user: UInt32?
                var groups: [UInt32] = []
                for (key, value) in entries {
                    switch (key, value) {
                    case ("UnixUserID", .uint32(let id)): user = id
                    case ("UnixGroupIDs", .array(_, let ids)):
                        groups = ids.compactMap { if case .uint32(let id) = $0 { id } else { nil } }
                    default: break
                    }
                }
                credentials = user.map { PeerCredentials(userID: $0, groupIDs: groups) }
            }
            // Kept while the peer is on the bus: its leaving, which the match sees after this answer, forgets it.
            if let credentials { self.knownCredentials[uniqueName] = credentials }
            let lookup = credentials.map(PeerLookup.found) ?? .unknown
            for waiting in self.credentialQuestions.removeValue(forKey: uniqueName) ?? [] { waiting(lookup) }
        }
    }

    /// Calls of one peer that may wait for its credentials (``credentials(of:_:)``).
    package static let callsWaitingForCredentials = 4

    private var knownCredentials: [String: PeerCredentials] = [:]
    private var credentialQuestions: [String: [(PeerLookup) -> Void]] = [:]

    private func peerLeft(_ name: String) {
        // The bus answers GetConnectionCredentials before it reports the peer gone: nothing is cached after this.
        knownCredentials[name] = nil
        guard let watchers = peerWatchers.removeValue(forKey: name) else { return }
        for id in watchers.keys.sorted() { watchers[id]?() }
    }

    fileprivate func endWatch(_ name: String, _ id: UInt64) {
        peerWatchers[name]?[id] = nil
        if peerWatchers[name]?.isEmpty == true { peerWatchers[name] = nil }
    }
}

/// What ``DBusConnection/credentials(of:_:)`` found.
package enum PeerLookup {
    case found(PeerCredentials)
    /// The bus could not tell (the peer left).
    case unknown
    /// This many of the peer's calls already wait for the answer.
    case tooManyWaiting(Int)

    /// The error for the caller when its credentials are not found.
    package func refusal(_ peer: String) -> DBusErrorReply? {
        switch self {
        case .found: nil
        case .unknown: .failed("the bus could not tell who \(peer) is (it left?)")
        case .tooManyWaiting(let count):
            .limitsExceeded("\(count) calls of \(peer) already wait for the bus to say who it is: wait for their answers")
        }
    }
}

/// A bus peer's user and groups (``DBusConnection/credentials(of:_:)``).
package struct PeerCredentials: Sendable, Hashable {
    package var userID: UInt32
    /// Its primary and supplementary groups, as the bus reports them.
    package var groupIDs: [UInt32]
}

/// A watch on a peer (``DBusConnection/watchPeer(_:onVanish:)``): dropping it ends the watch. Use and drop it on
/// the connection's loop.
package final class DBusPeerWatch {
    private weak var connection: DBusConnection?
    private let name: String
    private let id: UInt64

    fileprivate init(connection: DBusConnection, name: String, id: UInt64) {
        self.connection = connection
        self.name = name
        self.id = id
    }

    deinit {
        connection?.endWatch(name, id)
    }
}

/// A method call being handled: its sender, target and arguments, and the one reply it gets.
///
/// Reply exactly once, with ``reply(_:)`` or ``fail(_:)``, on the loop's thread, now or later (a claim that
/// waits for a first reading). A call dropped without a reply is answered `org.freedesktop.DBus.Error.Failed`,
/// so no client waits for ever.
package final class DBusMethodCall {
    let message: OpaquePointer
    /// The caller's unique name, such as `:1.7`.
    package let sender: String
    /// The method's name.
    package let member: String
    /// The interface called.
    package let interface: String
    /// The object path called.
    package let path: String
    /// The arguments, in order.
    package let arguments: [DBusValue]
    /// `true` once a reply (or error) has been sent.
    package private(set) var isAnswered = false

    /// The connection's count of held calls, this one among them while it lives.
    private let held: HeldCalls?

    init(message: OpaquePointer, held: HeldCalls? = nil) throws(SystemErrno) {
        self.held = held
        self.message = sd_bus_message_ref(message)
        func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
        sender = text(sd_bus_message_get_sender(message))
        member = text(sd_bus_message_get_member(message))
        interface = text(sd_bus_message_get_interface(message))
        path = text(sd_bus_message_get_path(message))
        do {
            var limits = Message.Limits.methodCall
            arguments = try Message.readAll(message, limits: &limits)
        } catch {
            sd_bus_message_unref(message)
            throw error
        }
        // Counted once whole: a call whose arguments cannot be read is never made, and its deinit never runs.
        held?.count += 1
    }

    deinit {
        if !isAnswered { fail(.failed("\(interface).\(member) was not answered (a service bug)")) }
        sd_bus_message_unref(message)
        held?.count -= 1
    }

    /// Sends the method's return values.
    package func reply(_ values: [DBusValue] = []) {
        guard !isAnswered else { return }
        isAnswered = true
        var reply: OpaquePointer?
        var status = sd_bus_message_new_method_return(message, &reply)
        if status >= 0 { status = Message.append(values, to: reply) }
        if status >= 0 { _ = sd_bus_send(nil, reply, nil) }
        sd_bus_message_unref(reply)
        if status < 0 { sendError(.failed("cannot build the reply of \(member): \(SystemErrno(-status))")) }
    }

    /// Sends an error reply.
    package func fail(_ error: DBusErrorReply) {
        guard !isAnswered else { return }
        isAnswered = true
        sendError(error)
    }

    private func sendError(_ error: DBusErrorReply) {
        var busError = swift_motion_error_null()
        _ = sd_bus_error_set(&busError, error.name, error.message)
        _ = sd_bus_reply_method_error(message, &busError)
        sd_bus_error_free(&busError)
    }
}

/// A match on a signal of the bus itself (`org.freedesktop.DBus` at `/org/freedesktop/DBus`), added without waiting
/// for the bus's answer (the bus reads it before anything sent later); removed when this value goes.
final class SignalMatch {
    private let slot: OpaquePointer?
    private let box: Unmanaged<ClosureBox>

    convenience init(bus: OpaquePointer, member: String, _ body: @escaping (OpaquePointer?) -> Void) throws(SystemErrno) {
        let box = Unmanaged.passRetained(ClosureBox(body))
        var slot: OpaquePointer?
        let status = sd_bus_match_signal_async(
            bus, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", member,
            { message, userdata, _ in
                Unmanaged<ClosureBox>.fromOpaque(userdata!).takeUnretainedValue().body(message)
                return 0
            }, nil, box.toOpaque())
        guard status >= 0 else {
            box.release()
            throw SystemErrno(-status)
        }
        self.init(slot: slot, box: box)
    }

    private init(slot: OpaquePointer?, box: Unmanaged<ClosureBox>) {
        self.slot = slot
        self.box = box
    }

    deinit {
        sd_bus_slot_unref(slot)
        box.release()
    }
}

/// How many method calls of a connection are alive, unanswered or being handled, and how many may be.
final class HeldCalls {
    var count = 0
    var limit = 128
}

/// A closure that C callbacks reach through their `userdata`.
final class ClosureBox {
    let body: (OpaquePointer?) -> Void
    init(_ body: @escaping (OpaquePointer?) -> Void) { self.body = body }
}

/// One object's interface: its vtable (with the strings it points to) and its handlers, kept alive as long as
/// the registration (sd-bus reads the vtable for the slot's life).
final class ObjectRegistration {
    let heldCalls: HeldCalls
    let method: (DBusMethodCall) throws(DBusErrorReply) -> Void
    let property: (String) -> DBusValue
    let vtable: UnsafeMutablePointer<sd_bus_vtable>
    private let count: Int
    private var strings: [UnsafeMutablePointer<CChar>] = []
    var slot: OpaquePointer?

    init(
        interface: DBusInterface, heldCalls: HeldCalls,
        method: @escaping (DBusMethodCall) throws(DBusErrorReply) -> Void, property: @escaping (String) -> DBusValue
    ) {
        self.heldCalls = heldCalls
        self.method = method
        self.property = property
        count = interface.methods.count + interface.properties.count + interface.signals.count + 2
        vtable = .allocate(capacity: count)
        vtable.initialize(repeating: sd_bus_vtable(), count: count)
        var index = 0
        func add(_ entry: sd_bus_vtable) {
            vtable[index] = entry
            index += 1
        }
        add(swift_motion_vtable_start(0))
        for entry in interface.methods {
            add(swift_motion_vtable_method(
                keep(entry.name), keep(entry.inputs.map(\.signature).joined()),
                keep(entry.outputs.map(\.signature).joined()), keepNames((entry.inputs + entry.outputs).map(\.name)),
                { message, userdata, error in
                    let registration = Unmanaged<ObjectRegistration>.fromOpaque(userdata!).takeUnretainedValue()
                    return registration.handle(message, error)
                }, swift_motion_vtable_unprivileged()))
        }
        for entry in interface.properties {
            add(swift_motion_vtable_property(
                keep(entry.name), keep(entry.signature),
                { _, _, _, name, reply, userdata, _ in
                    let registration = Unmanaged<ObjectRegistration>.fromOpaque(userdata!).takeUnretainedValue()
                    let value = registration.property(name.map { String(cString: $0) } ?? "")
                    return Message.append(value, to: reply)
                }, entry.emitsChange ? swift_motion_vtable_emits_change() : 0))
        }
        for entry in interface.signals {
            add(swift_motion_vtable_signal(
                keep(entry.name), keep(entry.arguments.map(\.signature).joined()),
                keepNames(entry.arguments.map(\.name)), 0))
        }
        add(swift_motion_vtable_end())
    }

    deinit {
        if let slot { sd_bus_slot_unref(slot) }
        vtable.deinitialize(count: count)
        vtable.deallocate()
        strings.forEach { free($0) }
    }

    private func keep(_ text: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(text)!
        strings.append(copy)
        return copy
    }

    /// Names for a method's or signal's arguments: each followed by a NUL byte, as `SD_BUS_PARAM` builds them.
    private func keepNames(_ names: [String]) -> UnsafeMutablePointer<CChar> {
        var bytes: [UInt8] = []
        for name in names { bytes += Array(name.utf8) + [0] }
        bytes.append(0)
        let copy = malloc(bytes.count)!.assumingMemoryBound(to: CChar.self)
        for (offset, byte) in bytes.enumerated() { copy[offset] = CChar(bitPattern: byte) }
        strings.append(copy)
        return copy
    }

    private func handle(_ message: OpaquePointer?, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        guard let message else { return -EINVAL }
        let call: DBusMethodCall
        do {
            call = try DBusMethodCall(message: message, held: heldCalls)
        } catch let failure {
            guard failure.rawValue == E2BIG else {
                return sd_bus_error_set(
                    error, "org.freedesktop.DBus.Error.InvalidArgs", "the call's arguments cannot be read: \(failure)")
            }
            let limits = Message.Limits.methodCall
            return sd_bus_error_set(
                error, "org.freedesktop.DBus.Error.LimitsExceeded",
                "the call's arguments exceed the service's limits: at most \(limits.values) values, and strings of at "
                    + "most \(limits.stringBytes) bytes")
        }
        guard heldCalls.count <= heldCalls.limit else {
            call.fail(.limitsExceeded(
                "the service holds \(heldCalls.limit) calls waiting for an answer, its limit: try again shortly"))
            return 1
        }
        do {
            try method(call)
        } catch let reply {
            call.fail(reply)
        }
        return 1
    }
}
