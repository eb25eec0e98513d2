package import MotionCore

#if canImport(Glibc)
import Glibc
#endif

/// How to capture samples from IIO devices.
public struct CaptureConfiguration: Hashable, Sendable {
    /// How samples are read.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        /// Buffered when the device can buffer every requested sensor, polled otherwise.
        case automatic
        /// The kernel buffer through `/dev/iio:deviceN` (libiio): every scan is delivered.
        case buffered
        /// `in_<type>_<axis>_raw` read at each interval, stamped at read time.
        case polled
    }

    /// The rate to ask for, in Hz: the device's `sampling_frequency` is set to the nearest available value at
    /// or above it. `nil` keeps the device's current rate (polling then runs at that rate, or 10 Hz when the
    /// device reports none).
    public var rate: Double?
    /// How much data one wake-up should carry, in seconds: the buffer watermark is rate × this (at least one
    /// scan), so a 1 kHz stream wakes 20 times a second with the default 0.05 s. Lower values cut latency,
    /// higher values cut CPU time.
    public var batchDuration: Double
    /// Buffered, polled, or whichever the device supports.
    public var mode: Mode
    /// Readings of different devices at most this many seconds apart are merged into one sample.
    public var mergeTolerance: Double
    /// When set, a device that delivers nothing for this many seconds is reported as a read timeout;
    /// `nil` waits for as long as it takes (some sensors report only when the value changes).
    public var timeout: Double?
    /// In ``Mode/automatic`` mode, a buffer that delivers no scan within this many seconds of being enabled is
    /// given up, and the device read by polling instead (``CaptureDetails/fallback`` says so); iio-sensor-proxy
    /// waits 0.5 s the same way. `nil` keeps waiting for the buffer.
    public var bufferStartTimeout: Double?
    /// When set, a capture that has delivered no sample at all this many seconds after it opened fails with
    /// `MotionError.Code.ioFailure` naming the devices; `nil`
    /// waits for the first sample for as long as it takes. The default, ``defaultStartTimeout``, leaves room for
    /// a buffer's first batch at 1 Hz and the fallback to polling.
    public var startTimeout: Double?

    /// The default ``startTimeout``: 5 s.
    public static let defaultStartTimeout = 5.0
    /// Mount matrices to use instead of the discovered ones, by sensor kind.
    public var mountMatrixOverrides: [IIOSensorKind: MountMatrix]
    /// Whether a udev `remove` event for a device in use ends the capture with
    /// `MotionError.Code.disconnected` (in addition to read errors).
    public var watchForRemoval: Bool

    /// Creates a configuration.
    public init(
        rate: Double? = nil, batchDuration: Double = 0.05, mode: Mode = .automatic, mergeTolerance: Double = 0.001,
        timeout: Double? = nil, bufferStartTimeout: Double? = 0.5,
        startTimeout: Double? = defaultStartTimeout,
        mountMatrixOverrides: [IIOSensorKind: MountMatrix] = [:], watchForRemoval: Bool = true
    ) {
        self.rate = rate
        self.batchDuration = batchDuration
        self.mode = mode
        self.mergeTolerance = mergeTolerance
        self.timeout = timeout
        self.bufferStartTimeout = bufferStartTimeout
        self.startTimeout = startTimeout
        self.mountMatrixOverrides = mountMatrixOverrides
        self.watchForRemoval = watchForRemoval
    }

    /// Checks the values.
    ///
    /// - Throws: `MotionError.Code.invalidArgument` for a rate, batch duration, tolerance or timeout that is
    ///   not a positive finite number (tolerance may be 0).
    package func validate() throws(MotionError) {
        if let rate, !(rate > 0 && rate.isFinite) {
            throw MotionError(.invalidArgument, "the rate must be a positive number of hertz, got \(rate)")
        }
        guard batchDuration > 0 && batchDuration.isFinite else {
            throw MotionError(.invalidArgument, "the batch duration must be a positive number of seconds")
        }
        guard mergeTolerance >= 0 && mergeTolerance.isFinite else {
            throw MotionError(.invalidArgument, "the merge tolerance must be a number of seconds ≥ 0")
        }
        for (name, value) in [("timeout", timeout), ("buffer start timeout", bufferStartTimeout),
            ("start timeout", startTimeout)]
        {
            if let value, !(value > 0 && value.isFinite) {
                throw MotionError(.invalidArgument, "the \(name) must be a positive number of seconds, got \(value)")
            }
        }
    }
}

/// One device to capture from, and which of its sensors to use.
package struct CaptureSource: Hashable, Sendable {
    /// The device.
    package var device: IIODevice
    /// The sensors to read from it (a subset of its sensors).
    package var sensors: [IIOSensorKind]

    /// Creates a source.
    /// The sensors captured, as a set.
    package var sensorSet: SensorSet { sensors.reduce(into: SensorSet()) { $0.insert($1.sensor) } }

    package init(device: IIODevice, sensors: [IIOSensorKind]) {
        self.device = device
        self.sensors = sensors
    }
}

/// Which device(s) to capture from: `auto`, or a name, label, id, sysfs path or device node.
package enum DeviceSelector: Hashable, Sendable, CustomStringConvertible {
    /// One device per sensor kind: a combined IMU is preferred; otherwise the first accelerometer, gyroscope
    /// and magnetometer in device order, merged by timestamp.
    case automatic
    /// The first device whose id (`iio:device0`), chip name (`lis3dh`), label, sysfs path
    /// (`/sys/bus/iio/devices/iio:device0` or `/sys/devices/…`) or device node (`/dev/iio:device0`) is this.
    case matching(String)

    /// `auto` or the text.
    package var description: String {
        switch self {
        case .automatic: "auto"
        case .matching(let text): text
        }
    }

    /// Parses `auto` or any other text.
    package init(_ text: String) {
        self = text == "auto" ? .automatic : .matching(text)
    }

    /// The sources to capture `sensors` from, chosen among `devices`; empty when nothing matches.
    package func sources(from devices: [IIODevice], sensors: SensorSet = .all) -> [CaptureSource] {
        switch self {
        case .automatic:
            // Devices with more of the wanted sensors first (a combined IMU wins), then in device order.
            let ranked = devices.enumerated().sorted { a, b in
                let countA = a.element.sensorSet.intersection(sensors).rawValue.nonzeroBitCount
                let countB = b.element.sensorSet.intersection(sensors).rawValue.nonzeroBitCount
                return countA != countB ? countA > countB : a.offset < b.offset
            }.map(\.element)
            var covered: SensorSet = []
            var sources: [CaptureSource] = []
            for device in ranked {
                let kinds = device.sensors.map(\.kind).filter {
                    sensors.contains($0.sensor) && !covered.contains($0.sensor)
                }
                guard !kinds.isEmpty else { continue }
                kinds.forEach { covered.insert($0.sensor) }
                sources.append(CaptureSource(device: device, sensors: kinds))
            }
            return sources.sorted { IIODeviceDiscovery.deviceNumber($0.device.id) < IIODeviceDiscovery.deviceNumber($1.device.id) }
        case .matching(let text):
            guard let device = devices.first(where: { matches($0, text) }) else { return [] }
            let kinds = device.sensors.map(\.kind).filter { sensors.contains($0.sensor) }
            return kinds.isEmpty ? [] : [CaptureSource(device: device, sensors: kinds)]
        }
    }

    /// The error for a selector that matched nothing among `devices`: what was asked, what was found and where
    /// to look (`motionctl devices`, Docs/Devices.md).
    package func noMatchError(among devices: [IIODevice], sensors: SensorSet) -> MotionError {
        let found =
            devices.isEmpty
            ? "no IIO accelerometer, gyroscope or magnetometer was found"
            : "found " + devices.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
        return MotionError(
            .deviceNotFound,
            "no device matches \"\(self)\" for \(sensors); \(found) (see motionctl devices and Docs/Devices.md)")
    }

    private func matches(_ device: IIODevice, _ text: String) -> Bool {
        if text.hasPrefix("/") {
            // The forms users type, compared as text: realpath(3) is avoided on purpose (umockdev's preload
            // corrupts memory when a resolved path leaves its testbed).
            var path = text
            while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
            return path == device.sysfsPath || path == device.deviceNode
                || path == "/sys/bus/iio/devices/\(device.id)" || path == "/sys/class/iio/\(device.id)"
        }
        return text == device.id || text == device.name || (device.label != nil && text == device.label)
    }
}

/// What a capture actually set up on one device: for reports and trace metadata.
public struct CaptureDetails: Hashable, Sendable {
    /// How timestamps are obtained.
    public enum TimestampSource: Hashable, Sendable, CustomStringConvertible {
        /// The device's `in_timestamp` channel, on `current_timestamp_clock` = `boottime`.
        case deviceTimestamps
        /// The device's `in_timestamp` channel on another clock (`clock`, such as `realtime`, because
        /// `current_timestamp_clock` cannot be set to `boottime`), moved to `CLOCK_BOOTTIME` by adding `offset`
        /// seconds (boottime − clock), measured with `clock_gettime` when the capture started.
        case convertedDeviceTimestamps(clock: String, offset: Double)
        /// `CLOCK_BOOTTIME` read when each batch arrives, the batch spread back at the sampling period
        /// (the device has no timestamp channel, or its clock is an unknown one that cannot be set to boottime).
        case readTime
        /// `CLOCK_BOOTTIME` read at each poll.
        case pollTime

        /// `device (boottime)`, `device (realtime, converted to boottime by +… s measured at start)`,
        /// `read time (boottime)` or `poll time (boottime)`.
        public var description: String {
            switch self {
            case .deviceTimestamps: "device (boottime)"
            case .convertedDeviceTimestamps(let clock, let offset):
                "device (\(clock), converted to boottime by \(offset < 0 ? "" : "+")\(formatDecimal(offset)) s measured at start)"
            case .readTime: "read time (boottime)"
            case .pollTime: "poll time (boottime)"
            }
        }
    }

    /// The device, with any mount-matrix overrides applied.
    public var device: IIODevice
    /// The sensors read from it.
    public var sensors: [IIOSensorKind]
    /// Buffered or polled (never automatic).
    public var mode: CaptureConfiguration.Mode
    /// The sampling frequency in effect, in Hz, when known.
    public var samplingFrequency: Double?
    /// The trigger in use, when the device takes one.
    public var trigger: String?
    /// Scans per wake-up (buffer watermark), 1 when polled.
    public var batchSize: Int
    /// How samples are stamped.
    public var timestamps: TimestampSource
    /// Things that did not go as asked (a rate that could not be set, a clock that stayed realtime), which
    /// the capture worked around.
    public var warnings: [String]
    /// Why the device is polled although it can buffer (``CaptureConfiguration/Mode/automatic`` only): its
    /// buffer was busy, or delivered nothing within ``CaptureConfiguration/bufferStartTimeout``. `nil` otherwise.
    public var fallback: String?
}
