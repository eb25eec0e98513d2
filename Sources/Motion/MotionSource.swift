public import MotionCore
public import MotionIIO

/// Where a ``MotionManager`` gets its samples: a live IIO device, a recorded trace, or samples in memory.
///
/// The manager behaves the same on each: the same updates for the same samples. Recordings are replayed with
/// a ``ReplayPacing``; live devices deliver at their own pace.
public struct MotionSource: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case device(selector: String, includeBase: Bool, options: DeviceOptions)
        case trace(path: String, lenient: Bool)
        case samples([MotionSample])
        case sequence(@Sendable () -> AnyIterator<MotionSample>, description: String)
        case live(@Sendable () -> any LiveSampleIterator)
        case service(busAddress: String?)
    }

    let kind: Kind
    /// How a recording is replayed (ignored for devices).
    public let pacing: ReplayPacing

    /// Live IIO devices, discovered through udev when the first subscription starts (see `Docs/Devices.md`).
    ///
    /// The device runs only while a subscription needs it, at the fastest rate the subscriptions ask for (the
    /// device's nearest available rate at or above it), and its buffer is disabled when the last one stops.
    /// Timestamps are seconds on `CLOCK_BOOTTIME`, as Core Motion's. When the device goes away, the updates wait
    /// for a matching device and continue (`ReconnectPolicy.waitForDevice`); use
    /// ``device(_:configuration:events:)`` for another policy, a read mode, mount matrices or timeouts.
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
    /// As ``device(_:includeBase:batchDuration:)``; the rate follows the subscriptions' fastest interval unless
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
        events: (@Sendable (IIODeviceSession.Event) -> Void)? = nil
    ) -> MotionSource {
        MotionSource(
            kind: .device(
                selector: selector, includeBase: configuration.includeBase,
                options: DeviceOptions(configuration: configuration, events: events)),
            pacing: .realTime)
    }

    /// A trace in the canonical CSV format (`Docs/TraceFormat.md`), read as the replay goes, in constant memory.
    ///
    /// The replay starts when the first subscription starts, pauses while no subscription is active, and ends
    /// every subscription when the trace ends. Timestamps are the trace's `t` column, in seconds.
    /// - Parameters:
    ///   - path: The file, or `-` for standard input.
    ///   - pacing: Real time (default), a multiple of it, or as fast as the consumers take the updates.
    ///   - lenient: Skip malformed rows instead of ending with a `MotionError.Code.malformedTrace` error.
    public static func trace(_ path: String, pacing: ReplayPacing = .realTime, lenient: Bool = false) -> MotionSource {
        MotionSource(kind: .trace(path: path, lenient: lenient), pacing: pacing)
    }

    /// Samples in memory, in timestamp order, replayed as a trace is.
    public static func samples(_ samples: [MotionSample], pacing: ReplayPacing = .realTime) -> MotionSource {
        MotionSource(kind: .samples(samples), pacing: pacing)
    }

    /// Samples from an asynchronous sequence the caller feeds (another driver, a network stream, a test), taken
    /// as they come, like a live device: no pacing, and the updates end when the sequence ends (or with its
    /// error, as a `MotionError`). The sequence is iterated once, from the first subscription on; while no
    /// subscription is active it is not read.
    public static func stream<Samples: AsyncSequence & Sendable>(_ samples: Samples) -> MotionSource
    where Samples.Element == MotionSample {
        MotionSource(kind: .live({ SequenceIterator(samples.makeAsyncIterator()) }), pacing: .realTime)
    }

    /// Samples from a sequence (a `MotionTesting` `Simulation`, a generator, a file format of your own), taken
    /// as the replay goes, in constant memory, and replayed as a trace is: paced by `pacing`, each subscription
    /// from where the replay is. The sequence is iterated once; its first sample is taken when the manager is
    /// created, and its sensors are the ones the source reports available.
    /// - Parameters:
    ///   - samples: The samples, in timestamp order (seconds).
    ///   - pacing: Real time (default), a multiple of it, or as fast as the consumers take the updates.
    public static func sequence<Samples: Sequence & Sendable>(
        _ samples: Samples, pacing: ReplayPacing = .realTime
    ) -> MotionSource where Samples.Element == MotionSample {
        MotionSource(
            kind: .sequence({ AnyIterator(samples.makeIterator()) }, description: "\(Samples.self)"), pacing: pacing)
    }

    /// A live-device source's selector and whether it includes base accelerometers (`nil` for other sources):
    /// for motiond, which readies the devices it serves as iio-sensor-proxy does.
    package var deviceSelection: (selector: String, includeBase: Bool)? {
        if case .device(let selector, let includeBase, _) = kind { return (selector, includeBase) }
        return nil
    }

    /// `true` for live devices and streams, `false` for recordings.
    public var isLive: Bool {
        switch kind {
        case .device, .live, .service: true
        case .trace, .samples, .sequence: false
        }
    }

    public var description: String {
        switch kind {
        case .device(let selector, _, _): "device \(selector)"
        case .trace(let path, _): "trace \(path) (\(pacing))"
        case .samples(let samples): "\(samples.count) samples (\(pacing))"
        case .sequence(_, let description): "\(description) (\(pacing))"
        case .live: "stream"
        case .service(let address): "motion service" + (address.map { " at \($0)" } ?? "")
        }
    }
}

/// How a ``MotionSource/device(_:configuration:events:)`` source reads its devices.
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

/// A device source's configuration and event handler.
struct DeviceOptions: Sendable {
    var configuration: DeviceSourceConfiguration
    var events: (@Sendable (IIODeviceSession.Event) -> Void)?
}

/// How fast a recording is replayed.
public struct ReplayPacing: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case scaled(Double)
        case asFastAsConsumed
    }

    let kind: Kind

    /// Each sample is delivered when as much time has passed on the manager's clock, since the first one, as
    /// separates their timestamps.
    public static let realTime = ReplayPacing(kind: .scaled(1))

    /// As ``realTime``, `factor` times faster (2 replays a 10 s trace in 5 s).
    /// - Precondition: `factor > 0` and finite.
    public static func scaled(by factor: Double) -> ReplayPacing {
        precondition(factor > 0 && factor.isFinite, "The replay speed factor must be > 0, got \(factor).")
        return ReplayPacing(kind: .scaled(factor))
    }

    /// No clock: the next sample is delivered as soon as every consumer has room for it, so nothing is dropped
    /// and the replay runs as fast as the slowest consumer takes it. Replaying a trace twice this way gives
    /// identical updates.
    public static let asFastAsConsumed = ReplayPacing(kind: .asFastAsConsumed)

    /// The factor on real time, or `nil` for ``asFastAsConsumed``.
    public var speedFactor: Double? {
        if case .scaled(let factor) = kind { return factor }
        return nil
    }

    public var description: String {
        switch kind {
        case .scaled(1): "real time"
        case .scaled(let factor): "\(factor)× real time"
        case .asFastAsConsumed: "as fast as consumed"
        }
    }
}

/// A type-erased iterator over a caller's sample sequence, used by one producer at a time.
protocol LiveSampleIterator: AnyObject {
    func next() async throws(MotionError) -> MotionSample?
}

final class SequenceIterator<Iterator: AsyncIteratorProtocol>: LiveSampleIterator
where Iterator.Element == MotionSample {
    private var iterator: Iterator

    init(_ iterator: Iterator) {
        self.iterator = iterator
    }

    func next() async throws(MotionError) -> MotionSample? {
        do {
            return try await iterator.next()
        } catch let error as MotionError {
            throw error
        } catch is CancellationError {
            throw MotionError(.cancelled, "the sample stream's consumer was cancelled")
        } catch {
            throw MotionError(.ioFailure, "the sample stream failed: \(error)", underlying: error)
        }
    }
}
