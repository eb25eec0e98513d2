/// The sensors a sample, a trace or a device can carry.
public struct SensorSet: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw bit mask.
    public let rawValue: UInt8

    /// Creates a set from its bit mask.
    @inlinable
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The accelerometer: acceleration in g.
    public static let accelerometer = SensorSet(rawValue: 1 << 0)
    /// The gyroscope: rotation rate in rad/s.
    public static let gyroscope = SensorSet(rawValue: 1 << 1)
    /// The magnetometer: magnetic field in µT.
    public static let magnetometer = SensorSet(rawValue: 1 << 2)
    /// All three sensors.
    public static let all: SensorSet = [.accelerometer, .gyroscope, .magnetometer]

    /// The short names the CLI and the trace format use, in canonical order, with their sensors.
    public static let shortNames: [(name: String, sensor: SensorSet)] = [
        ("accel", .accelerometer), ("gyro", .gyroscope), ("mag", .magnetometer),
    ]

    /// Parses a comma-separated list of short names (`accel`, `gyro`, `mag`), such as `"accel,gyro"`.
    ///
    /// - Returns: `nil` when a name is unknown or the list is empty.
    public init?(shortNames list: String) {
        var set: SensorSet = []
        for part in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingSpaces()
            guard let entry = SensorSet.shortNames.first(where: { $0.name == name }) else { return nil }
            set.insert(entry.sensor)
        }
        guard !set.isEmpty else { return nil }
        self = set
    }

    /// The short names of the members in canonical order, such as `["accel", "gyro"]`.
    public var shortNameList: [String] { SensorSet.shortNames.filter { contains($0.sensor) }.map(\.name) }

    /// The short names of the members, comma-separated in canonical order, such as `accel,gyro`.
    public var description: String { shortNameList.joined(separator: ",") }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// One instant of motion data: a timestamp and the readings of whichever sensors sampled at that instant.
///
/// Sensors can run at different rates, so any reading may be absent (`nil`). The timestamp is in seconds on
/// the source's clock: `CLOCK_BOOTTIME` for live devices (like Core Motion's "since boot"), and the trace's own
/// time base (its `t` column) for recordings. See `Docs/Conventions.md`.
public struct MotionSample: Hashable, Sendable {
    /// The instant the readings are valid for, in seconds.
    public var timestamp: Double
    /// The accelerometer reading in g (Core Motion sign), or `nil` when the accelerometer did not sample.
    public var acceleration: Acceleration?
    /// The gyroscope reading in rad/s, or `nil` when the gyroscope did not sample.
    public var rotationRate: RotationRate?
    /// The magnetometer reading in µT, or `nil` when the magnetometer did not sample.
    public var magneticField: MagneticField?

    /// Creates a sample.
    /// - Parameters:
    ///   - timestamp: Seconds on the source's clock.
    ///   - acceleration: Acceleration in g, Core Motion sign, or `nil`.
    ///   - rotationRate: Rotation rate in rad/s, or `nil`.
    ///   - magneticField: Magnetic field in µT, or `nil`.
    @inlinable
    public init(
        timestamp: Double,
        acceleration: Acceleration? = nil,
        rotationRate: RotationRate? = nil,
        magneticField: MagneticField? = nil
    ) {
        self.timestamp = timestamp
        self.acceleration = acceleration
        self.rotationRate = rotationRate
        self.magneticField = magneticField
    }

    /// The sensors that have a reading in this sample.
    @inlinable
    public var sensors: SensorSet {
        var set: SensorSet = []
        if acceleration != nil { set.insert(.accelerometer) }
        if rotationRate != nil { set.insert(.gyroscope) }
        if magneticField != nil { set.insert(.magnetometer) }
        return set
    }

    /// The reading of `sensor` (one of `.accelerometer`, `.gyroscope`, `.magnetometer`) in its unit (g, rad/s,
    /// µT), or `nil` when the sample has none.
    package func vector(of sensor: SensorSet) -> SIMD3<Double>? {
        switch sensor {
        case .accelerometer: acceleration?.vector
        case .gyroscope: rotationRate?.vector
        case .magnetometer: magneticField?.vector
        default: nil
        }
    }

    /// A copy that keeps only the readings of `sensors`.
    @inlinable
    public func restricted(to sensors: SensorSet) -> MotionSample {
        MotionSample(
            timestamp: timestamp,
            acceleration: sensors.contains(.accelerometer) ? acceleration : nil,
            rotationRate: sensors.contains(.gyroscope) ? rotationRate : nil,
            magneticField: sensors.contains(.magnetometer) ? magneticField : nil
        )
    }
}
