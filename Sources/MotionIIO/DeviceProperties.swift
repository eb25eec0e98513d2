public import MotionCore

/// Where a device value came from: a udev property, a sysfs attribute, an option given by the caller, or the
/// documented default.
public struct ValueSource: Hashable, Sendable, CustomStringConvertible {
    /// The kinds of sources.
    public enum Kind: String, Hashable, Sendable {
        /// A udev property, such as `ACCEL_MOUNT_MATRIX` (set by systemd's hwdb or a udev rule).
        case udevProperty
        /// A sysfs attribute of the device, such as `in_accel_scale`.
        case sysfsAttribute
        /// A value the caller gave (a command-line option or a configuration override).
        case override
        /// The default, used when no source has a valid value.
        case `default`
    }

    /// The kind of source.
    public var kind: Kind
    /// The property or attribute name, such as `in_accel_x_scale`; `nil` for defaults and overrides.
    public var name: String?

    /// Creates a source.
    package init(kind: Kind, name: String? = nil) {
        self.kind = kind
        self.name = name
    }

    /// The udev property `name`.
    package static func udevProperty(_ name: String) -> ValueSource { ValueSource(kind: .udevProperty, name: name) }
    /// The sysfs attribute `name` (relative to the device's sysfs folder).
    package static func sysfsAttribute(_ name: String) -> ValueSource { ValueSource(kind: .sysfsAttribute, name: name) }
    /// A caller-given value.
    public static let override = ValueSource(kind: .override)
    /// The default.
    public static let `default` = ValueSource(kind: .default)

    /// `udev ACCEL_MOUNT_MATRIX`, `sysfs in_accel_scale`, `override` or `default`.
    public var description: String {
        switch kind {
        case .udevProperty: "udev \(name ?? "")"
        case .sysfsAttribute: "sysfs \(name ?? "")"
        case .override: "override"
        case .default: "default"
        }
    }
}

/// A value together with where it came from.
public struct Sourced<Value: Hashable & Sendable>: Hashable, Sendable {
    /// The value.
    public var value: Value
    /// Where it came from.
    public var source: ValueSource

    /// Creates a sourced value.
    package init(_ value: Value, from source: ValueSource) {
        self.value = value
        self.source = source
    }
}

/// How device values read as text, in `motionctl devices` and in the metadata of recorded traces.
package enum DeviceValueText {
    /// `100` for a whole number, else Swift's shortest text (`0.009576`).
    package static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return value == 0 ? "0" : String(Int64(value)) }
        return "\(value)"
    }

    /// `0.009576 (sysfs in_accel_scale)` when the three axes agree, else `x …, y …, z …` with each source.
    package static func axes(_ values: [Sourced<Double>]) -> String {
        if values.allSatisfy({ $0 == values[0] }) { return "\(number(values[0].value)) (\(values[0].source))" }
        return zip(["x", "y", "z"], values).map { "\($0) \(number($1.value)) (\($1.source))" }.joined(separator: ", ")
    }
}

/// Where an accelerometer sits in a convertible or laptop: in the display (the default) or in the base.
public enum DeviceLocation: String, Hashable, Sendable, CaseIterable {
    /// In the display (or lid), or a device with one accelerometer. `lid` and an empty value mean this too.
    case display
    /// In the keyboard base of a convertible: skipped by default, as iio-sensor-proxy does.
    case base

    /// Parses `display`, `lid`, `base` or an empty value (display); `nil` for anything else.
    package init?(parsing text: String) {
        switch text.lowercased() {
        case "display", "lid", "": self = .display
        case "base": self = .base
        default: return nil
        }
    }
}

/// The sampling frequencies a device accepts, from `sampling_frequency_available`: a list (`"1 10 25 50"`) or
/// a range (`"[min step max]"`), in Hz.
public enum SamplingFrequencies: Hashable, Sendable, CustomStringConvertible {
    /// Discrete values, in the order the device lists them.
    case list([Double])
    /// Every `min + k·step` up to `max` (a step of 0 means any value between `min` and `max`).
    case range(min: Double, step: Double, max: Double)

    /// Parses the kernel's text, with `.` as the decimal point whatever the locale; `nil` when it is neither
    /// a list of numbers nor a `[min step max]` range.
    package init?(parsing text: String) {
        let trimmed = Substring(text).trimmingWhiteSpace()
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
            let parts = trimmed.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
            let numbers = parts.compactMap { parseDecimal($0) }
            guard numbers.count == 3, numbers.count == parts.count, numbers[0] <= numbers[2], numbers[1] >= 0 else {
                return nil
            }
            self = .range(min: numbers[0], step: numbers[1], max: numbers[2])
            return
        }
        let parts = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        let numbers = parts.compactMap { parseDecimal($0) }
        guard !numbers.isEmpty, numbers.count == parts.count else { return nil }
        self = .list(numbers)
    }

    /// The frequency to ask for to get at least `hertz`: the smallest available value ≥ `hertz` (0 Hz never
    /// counts), or the largest one when none is that high.
    package func nearest(atLeast hertz: Double) -> Double? {
        switch self {
        case .list(let values):
            let usable = values.filter { $0 > 0 }
            return usable.filter { $0 >= hertz }.min() ?? usable.max()
        case .range(let low, let step, let high):
            if hertz <= low { return low > 0 ? low : (step > 0 ? low + step : nil) }
            if hertz >= high { return high }
            guard step > 0 else { return hertz }
            let steps = ((hertz - low) / step).rounded(.up)
            return min(low + steps * step, high)
        }
    }

    /// The kernel's text form: `1 10 25` or `[1 1 400]`.
    public var description: String {
        switch self {
        case .list(let values): values.map(formatDecimal).joined(separator: " ")
        case .range(let low, let step, let high): "[\(formatDecimal(low)) \(formatDecimal(step)) \(formatDecimal(high))]"
        }
    }
}

/// The kind of motion sensor an IIO channel type measures.
public enum IIOSensorKind: String, Hashable, Sendable, CaseIterable {
    /// `in_accel_*`: acceleration, m/s² after offset and scale.
    case accelerometer = "accel"
    /// `in_anglvel_*`: angular velocity, rad/s after offset and scale.
    case gyroscope = "anglvel"
    /// `in_magn_*`: magnetic field, gauss after offset and scale.
    case magnetometer = "magn"

    /// The IIO channel type, such as `accel`.
    package var channelType: String { rawValue }

    /// The matching member of `SensorSet`.
    public var sensor: SensorSet {
        switch self {
        case .accelerometer: .accelerometer
        case .gyroscope: .gyroscope
        case .magnetometer: .magnetometer
        }
    }

    /// The factor from the IIO unit (after offset and scale) to swift-motion's: m/s² → g (÷ 9.80665),
    /// rad/s → rad/s, gauss → µT (× 100).
    package var unitFactor: Double {
        switch self {
        case .accelerometer: 1 / Acceleration.standardGravity
        case .gyroscope: 1
        case .magnetometer: 100
        }
    }
}

/// One buffered channel of a device: its libiio id, its scan index and its storage format.
package struct ScanChannel: Hashable, Sendable {
    /// The channel id, such as `accel_x` or `timestamp` (`scan_elements/in_<id>_en`).
    package var id: String
    /// Its position in a scan (`scan_elements/in_<id>_index`).
    package var index: Int
    /// Its storage format (`scan_elements/in_<id>_type`).
    package var type: ScanElementType

    /// Creates a channel description.
    package init(id: String, index: Int, type: ScanElementType) {
        self.id = id
        self.index = index
        self.type = type
    }
}

/// One three-axis sensor of an IIO device (a device can hold several: a combined IMU).
public struct IIOSensor: Hashable, Sendable {
    /// What it measures.
    public var kind: IIOSensorKind
    /// How to rotate readings into the device frame, and where that came from.
    public var mountMatrix: Sourced<MountMatrix>
    /// The scale of the x, y and z channels, each with its source: value = (raw + offset) × scale.
    public var scale: [Sourced<Double>]
    /// The offset of the x, y and z channels, each with its source (0 by default).
    public var offset: [Sourced<Double>]
    /// The current sampling frequency in Hz, when the device reports one.
    public var samplingFrequency: Sourced<Double>?
    /// The sampling frequencies the device accepts, when it lists them.
    public var availableSamplingFrequencies: Sourced<SamplingFrequencies>?
    /// The x, y and z scan channels, when the device can buffer them.
    package var scanChannels: [ScanChannel]?
    /// Whether the `in_<type>_<axis>_raw` attributes exist, for polled reading.
    package var hasRawAttributes: Bool

    /// Creates a sensor description.
    package init(
        kind: IIOSensorKind, mountMatrix: Sourced<MountMatrix>, scale: [Sourced<Double>], offset: [Sourced<Double>],
        samplingFrequency: Sourced<Double>? = nil, availableSamplingFrequencies: Sourced<SamplingFrequencies>? = nil,
        scanChannels: [ScanChannel]? = nil, hasRawAttributes: Bool = true
    ) {
        precondition(scale.count == 3 && offset.count == 3, "scale and offset have one value per axis")
        self.kind = kind
        self.mountMatrix = mountMatrix
        self.scale = scale
        self.offset = offset
        self.samplingFrequency = samplingFrequency
        self.availableSamplingFrequencies = availableSamplingFrequencies
        self.scanChannels = scanChannels
        self.hasRawAttributes = hasRawAttributes
    }

    /// The per-axis scales as a vector.
    package var scaleVector: SIMD3<Double> { SIMD3(scale[0].value, scale[1].value, scale[2].value) }
    /// The per-axis offsets as a vector.
    package var offsetVector: SIMD3<Double> { SIMD3(offset[0].value, offset[1].value, offset[2].value) }

    /// Converts raw channel values into the device frame and swift-motion's units:
    /// `M · ((raw + offset) × scale) × unitFactor`.
    ///
    /// For an accelerometer the result is in g, with no sign change after the matrix: a matrix from systemd's
    /// hwdb (or a kernel mount matrix) already puts readings in the convention Core Motion uses (upright
    /// portrait y ≈ −1 g, flat face up z ≈ −1 g). See `Docs/Devices.md`.
    package func convert(raw: SIMD3<Double>) -> SIMD3<Double> {
        mountMatrix.value.apply(to: (raw + offsetVector) * scaleVector) * kind.unitFactor
    }
}

/// How a device buffers scans, when it can.
public struct IIOBufferSupport: Hashable, Sendable {
    /// The `timestamp` scan channel, when the device has one.
    package var timestamp: ScanChannel?
    /// Whether the device has a `trigger/current_trigger` attribute (it takes a trigger).
    public var acceptsTrigger: Bool
    /// The trigger currently set, or `nil`.
    public var currentTrigger: String?
    /// Whether `buffer/watermark` exists (wake-ups can be batched).
    public var hasWatermark: Bool

    /// Creates a description.
    package init(timestamp: ScanChannel?, acceptsTrigger: Bool, currentTrigger: String?, hasWatermark: Bool) {
        self.timestamp = timestamp
        self.acceptsTrigger = acceptsTrigger
        self.currentTrigger = currentTrigger
        self.hasWatermark = hasWatermark
    }
}

/// A Linux IIO device with at least one motion sensor, as discovered through libudev.
public struct IIODevice: Hashable, Sendable, Identifiable {
    /// The kernel's device name, such as `iio:device0` (libiio's device id).
    public var id: String
    /// The chip name from sysfs `name`, such as `lis3dh`.
    public var name: String
    /// The sysfs `label`, such as `accel-display`, when present.
    public var label: String?
    /// The sysfs folder, such as `/sys/devices/platform/lis3dh-accel/iio:device0`.
    public var sysfsPath: String
    /// The character device, such as `/dev/iio:device0`, when there is one.
    public var deviceNode: String?
    /// Where its accelerometer sits, and where that came from.
    public var location: Sourced<DeviceLocation>
    /// Its sensors, in the order accelerometer, gyroscope, magnetometer.
    public var sensors: [IIOSensor]
    /// How it buffers scans, or `nil` when it cannot (it is then read by polling `*_raw`).
    public var buffer: IIOBufferSupport?
    /// The clock of its timestamps (`current_timestamp_clock`), such as `realtime` or `boottime`.
    public var timestampClock: String?
    /// The triggers in the same sysfs parent folder or named after the device, by name.
    public var triggers: [String]
    /// Problems met while reading its properties (a rejected mount matrix, an unknown location, a zero
    /// scale), each naming its source. The value from the next source was used.
    public var warnings: [String]

    /// Creates a description.
    package init(
        id: String, name: String, label: String? = nil, sysfsPath: String, deviceNode: String?,
        location: Sourced<DeviceLocation>, sensors: [IIOSensor], buffer: IIOBufferSupport?,
        timestampClock: String? = nil, triggers: [String] = [], warnings: [String] = []
    ) {
        self.id = id
        self.name = name
        self.label = label
        self.sysfsPath = sysfsPath
        self.deviceNode = deviceNode
        self.location = location
        self.sensors = sensors
        self.buffer = buffer
        self.timestampClock = timestampClock
        self.triggers = triggers
        self.warnings = warnings
    }

    /// The sensors it has.
    public var sensorSet: SensorSet {
        sensors.reduce(into: SensorSet()) { $0.insert($1.kind.sensor) }
    }

    /// The sensor of a kind, or `nil`.
    public func sensor(_ kind: IIOSensorKind) -> IIOSensor? {
        sensors.first { $0.kind == kind }
    }

    /// `true` when it can deliver buffered scans for every sensor it has.
    public var canBuffer: Bool {
        buffer != nil && deviceNode != nil && sensors.allSatisfy { $0.scanChannels != nil }
    }
}

/// Parses a decimal number with `.` as the decimal point, whatever the C locale.
func parseDecimal(_ text: some StringProtocol) -> Double? {
    let trimmed = Substring(text).trimmingWhiteSpace()
    guard !trimmed.isEmpty, trimmed.allSatisfy({ "0123456789+-.eE".contains($0) }), let value = Double(trimmed),
        value.isFinite
    else { return nil }
    return value
}

/// The shortest decimal text for a value: `100`, `12.5`, `0.009576`.
func formatDecimal(_ value: Double) -> String {
    MountMatrix.format(value)
}
