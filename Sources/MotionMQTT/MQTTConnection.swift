internal import CMosquitto
package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Where and how to reach an MQTT broker.
package struct MQTTOptions: Sendable {
    /// The broker's host name or address, and its port (1883 for `mqtt://`, 8883 for `mqtts://` by default).
    package var host: String
    package var port: Int
    /// TLS (`mqtts://`): the CA certificate file that verifies the broker, and the client's certificate and key
    /// files when the broker asks for them.
    package var tls: Bool = false
    package var caFile: String?
    package var certificateFile: String?
    package var keyFile: String?
    /// The user name and password, or `nil` for none.
    package var username: String?
    package var password: String?
    /// The client id the broker sees.
    package var clientID: String
    /// Seconds between keep-alive pings.
    package var keepAlive: Int = 30
    /// The last will: published (retained, QoS 1) by the broker when the connection is lost without a goodbye.
    package var will: (topic: String, payload: [UInt8])?

    package init(host: String, port: Int, clientID: String) {
        self.host = host
        self.port = port
        self.clientID = clientID
    }

    /// Parses `mqtt://HOST[:PORT]` or `mqtts://HOST[:PORT]`.
    /// - Throws: `invalidArgument` naming what is wrong.
    package init(url: String, clientID: String) throws(MotionError) {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") {
            (tls, rest) = (false, url.dropFirst("mqtt://".count))
        } else if url.hasPrefix("mqtts://") {
            (tls, rest) = (true, url.dropFirst("mqtts://".count))
        } else {
            throw MotionError(.invalidArgument, "the broker must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT], not '\(url)'")
        }
        var host = rest
        var port = tls ? 8883 : 1883
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), number >= 1, number <= 65535 else {
                throw MotionError(.invalidArgument, "the broker's port must be 1 to 65535 in '\(url)'")
            }
            host = rest[..<colon]
            port = number
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty, !host.contains("/") else {
            throw MotionError(.invalidArgument, "the broker's host is missing in '\(url)'")
        }
        self.init(host: String(host), port: port, clientID: clientID)
        self.tls = tls
    }

    /// The options a command line gives (`motionctl publish`, `motiond --publish-…`): the broker's URL, the
    /// credentials with the password read from its file (``PasswordFile``), and the TLS files.
    package init(
        url: String, clientID: String, username: String?, passwordFile: String?, caFile: String?,
        certificateFile: String?, keyFile: String?
    ) throws(MotionError) {
        try self.init(url: url, clientID: clientID)
        self.username = username
        password = try passwordFile.map(PasswordFile.read)
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}

/// One connection to an MQTT broker through libmosquitto, confined to one thread: every call, and the callbacks
/// (which only record events, returned by ``wait(for:milliseconds:)``), happen on the thread that made it.
final class MQTTConnection {
    enum Event: Equatable {
        /// The broker accepted the connection.
        case connected
        /// The broker refused it (a CONNACK code: a bad user name or password, not authorised, …).
        case refused(String)
        /// The connection ended (0: asked for).
        case disconnected(Int32)
        /// The broker acknowledged the message with this id (QoS 1: PUBACK).
        case acknowledged(Int32)
    }

    private final class Events {
        var list: [Event] = []
    }

    private static let initialised: Void = { mosquitto_lib_init() }()

    private let handle: OpaquePointer
    private let events = Events()
    private let options: MQTTOptions
    private var hasConnected = false

    init(_ options: MQTTOptions) throws(MotionError) {
        _ = Self.initialised
        self.options = options
        guard let handle = mosquitto_new(options.clientID, true, Unmanaged.passUnretained(events).toOpaque()) else {
            throw MotionError(.ioFailure, "cannot create an MQTT client (libmosquitto: out of memory)")
        }
        self.handle = handle
        mosquitto_connect_callback_set(handle) { _, context, code in
            let events = Unmanaged<Events>.fromOpaque(context!).takeUnretainedValue()
            events.list.append(code == 0 ? .connected : .refused(String(cString: mosquitto_connack_string(code))))
        }
        mosquitto_disconnect_callback_set(handle) { _, context, code in
            Unmanaged<Events>.fromOpaque(context!).takeUnretainedValue().list.append(.disconnected(code))
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            Unmanaged<Events>.fromOpaque(context!).takeUnretainedValue().list.append(.acknowledged(mid))
        }
        do throws(MotionError) {
            if let username = options.username {
                try check(mosquitto_username_pw_set(handle, username, options.password), "set the user name")
            }
            if options.tls {
                // Without a CA file, the system's CA certificates (Debian's /etc/ssl/certs).
                try check(
                    mosquitto_tls_set(
                        handle, options.caFile, options.caFile == nil ? "/etc/ssl/certs" : nil, options.certificateFile,
                        options.keyFile, nil),
                    "set up TLS (check the CA, certificate and key files)")
            }
            if let will = options.will {
                let code = will.payload.withUnsafeBytes { bytes in
                    mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, 1, true)
                }
                try check(code, "set the last will")
            }
        } catch {
            mosquitto_destroy(handle)
            throw error
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private func check(_ code: Int32, _ what: String) throws(MotionError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw MotionError(.invalidArgument, "cannot \(what): \(Self.describe(code))")
        }
    }

    /// libmosquitto's text for an error code (for `MOSQ_ERR_ERRNO`, the system's).
    static func describe(_ code: Int32) -> String {
        if code == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(code))
    }

    /// Starts connecting without blocking; the result comes as an event of ``wait(for:milliseconds:)``.
    /// - Returns: Why it could not start (a name that does not resolve, say), or `nil`.
    func connect() -> String? {
        let code =
            hasConnected
            ? mosquitto_reconnect_async(handle)
            : mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
        hasConnected = true
        return code == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(code)
    }

    /// Publishes `payload` on `topic` at QoS 1; returns the message id its acknowledgement will carry, or why it
    /// could not be sent.
    func publish(topic: String, payload: [UInt8], retain: Bool = false) -> Result<Int32, MotionError> {
        var mid: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, retain)
        }
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            return .failure(MotionError(.ioFailure, "cannot publish on \(topic): \(Self.describe(code))"))
        }
        return .success(mid)
    }

    /// Waits until the broker's socket is ready for what libmosquitto wants (to read, or to write what it queued),
    /// `wakeup` is signalled, or `milliseconds` pass; then runs libmosquitto's reading, writing and keep-alive, and
    /// returns the events that came; `lost` is the error when the connection is not (or no longer) usable.
    ///
    /// `poll`, not `mosquitto_loop`: that one uses `select`, which refuses descriptors from 1024 on (a service with
    /// many clients, a fleet in one process).
    func wait(for wakeup: Wakeup, milliseconds: Int32) -> (events: [Event], lost: String?) {
        var descriptors = [pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)]
        let socket = mosquitto_socket(handle)
        if socket >= 0 {
            let write = mosquitto_want_write(handle) ? Int16(POLLOUT) : 0
            descriptors.append(pollfd(fd: socket, events: Int16(POLLIN) | write, revents: 0))
        }
        _ = poll(&descriptors, nfds_t(descriptors.count), max(0, milliseconds))
        if descriptors[0].revents != 0 { wakeup.clear() }
        var code = MOSQ_ERR_SUCCESS.rawValue
        if socket >= 0 {
            let ready = descriptors[1].revents
            if ready & Int16(POLLIN | POLLHUP | POLLERR) != 0 { code = mosquitto_loop_read(handle, 1) }
            if code == MOSQ_ERR_SUCCESS.rawValue && ready & Int16(POLLOUT) != 0 { code = mosquitto_loop_write(handle, 1) }
        }
        if code == MOSQ_ERR_SUCCESS.rawValue { code = mosquitto_loop_misc(handle) }
        let taken = events.list
        events.list.removeAll()
        return (taken, code == MOSQ_ERR_SUCCESS.rawValue ? nil : Self.describe(code))
    }

    /// Writes what libmosquitto has queued, for at most `milliseconds`.
    private func flush(within milliseconds: Int32) {
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        while mosquitto_want_write(handle) {
            let socket = mosquitto_socket(handle)
            let now = monotonicNanoseconds()
            guard socket >= 0, now < deadline else { return }
            var writable = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            guard poll(&writable, 1, Int32((deadline - now) / 1_000_000) + 1) == 1,
                mosquitto_loop_write(handle, 1) == MOSQ_ERR_SUCCESS.rawValue
            else { return }
        }
    }

    /// Why the connection attempt failed, when it has: no socket left, or a socket the peer hung up or that has an
    /// error. libmosquitto does not notice a refused connection while it makes a TLS connection (it waits for a
    /// handshake that never comes); this does.
    var connectionFailure: String? {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return "the connection failed" }
        var check = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
        guard poll(&check, 1, 0) == 1, check.revents & Int16(POLLHUP | POLLERR) != 0 else { return nil }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
        return error != 0 ? String(cString: strerror(error)) : "the connection was refused or cut"
    }

    /// Says goodbye (the broker then does not publish the last will).
    func disconnect() {
        flush(within: 100)
        _ = mosquitto_disconnect(handle)
        flush(within: 100)
    }
}
