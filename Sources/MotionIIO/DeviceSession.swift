public import MotionCore
import MotionSystem

/// What an `IIODeviceSession` does when a device it reads goes away (udev `remove`, or its node ends).
public struct ReconnectPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case end
        /// Wait for a matching device, at most this many seconds (`nil`: until cancelled).
        case wait(Double?)
    }

    let kind: Kind

    /// The session ends: `IIODeviceSession.next()` throws the `MotionError.Code.disconnected` error.
    public static let endOnDisconnect = ReconnectPolicy(kind: .end)

    /// The session reports `IIODeviceSession.Event.disconnected(_:)`, waits (until the task is cancelled) for
    /// a device that the same selector would pick, and resumes with `IIODeviceSession.Event.reconnected(_:at:)`.
    public static let waitForDevice = ReconnectPolicy(kind: .wait(nil))

    /// As ``waitForDevice``, but gives up after `seconds` without a matching device: `IIODeviceSession.next()`
    /// then throws `MotionError.Code.disconnected`.
    /// - Precondition: `seconds > 0` and finite.
    public static func waitForDevice(upTo seconds: Double) -> ReconnectPolicy {
        precondition(seconds > 0 && seconds.isFinite, "The reconnection wait must be > 0 s, got \(seconds).")
        return ReconnectPolicy(kind: .wait(seconds))
    }

    /// `true` unless ``endOnDisconnect``.
    public var reconnects: Bool { kind != .end }

    /// How long a reconnection may take, in seconds; `nil` for ``endOnDisconnect`` and the unbounded
    /// ``waitForDevice``.
    public var waitLimit: Double? {
        if case .wait(let limit) = kind { return limit }
        return nil
    }

    /// `end on disconnect`, `wait for the device` or `wait up to N s for the device`.
    public var description: String {
        switch kind {
        case .end: "end on disconnect"
        case .wait(nil): "wait for the device"
        case .wait(let limit?): "wait up to \(formatDecimal(limit)) s for the device"
        }
    }
}

/// Something that happened to the devices of a live-device source (`MotionSource.device(_:configuration:events:)`).
public enum IIODeviceEvent: Sendable, CustomStringConvertible {
    /// The devices were opened (when the source starts reading): what was set up on each.
    case opened([CaptureDetails])
    /// How the devices are read changed (a silent buffer was given up for polling, before its first sample):
    /// the details of every device, as now.
    case detailsChanged([CaptureDetails])
    /// A device went away; the session waits for a matching one (``ReconnectPolicy/waitForDevice``).
    case disconnected(Disconnection)
    /// Matching devices were opened after a disconnection, at `timestamp` (seconds on `CLOCK_BOOTTIME`, never
    /// before the last sample): what was set up on each.
    case reconnected([CaptureDetails], at: Double)
    /// Devices cannot be watched (no udev monitor), so a removal will end the session: comes once, before
    /// ``opened(_:)``.
    case monitorUnavailable(MotionError)

    /// A line for logs: `iio:device0 (lis3dh) opened`, `iio:device0 polled (why)`, the disconnection's message,
    /// or `iio:device0 (lis3dh) connected`.
    public var description: String {
        switch self {
        case .opened(let details): "\(Self.names(details)) opened"
        case .detailsChanged(let details):
            details.map { "\($0.device.id) \($0.mode.rawValue)" + ($0.fallback.map { " (\($0))" } ?? "") }
                .joined(separator: ", ")
        case .disconnected(let disconnection): disconnection.error.message
        case .reconnected(let details, _): "\(Self.names(details)) connected"
        case .monitorUnavailable(let error): "cannot watch for devices (\(error)); a removal will end the session"
        }
    }

    /// `iio:device0 (lis3dh), iio:device1 (bmg160)`.
    package static func names(_ details: [CaptureDetails]) -> String {
        details.map { "\($0.device.id) (\($0.device.name))" }.joined(separator: ", ")
    }

    /// A device that went away.
    public struct Disconnection: Sendable {
        /// The device, when the error names one the session was reading (by its `IIOReadError` or its location).
        public var device: IIODevice?
        /// The `MotionError.Code.disconnected` error that ended its capture (usually with an underlying
        /// `IIOReadError`).
        public var error: MotionError
        /// When, in seconds on `CLOCK_BOOTTIME`: the later of now and the last sample's timestamp.
        public var timestamp: Double
    }
}

/// Live IIO devices from discovery to the last sample: finds the devices a ``DeviceSelector`` picks for the
/// wanted sensors, opens an ``IIOCapture`` with the whole ``CaptureConfiguration``, and when a device goes away
/// either ends or waits for a matching device and opens it (``ReconnectPolicy``).
///
/// ``next()`` returns the samples batch by batch, and the lifecycle as ``Event``s: the devices opened, a change
/// in how they are read (a silent buffer given up for polling), a disconnection and a reconnection. Samples
/// never go back in time, across reconnections too: a sample older than the last one delivered gets the last
/// one's timestamp. Every wait is cancellable: cancelling the task ends ``next()`` with
/// `MotionError.Code.cancelled` at once, whether it waits for data or for a device, and the buffers are
/// disabled. The devices are opened at the first ``next()``; `close()` (or `deinit`) disables them.
///
/// A session is used by one task at a time; it is not `Sendable`.
///
/// ```swift
/// let session = try IIODeviceSession(selector: .automatic, configuration: .init(rate: 100))
/// while true {
///     switch try await session.next() {
///     case .samples(let batch): for sample in batch { print(sample.timestamp, sample.acceleration as Any) }
///     case .event(let event): print(event)
///     }
/// }
/// ```
package final class IIODeviceSession {
    package typealias Event = IIODeviceEvent
    package typealias Disconnection = IIODeviceEvent.Disconnection

    /// What `IIODeviceSession.next()` returns.
    package enum Output: Sendable {
        /// Samples in time order (at least one).
        case samples([MotionSample])
        /// A change in the devices.
        case event(Event)
    }

    /// Which devices to read.
    package let selector: DeviceSelector
    /// The sensors wanted.
    package let sensors: SensorSet
    /// Whether accelerometers in the base of a convertible may be picked.
    package let includeBase: Bool
    /// How every capture of the session is opened.
    package let configuration: CaptureConfiguration
    /// What happens when a device goes away.
    package let reconnectPolicy: ReconnectPolicy
    /// Why the session cannot watch for devices coming back (no permission to listen to udev events), or
    /// `nil`. A removal then ends the session, as with ``ReconnectPolicy/endOnDisconnect``.
    package let monitorFailure: MotionError?

    /// What was set up on each device being read: empty before the first ``next()`` and while waiting for a
    /// device to come back; after the session ends, the last devices.
    package private(set) var details: [CaptureDetails] = []

    private let monitor: IIODeviceMonitor?
    private var capture: IIOCapture?
    private var hasOpened = false
    private var isClosed = false
    /// Outputs to return before reading again (an event found with a batch).
    private var pending: [Output] = []
    /// The latest sample timestamp delivered, in seconds.
    private var lastTimestamp = -Double.infinity
    /// The end of the current wait for a device (`CLOCK_MONOTONIC` ns) and the disconnection it follows.
    private var reconnectDeadline: UInt64?
    private var lastDisconnection: MotionError?
    /// Disconnections in a row of a device that stayed present (it failed rather than went away), each within
    /// ``failureWindow`` of its opening: the reopening waits longer after each (``retryDelay``).
    private var failuresInARow = 0
    private var openedAt: UInt64 = 0

    /// A device that fails within this long of its opening, in seconds, counts as failing again.
    static let failureWindow = 10.0

    /// How long to wait before reopening a device that failed `failures` times in a row while staying present, in
    /// seconds: 0.25 s, doubling, at most 30 s, so a broken device is retried without spinning.
    package static func retryDelay(failures: Int) -> Double {
        failures <= 0 ? 0 : min(0.25 * Double(1 << min(failures - 1, 16)), 30)
    }

    /// Creates a session; the devices are looked for and opened at the first ``next()``.
    ///
    /// - Parameters:
    ///   - selector: `auto` or a device's name, label, id, sysfs path or node.
    ///   - sensors: The sensors to read (`.all` by default); devices are picked for these.
    ///   - includeBase: Also pick accelerometers located in the base of a convertible.
    ///   - configuration: Rate, batch, mode, mount-matrix overrides and timeouts of every capture.
    ///   - reconnect: What to do when a device goes away; ``ReconnectPolicy/waitForDevice`` by default.
    /// - Throws: `MotionError.Code.invalidArgument` for a configuration that ``CaptureConfiguration/validate()``
    ///   rejects.
    package init(
        selector: DeviceSelector, sensors: SensorSet = .all, includeBase: Bool = false,
        configuration: CaptureConfiguration = .init(), reconnect: ReconnectPolicy = .waitForDevice
    ) throws(MotionError) {
        try configuration.validate()
        self.selector = selector
        self.sensors = sensors.isEmpty ? .all : sensors
        self.includeBase = includeBase
        self.configuration = configuration
        reconnectPolicy = reconnect
        // Created before the first discovery, so that no device added in between is missed.
        var monitor: IIODeviceMonitor?
        var failure: MotionError?
        if reconnect.reconnects {
            do {
                monitor = try IIODeviceMonitor(includeBase: includeBase)
            } catch {
                failure = error
            }
        }
        self.monitor = monitor
        monitorFailure = failure
    }

    deinit {
        capture?.close()
    }

    /// The next batch of samples or event.
    ///
    /// - Throws: `MotionError.Code.deviceNotFound` when the first discovery finds no matching device;
    ///   `MotionError.Code.disconnected` when a device goes away and the policy (or a missing monitor) ends the
    ///   session, or a bounded wait for it runs out; `MotionError.Code.cancelled` when the task is cancelled or
    ///   the session closed; the capture's errors otherwise (`Docs/Devices.md`, "Errors"). The session has
    ///   ended after any error; samples read before it are returned first.
    package func next() async throws(MotionError) -> Output {
        if !pending.isEmpty { return pending.removeFirst() }
        guard !isClosed else { throw MotionError(.cancelled, "the device session is closed") }
        guard let capture else {
            do {
                try await open()
            } catch {
                close()
                throw error
            }
            return pending.removeFirst()
        }
        var batch: [MotionSample]
        do {
            batch = try await capture.next()
        } catch where error.code == .disconnected && reconnectPolicy.reconnects && monitor != nil {
            self.capture = nil  // closed by the failed read
            details = []
            lastDisconnection = error
            let now = monotonicNanoseconds()
            reconnectDeadline = reconnectPolicy.waitLimit.map { now + nanoseconds(clamping: $0) }
            let quick = Double(now &- openedAt) / 1e9 < Self.failureWindow
            failuresInARow = quick ? failuresInARow + 1 : 1
            let device = Self.device(named: error, among: capture.details)
            return .event(.disconnected(Disconnection(device: device, error: error, timestamp: eventTimestamp())))
        } catch {
            close()
            throw error
        }
        // Never back in time, across reconnections too (a replugged chip's timestamp clock may restart).
        for index in batch.indices {
            batch[index].timestamp = max(batch[index].timestamp, lastTimestamp)
            lastTimestamp = batch[index].timestamp
        }
        guard capture.details == details else {
            details = capture.details
            pending.append(.samples(batch))
            return .event(.detailsChanged(details))
        }
        return .samples(batch)
    }

    /// Disables the buffers and releases the devices. Idempotent; later ``next()`` calls throw
    /// `MotionError.Code.cancelled`.
    package func close() {
        isClosed = true
        capture?.close()
        capture = nil
    }

    /// Finds the matching devices and opens them, waiting for them after a disconnection; queues the event.
    private func open() async throws(MotionError) {
        var waited = false
        while true {
            guard !Task.isCancelled else { throw MotionError(.cancelled, "the device session was cancelled") }
            let devices = try IIODeviceDiscovery.devices(includeBase: includeBase)
            let sources = selector.sources(from: devices, sensors: sensors)
            if sources.isEmpty {
                guard hasOpened else { throw selector.noMatchError(among: devices, sensors: sensors) }
                try await waitForMatchingDevice()
                continue
            }
            if lastDisconnection != nil, failuresInARow > 0, !waited {
                // Still present after failing: wait before reopening (a udev event of the device ends the wait).
                waited = true
                if try await waitForMatchingDevice(retryingAfter: Self.retryDelay(failures: failuresInARow)) {
                    continue
                }
            }
            let opened: IIOCapture
            do {
                opened = try IIOCapture(sources: sources, configuration: configuration)
            } catch where hasOpened && (error.code == .disconnected || error.code == .deviceNotFound) {
                // Gone (again) between discovery and opening: still being removed, or removed since.
                try await waitForMatchingDevice()
                continue
            }
            capture = opened
            openedAt = monotonicNanoseconds()
            details = opened.details
            if !hasOpened, let monitorFailure { pending.append(.event(.monitorUnavailable(monitorFailure))) }
            pending.append(.event(hasOpened ? .reconnected(details, at: eventTimestamp()) : .opened(details)))
            hasOpened = true
            reconnectDeadline = nil
            lastDisconnection = nil
            return
        }
    }

    /// Suspends until the monitor reports a device that the selector would pick, or the wait's limit passes (an
    /// error), or `retryingAfter` seconds pass; returns whether a matching device was reported.
    @discardableResult
    private func waitForMatchingDevice(retryingAfter delay: Double? = nil) async throws(MotionError) -> Bool {
        guard let monitor else {
            throw MotionError(.disconnected, "the device is gone and new devices cannot be watched for")
        }
        let retryAt = delay.map { monotonicNanoseconds() + nanoseconds(clamping: $0) }
        while true {
            let until = [reconnectDeadline, retryAt].compactMap { $0 }.min()
            guard let event = try await monitor.next(until: until) else {
                if let retryAt, monotonicNanoseconds() >= retryAt,
                    reconnectDeadline.map({ retryAt < $0 }) ?? true
                {
                    return false
                }
                let limit = formatDecimal(reconnectPolicy.waitLimit ?? 0)
                throw MotionError(
                    .disconnected,
                    (lastDisconnection.map { "\($0.message); " } ?? "")
                        + "no device matching \"\(selector)\" for \(sensors) came back within \(limit) s; "
                        + "reconnect it, or wait longer (ReconnectPolicy.waitForDevice)",
                    underlying: lastDisconnection)
            }
            switch event {
            case .added(let device), .changed(let device):
                if !selector.sources(from: [device], sensors: sensors).isEmpty { return true }
            case .removed:
                continue
            }
        }
    }

    /// The device an error is about: the one its `IIOReadError` names, else the one whose sysfs folder or node
    /// its location is (a polled attribute that vanished).
    private static func device(named error: MotionError, among details: [CaptureDetails]) -> IIODevice? {
        if let id = (error.underlying as? IIOReadError)?.device {
            return details.first { $0.device.id == id }?.device
        }
        guard let file = error.location?.file else { return nil }
        return details.first { $0.device.deviceNode == file || file.hasPrefix($0.device.sysfsPath + "/") }?.device
    }

    /// Now on `CLOCK_BOOTTIME`, but never before the last sample.
    private func eventTimestamp() -> Double {
        max(lastTimestamp, boottimeSeconds())
    }
}
