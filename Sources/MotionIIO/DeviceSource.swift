public import MotionCore
import MotionSystem

extension MotionSource {
    /// Live IIO devices, discovered through udev when the first subscription starts (see `Docs/Devices.md`).
    ///
    /// The device runs only while a subscription needs it, at the fastest rate the subscriptions ask for (the
    /// device's nearest available rate at or above it), and its buffer is disabled when the last one stops.
    /// Timestamps are seconds on `CLOCK_BOOTTIME`, as Core Motion's. When the device goes away, the updates wait
    /// for a matching device and continue (`ReconnectPolicy.waitForDevice`); use
    /// `device(_:configuration:events:)` for another policy, a read mode, mount matrices or timeouts.
    /// - Parameters:
    ///   - selector: `auto` (one device per sensor, merged by timestamp), or a device's name, label, id
    ///     (`iio:device0`), sysfs path or `/dev` node.
    ///   - includeBase: Also use accelerometers in the base of a convertible.
    ///   - batchDuration: Seconds of data per wake-up (the buffer watermark is rate × this); 0.05 s by default.
    public static func device(
        _ selector: String = "auto", includeBase: Bool = false, batchDuration: Double = 0.05
    ) -> MotionSource {
        device(
            selector,
            configuration: DeviceSourceConfiguration(
                includeBase: includeBase, capture: CaptureConfiguration(batchDuration: batchDuration)))
    }

    /// Live IIO devices, read with the whole capture configuration and a reconnection policy, through an
    /// `IIODeviceSession` (MotionIIO) opened when the first subscription starts (see `Docs/Devices.md`).
    ///
    /// As `device(_:includeBase:batchDuration:)`; the rate follows the subscriptions' fastest interval unless
    /// `configuration.capture.rate` is set. With `ReconnectPolicy.waitForDevice` (the default) the
    /// subscriptions continue after a device is unplugged and a matching one appears, with timestamps that never
    /// go back in time; with `ReconnectPolicy.endOnDisconnect` they end with `MotionError.Code.disconnected`.
    /// Stopping the last subscription ends a wait for a device at once.
    /// - Parameters:
    ///   - selector: `auto`, or a device's name, label, id (`iio:device0`), sysfs path or `/dev` node.
    ///   - configuration: The capture (mode, mount-matrix overrides, timeouts, batch), base accelerometers
    ///     and the reconnection policy.
    ///   - events: Called with each device event (opened, read differently, disconnected, reconnected) on the
    ///     manager's producer task, before the samples that follow it; keep it short. `nil` by default.
    public static func device(
        _ selector: String = "auto", configuration: DeviceSourceConfiguration,
        events: (@Sendable (IIODeviceEvent) -> Void)? = nil
    ) -> MotionSource {
        MotionSource(IIODeviceProvider(selector: selector, configuration: configuration, events: events))
    }
}

/// `MotionSource.device(_:configuration:events:)`: live IIO devices.
package struct IIODeviceProvider: MotionSampleProvider {
    /// `auto`, or a device's name, label, id, sysfs path or `/dev` node.
    package let selector: String
    package let configuration: DeviceSourceConfiguration
    let events: (@Sendable (IIODeviceEvent) -> Void)?

    package var isLive: Bool { true }
    package var description: String { "device \(selector)" }

    package func makeReader() -> any MotionSampleReader { DeviceInput(self) }
}

extension MotionSource {
    /// A live-device source's selector and whether it includes base accelerometers (`nil` for other sources):
    /// for motiond, which readies the devices it serves as iio-sensor-proxy does.
    package var deviceSelection: (selector: String, includeBase: Bool)? {
        guard let device = provider as? IIODeviceProvider else { return nil }
        return (device.selector, device.configuration.includeBase)
    }
}

/// How a `MotionSource.device(_:configuration:events:)` source reads its devices.
public struct DeviceSourceConfiguration: Hashable, Sendable {
    /// Also use accelerometers in the base of a convertible.
    public var includeBase: Bool
    /// Mode, mount-matrix overrides, timeouts, batch duration and merging of every capture. Its `rate` (Hz),
    /// when set, replaces the rate that follows the subscriptions' fastest interval.
    public var capture: CaptureConfiguration
    /// What happens when a device goes away.
    public var reconnect: ReconnectPolicy
    /// When `true`, one wake-up never carries more than the subscriptions' fastest interval: the capture's batch
    /// duration is the smaller of `capture.batchDuration` and that interval, so a sample waits in the device's
    /// buffer at most one interval of the fastest subscription (at a device rate of 1 / interval, one scan per
    /// wake-up) instead of up to `capture.batchDuration`. It costs one wake-up per record of the fastest
    /// subscription. Subscriptions that take every sample (interval 0, events) keep `capture.batchDuration`.
    /// `false` (the default): always `capture.batchDuration`.
    public var batchWithinInterval: Bool

    /// Creates a configuration: by default the display's devices, the default capture, and waiting for a
    /// device that goes away to come back.
    public init(
        includeBase: Bool = false, capture: CaptureConfiguration = .init(), reconnect: ReconnectPolicy = .waitForDevice,
        batchWithinInterval: Bool = false
    ) {
        self.includeBase = includeBase
        self.capture = capture
        self.reconnect = reconnect
        self.batchWithinInterval = batchWithinInterval
    }
}

/// A live device session, opened on demand and reopened when the wanted rate or sensors change. Used by one
/// producer at a time (`MotionSampleReader`), hence `@unchecked Sendable`.
final class DeviceInput: MotionSampleReader, @unchecked Sendable {
    let selector: DeviceSelector
    let options: IIODeviceProvider
    private var session: IIODeviceSession?
    /// The fastest interval, the capture configuration it gave and the sensors the session was opened with.
    private var openedFor: (interval: Double, capture: CaptureConfiguration, sensors: SensorSet)?
    private var batch: [MotionSample] = []
    private var nextInBatch = 0

    init(_ provider: IIODeviceProvider) {
        selector = DeviceSelector(provider.selector)
        options = provider
    }

    /// The sensors of the matching devices present now (udev); empty when none is.
    func availableSensors() -> SensorSet {
        guard let devices = try? IIODeviceDiscovery.devices(includeBase: options.configuration.includeBase) else {
            return []
        }
        return selector.sources(from: devices).reduce(SensorSet()) { $0.union($1.sensorSet) }
    }

    /// The device thread: the task that reads wakes there when data arrives.
    var preferredExecutor: (any TaskExecutor)? { Reactor.shared }

    func next(_ demand: SourceDemand) -> SampleSourceStep {
        nextAtHand(fastestInterval: demand.fastestInterval, sensors: demand.sensors).map { .sample($0) } ?? .wait
    }

    nonisolated(nonsending) func wait(_ demand: SourceDemand) async throws(MotionError) {
        try await fetch(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
    }

    /// Dropped: stale once the device has stopped.
    func putBack(_ sample: MotionSample) {}

    /// Stops the device (its buffer is disabled); the next wait opens it again.
    func pause() { close() }

    /// The next sample of the current batch, or `nil` when it is used up. A change of the wanted rate or sensors
    /// takes effect between batches: once the batch at hand is delivered, the device is closed, to reopen at the
    /// next ``fetch(fastestInterval:sensors:)``; no sample already read is dropped for it.
    func nextAtHand(fastestInterval interval: Double, sensors: SensorSet) -> MotionSample? {
        // A new fastest interval reopens the device only when it changes the capture (its rate, or its batch).
        if nextInBatch >= batch.count, let opened = openedFor {
            if opened.sensors != sensors {
                close()
            } else if opened.interval != interval {
                if opened.capture != capture(for: interval) { close() } else { openedFor?.interval = interval }
            }
        }
        guard nextInBatch < batch.count else { return nil }
        defer { nextInBatch += 1 }
        return batch[nextInBatch]
    }

    /// Waits for the next batch, opening the devices if needed; device events go to the source's handler as they
    /// come.
    func fetch(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) {
        while nextInBatch >= batch.count {
            let session: IIODeviceSession
            if let opened = self.session {
                session = opened
            } else {
                session = try open(interval: interval, sensors: sensors)
            }
            switch try await session.next() {
            case .samples(let samples):
                batch = samples
                nextInBatch = 0
            case .event(let event):
                options.events?(event)  // on the producer task, under no lock
            }
        }
    }

    /// The capture for a fastest interval of `interval`: the rate follows it unless the configuration fixes one,
    /// and so does the batch with ``DeviceSourceConfiguration/batchWithinInterval``.
    private func capture(for interval: Double) -> CaptureConfiguration {
        var capture = options.configuration.capture
        // The rate a subscription's interval asks, never below 10 Hz (iio-sensor-proxy's floor: a slower device
        // delays every other client's first sample, and orientation needs it), nor above 100 kHz.
        if capture.rate == nil && interval > 0 { capture.rate = min(max(1 / interval, 10), 100_000) }
        if options.configuration.batchWithinInterval && interval > 0 {
            capture.batchDuration = min(capture.batchDuration, interval)
        }
        return capture
    }

    private func open(interval: Double, sensors: SensorSet) throws(MotionError) -> IIODeviceSession {
        let capture = capture(for: interval)
        let session = try IIODeviceSession(
            selector: selector, sensors: sensors.isEmpty ? .all : sensors,
            includeBase: options.configuration.includeBase, configuration: capture,
            reconnect: options.configuration.reconnect)
        self.session = session
        openedFor = (interval, capture, sensors)
        return session
    }

    /// Disables the buffers (or ends a wait for a device); the next read opens the devices again.
    func close() {
        session?.close()
        session = nil
        openedFor = nil
        batch = []  // stale once the device has stopped
        nextInBatch = 0
    }
}
