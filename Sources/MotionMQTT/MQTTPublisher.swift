import DequeModule
package import MotionCore
package import MotionStore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Sends a spool's messages to an MQTT broker in order, at QoS 1, on a thread of its own, and moves the spool's
/// cursor past each message once the broker has acknowledged it and every one before it (`Docs/History.md`,
/// "Publishing").
///
/// Nothing is lost: a message is in the spool before it may be sent, and leaves it only acknowledged. While the
/// broker is unreachable (down, refusing the password, the network gone) the spool keeps filling, and the
/// publisher tries again after 0.5 s, then twice as long each time up to 30 s, each wait scaled by a random
/// factor from 0.5 to 1.5 so that many publishers do not come back in step. After a reconnection everything not
/// acknowledged is sent again (at least once: the records' sequence numbers let receivers drop what they had).
/// At most ``window`` messages wait for their acknowledgement at once.
package final class MQTTPublisher: Sendable {
    /// Messages sent and not yet acknowledged, at most.
    package static let window = 64
    /// The first and the longest wait before trying to connect again, in seconds.
    package static let firstRetry = 0.5
    package static let longestRetry = 30.0
    /// The longest a connection attempt may take, in seconds.
    package static let connectTimeout = 30.0
    /// The longest the publisher blocks while connected, in milliseconds: libmosquitto's keep-alive runs then.
    static let housekeeping: Int32 = 1000

    static func milliseconds(_ nanoseconds: UInt64) -> Int32 { Int32(min(nanoseconds / 1_000_000, 60_000)) }

    private let spool: MessageSpool
    private let options: MQTTOptions
    /// A retained status message: `online` at each connection (the last will says `offline`).
    private let statusTopic: String?
    private let log: @Sendable (String) -> Void
    private let thread = SourceThread()
    /// Signalled by a new message in the spool and by a stop: what the publisher's thread waits for, besides the
    /// broker.
    private let wakeup: Wakeup
    private let control = LockedState(Control())
    private let finished = LockedState<CheckedContinuation<Void, Never>?>(nil)
    private let done = LockedState(false)

    private struct Control {
        var stop = false
        var drain = false
        /// Stop at once, whatever a drain asked: set by ``requestStop()``, never undone.
        var abandon = false
        var acknowledged = 0
        var connected = false
        var lastProblem: String?
        /// The run ended with messages not acknowledged (stopped without draining, or before the drain ended).
        var stoppedEarly = false
    }

    /// - Throws: `ioFailure` when the process has no file descriptor left.
    package init(
        spool: MessageSpool, options: MQTTOptions, statusTopic: String?, log: @escaping @Sendable (String) -> Void
    ) throws(MotionError) {
        let wakeup = try Wakeup()
        spool.whenAppended { wakeup.signal() }
        self.wakeup = wakeup
        var options = options
        if let statusTopic { options.will = (statusTopic, Array("offline".utf8)) }
        self.spool = spool
        self.options = options
        self.statusTopic = statusTopic
        self.log = log
    }

    /// Messages the broker has acknowledged since the start.
    package var acknowledgedCount: Int { control.withLock { $0.acknowledged } }
    /// Whether the publisher is connected now.
    package var isConnected: Bool { control.withLock { $0.connected } }
    /// Whether the run ended before the spool was drained.
    package var stoppedEarly: Bool { control.withLock { $0.stoppedEarly } }
    /// The last reason a connection failed or ended, or `nil`.
    package var lastProblem: String? { control.withLock { $0.lastProblem } }

    /// Starts the publisher's thread. Fails when the options cannot be used (TLS files, say).
    package func start() throws(MotionError) {
        let connection = try MQTTConnection(options)
        let box = ConnectionBox(connection)
        Task(executorPreference: thread) { [self] in
            run(box.connection)
            thread.stop()
            let waiter = finished.withLock { waiter in
                done.withLock { $0 = true }
                defer { waiter = nil }
                return waiter
            }
            waiter?.resume()
        }
    }

    /// Asks the publisher to end: at once (what is not acknowledged stays in the spool for the next run), or with
    /// `drain` once the spool is empty and all is acknowledged; returns when its thread has ended.
    package func stop(drain: Bool) async {
        control.withLock {
            $0.stop = true
            $0.drain = drain
        }
        wakeup.signal()
        await withCheckedContinuation { continuation in
            let ended = finished.withLock { waiter -> Bool in
                if done.withLock({ $0 }) { return true }
                waiter = continuation
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// Asks the publisher to end at once, without draining (what is not acknowledged stays in the spool), and without
    /// waiting for its thread.
    package func requestStop() {
        control.withLock {
            $0.stop = true
            $0.abandon = true
        }
        wakeup.signal()
    }

    private enum State {
        case waiting(until: UInt64)
        case connecting(since: UInt64)
        case connected
    }

    private func run(_ connection: MQTTConnection) {
        var state = State.waiting(until: 0)
        var attempts = 0
        var sent: Deque<(mid: Int32, message: MessageSpool.Message, acknowledged: Bool)> = []
        var next: MessageSpool.Position? = nil  // where sending goes on; nil: the spool's cursor
        var skipped = 0
        func retry(_ reason: String) {
            let delay = min(Self.longestRetry, Self.firstRetry * Double(1 << min(attempts, 10))) * Double.random(in: 0.5...1.5)
            attempts += 1
            control.withLock {
                $0.connected = false
                $0.lastProblem = reason
            }
            log("\(reason); trying again in \((delay * 10).rounded() / 10) s (\(spool.pendingBytes) bytes spooled)")
            state = .waiting(until: monotonicNanoseconds() + nanoseconds(clamping: delay))
            sent.removeAll()
            next = nil
        }
        // Each turn sends what it can, then blocks until the broker's socket, a new message or a stop needs it (or
        // the keep-alive's second passes): nothing polls.
        running: while true {
            let (stop, drain) = control.withLock { ($0.stop, $0.drain && !$0.abandon) }
            if stop && !drain { break }
            let now = monotonicNanoseconds()
            var wait = Self.housekeeping
            switch state {
            case .waiting(let until):
                if stop && drain && spool.isDrained { break running }
                guard now >= until else {
                    wakeup.wait(milliseconds: Self.milliseconds(until - now))
                    continue
                }
                if let failure = connection.connect() {
                    retry("cannot connect to \(options.host):\(options.port): \(failure)")
                    continue
                }
                state = .connecting(since: now)
            case .connecting(let since):
                let limit = nanoseconds(clamping: Self.connectTimeout)
                if now - since > limit {
                    retry("no answer from \(options.host):\(options.port) within \(Int(Self.connectTimeout)) s")
                    continue
                }
                wait = min(wait, Self.milliseconds(limit - (now - since)) + 1)
            case .connected:
                let room = Self.window - sent.count
                guard room > 0 else { break }
                let messages: [MessageSpool.Message]
                do {
                    messages = try spool.messages(from: next, limit: room, skipped: &skipped)
                } catch {
                    log("cannot read the spool: \(error)")
                    wait = 200
                    break
                }
                for message in messages {
                    switch connection.publish(topic: message.topic, payload: message.bytes) {
                    case .success(let mid):
                        sent.append((mid, message, false))
                        next = message.next
                    case .failure(let error):
                        retry("\(error.message)")
                    }
                    guard case .connected = state else { continue running }
                }
                if messages.isEmpty && sent.isEmpty && stop && drain { break running }
            }
            let (events, lost) = connection.wait(for: wakeup, milliseconds: wait)
            for event in events {
                switch event {
                case .connected:
                    state = .connected
                    attempts = 0
                    control.withLock {
                        $0.connected = true
                        $0.lastProblem = nil
                    }
                    log("connected to \(options.host):\(options.port)")
                    if let statusTopic { _ = connection.publish(topic: statusTopic, payload: Array("online".utf8), retain: true) }
                    sent.removeAll()
                    next = nil
                case .refused(let reason):
                    retry("the broker refused the connection: \(reason)")
                case .disconnected(let code):
                    if case .connected = state {
                        retry("the connection to \(options.host):\(options.port) was lost (\(MQTTConnection.describe(code)))")
                    } else if case .connecting = state {
                        retry("cannot connect to \(options.host):\(options.port) (\(MQTTConnection.describe(code)))")
                    }
                case .acknowledged(let mid):
                    guard let index = sent.firstIndex(where: { $0.mid == mid }) else { continue }
                    sent[index].acknowledged = true
                    var through: MessageSpool.Position?
                    var count = 0
                    while let first = sent.first, first.acknowledged {
                        through = first.message.next
                        sent.removeFirst()
                        count += 1
                    }
                    if let through { spool.acknowledge(upTo: through) }
                    control.withLock { $0.acknowledged += count }
                }
            }
            if let lost {
                switch state {
                case .connected: retry("the connection to \(options.host):\(options.port) was lost (\(lost))")
                case .connecting: retry("cannot connect to \(options.host):\(options.port): \(lost)")
                case .waiting: break
                }
            } else if case .connecting = state, let failure = connection.connectionFailure {
                retry("cannot connect to \(options.host):\(options.port): \(failure)")
            }
        }
        let drained = sent.isEmpty && spool.isDrained
        control.withLock { $0.stoppedEarly = !drained }
        if case .connected = state {
            if let statusTopic { _ = connection.publish(topic: statusTopic, payload: Array("offline".utf8), retain: true) }
            connection.disconnect()
        }
        spool.close()
        if skipped > 0 { log("\(skipped) damaged frames of the spool skipped") }
    }
}

/// Hands the connection to the publisher's thread, which alone uses it from then on.
private final class ConnectionBox: @unchecked Sendable {
    let connection: MQTTConnection
    init(_ connection: MQTTConnection) { self.connection = connection }
}
