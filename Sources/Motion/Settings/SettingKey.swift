/// The name of a setting swift-motion knows, checked: the static members name every one (`.shakeThreshold` is
/// `shake.threshold`), and ``init(_:)`` takes text from a file, a variable or a command line.
public struct SettingKey: Hashable, Sendable, CustomStringConvertible {
    /// The name, `group.name` in camel case: `shake.threshold`.
    public let name: String

    private init(known name: String) {
        self.name = name
    }

    /// The key named `name`, or `nil` when no setting has that name.
    public init?(_ name: String) {
        guard let key = Self.all.first(where: { $0.name == name }) else { return nil }
        self = key
    }

    public var description: String { name }

    /// `accelerometer.updateInterval`: seconds between accelerometer updates.
    public static let accelerometerUpdateInterval = SettingKey(known: "accelerometer.updateInterval")
    /// `gyroscope.updateInterval`: seconds between gyroscope updates.
    public static let gyroscopeUpdateInterval = SettingKey(known: "gyroscope.updateInterval")
    /// `magnetometer.updateInterval`: seconds between magnetometer updates.
    public static let magnetometerUpdateInterval = SettingKey(known: "magnetometer.updateInterval")
    /// `deviceMotion.updateInterval`: seconds between device-motion updates.
    public static let deviceMotionUpdateInterval = SettingKey(known: "deviceMotion.updateInterval")
    /// `deviceMotion.referenceFrame`: the reference frame of device motion.
    public static let deviceMotionReferenceFrame = SettingKey(known: "deviceMotion.referenceFrame")
    /// `deviceMotion.magneticDeclination`: degrees, east positive.
    public static let deviceMotionMagneticDeclination = SettingKey(known: "deviceMotion.magneticDeclination")
    /// `shake.threshold`: g.
    public static let shakeThreshold = SettingKey(known: "shake.threshold")
    /// `shake.minimumReversals`.
    public static let shakeMinimumReversals = SettingKey(known: "shake.minimumReversals")
    /// `shake.maximumDuration`: seconds.
    public static let shakeMaximumDuration = SettingKey(known: "shake.maximumDuration")
    /// `orientation.hysteresis`: degrees.
    public static let orientationHysteresis = SettingKey(known: "orientation.hysteresis")
    /// `orientation.settleTime`: seconds.
    public static let orientationSettleTime = SettingKey(known: "orientation.settleTime")
    /// `orientation.cutoff`: hertz.
    public static let orientationCutoff = SettingKey(known: "orientation.cutoff")
    /// `pedometer.height`: metres.
    public static let pedometerHeight = SettingKey(known: "pedometer.height")
    /// `pedometer.stepLength`: metres (0: from the height).
    public static let pedometerStepLength = SettingKey(known: "pedometer.stepLength")
    /// `device.selector`.
    public static let deviceSelector = SettingKey(known: "device.selector")
    /// `device.includeBase`.
    public static let deviceIncludeBase = SettingKey(known: "device.includeBase")

    /// Every key, in the order of ``SettingDefinition/all``.
    static let all: [SettingKey] = [
        .accelerometerUpdateInterval, .gyroscopeUpdateInterval, .magnetometerUpdateInterval,
        .deviceMotionUpdateInterval, .deviceMotionReferenceFrame, .deviceMotionMagneticDeclination, .shakeThreshold,
        .shakeMinimumReversals, .shakeMaximumDuration, .orientationHysteresis, .orientationSettleTime,
        .orientationCutoff, .pedometerHeight, .pedometerStepLength, .deviceSelector, .deviceIncludeBase,
    ]

    /// The setting's definition (every key has one: `SettingDefinition.all` is written from the same list).
    public var definition: SettingDefinition {
        guard let definition = SettingDefinition.byKey[self] else { preconditionFailure("no definition of \(name)") }
        return definition
    }
}
