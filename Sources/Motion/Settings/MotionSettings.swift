public import Foundation
public import MotionAlgorithms
public import MotionCore

/// swift-motion's typed preferences, resolved from their sources, each value with where it came from — the
/// Settings-bundle idea (typed preferences with defaults, ranges and choices) for a Linux library and tool.
///
/// Sources, each overriding the ones before (``load(environment:commandLine:systemFile:userFile:)``):
/// 1. the built-in defaults (``SettingDefinition/all``);
/// 2. `/etc/swift-motion/settings.conf` (system-wide);
/// 3. `$XDG_CONFIG_HOME/swift-motion/settings.conf` (`~/.config/…` when `XDG_CONFIG_HOME` is unset);
/// 4. environment variables `SWIFT_MOTION_…` (`SWIFT_MOTION_SHAKE_THRESHOLD=0.5`);
/// 5. command-line `key=value` pairs (`motionctl … --set shake.threshold=0.5`, and the commands' own flags).
///
/// A settings file has one `key = value` per line; `#` starts a comment. An unknown key or a value out of its
/// range is an error naming the key, the source (file and line, variable or argument) and what is allowed.
public struct MotionSettings: Sendable {
    /// Where a value came from.
    public enum Source: Hashable, Sendable, CustomStringConvertible {
        /// The built-in default.
        case defaults
        /// A settings file, at a 1-based line.
        case file(path: String, line: Int)
        /// An environment variable.
        case environment(variable: String)
        /// A command-line argument, as written.
        case commandLine(argument: String)

        public var description: String {
            switch self {
            case .defaults: "default"
            case .file(let path, let line): "\(path):\(line)"
            case .environment(let variable): "environment \(variable)"
            case .commandLine(let argument): "command line \(argument)"
            }
        }
    }

    /// One resolved setting.
    public struct Entry: Hashable, Sendable {
        /// The setting.
        public var definition: SettingDefinition
        /// Its effective value.
        public var value: SettingValue
        /// Where the value came from.
        public var source: Source
    }

    private var values: [String: Entry]

    /// The built-in defaults only.
    public init() {
        values = Dictionary(uniqueKeysWithValues: SettingDefinition.all.map {
            ($0.key, Entry(definition: $0, value: $0.defaultValue, source: .defaults))
        })
    }

    /// Every setting, in ``SettingDefinition/all`` order.
    public var entries: [Entry] { SettingDefinition.all.map { values[$0.key]! } }

    /// The entry of `key`, or `nil` for an unknown key.
    public subscript(key: String) -> Entry? { values[key] }

    /// Sets `key` from `text`, recording `source`.
    ///
    /// - Throws: `MotionError.Code.invalidArgument` naming the key, the source and what is allowed, for an unknown
    ///   key or a value of the wrong type or out of range.
    public mutating func set(_ key: String, to text: String, from source: Source) throws(MotionError) {
        guard let definition = SettingDefinition.named(key) else {
            throw MotionError(
                .invalidArgument,
                "unknown setting \"\(key)\"\(source.location == nil ? " (\(source))" : ""); known settings: "
                    + SettingDefinition.all.map(\.key).joined(separator: ", "),
                at: source.location)
        }
        switch definition.parse(text) {
        case .success(let value):
            values[key] = Entry(definition: definition, value: value, source: source)
        case .failure(let problem):
            // A file source is named by the error's location; the others in the message.
            let origin = source.location == nil ? " (\(source))" : ""
            throw MotionError(.invalidArgument, "\(key)\(origin): \(problem)", at: source.location)
        }
    }

    /// Applies a settings file's text (`key = value` lines, `#` comments).
    /// - Throws: As ``set(_:to:from:)``, and for a line that is not `key = value`, naming the file and line.
    public mutating func apply(fileContents text: String, path: String) throws(MotionError) {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let content = String(line).trimmingSpaces()
            guard !content.isEmpty else { continue }
            let source = Source.file(path: path, line: index + 1)
            guard let equals = content.firstIndex(of: "=") else {
                throw MotionError(
                    .invalidArgument, "expected key = value, found \"\(content)\"", at: source.location)
            }
            let key = String(content[..<equals]).trimmingSpaces()
            let value = String(content[content.index(after: equals)...]).trimmingSpaces()
            try set(key, to: value, from: source)
        }
    }

    /// Applies a `key=value` argument from the command line.
    public mutating func apply(argument: String) throws(MotionError) {
        guard let equals = argument.firstIndex(of: "=") else {
            throw MotionError(.invalidArgument, "--set \(argument): expected key=value, such as shake.threshold=0.5")
        }
        try set(
            String(argument[..<equals]).trimmingSpaces(), to: String(argument[argument.index(after: equals)...]),
            from: .commandLine(argument: argument))
    }

    /// The default system-wide settings file.
    public static let systemFile = "/etc/swift-motion/settings.conf"

    /// The user's settings file: `$XDG_CONFIG_HOME/swift-motion/settings.conf`, or `$HOME/.config/…`.
    public static func userFile(environment: [String: String]) -> String? {
        if let base = environment["XDG_CONFIG_HOME"], base.hasPrefix("/") {
            return base + "/swift-motion/settings.conf"
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return home + "/.config/swift-motion/settings.conf"
    }

    /// Resolves the settings from every source, in order (see the type's documentation). A missing file is
    /// skipped; an unreadable one is an error.
    ///
    /// - Parameters:
    ///   - environment: The environment (default: the process's).
    ///   - commandLine: `key=value` arguments, applied last.
    ///   - systemFile: The system-wide file (default ``systemFile``).
    ///   - userFile: The user's file (default from `XDG_CONFIG_HOME` or `HOME`).
    /// - Throws: `MotionError` naming the key, the source and what is allowed.
    public static func load(
        environment: [String: String] = ProcessInfo.processInfo.environment, commandLine: [String] = [],
        systemFile: String? = MotionSettings.systemFile, userFile: String?? = nil
    ) throws(MotionError) -> MotionSettings {
        var settings = MotionSettings()
        for path in [systemFile, userFile ?? Self.userFile(environment: environment)].compactMap({ $0 }) {
            guard let text = try readIfPresent(path) else { continue }
            try settings.apply(fileContents: text, path: path)
        }
        for definition in SettingDefinition.all {
            guard let text = environment[definition.environmentVariable] else { continue }
            try settings.set(definition.key, to: text, from: .environment(variable: definition.environmentVariable))
        }
        for argument in commandLine { try settings.apply(argument: argument) }
        return settings
    }

    private static func readIfPresent(_ path: String) throws(MotionError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw MotionError(
                .permissionDenied, "cannot read the settings file \(path) (\(error.localizedDescription))",
                at: .init(file: path))
        }
    }

    // MARK: Typed values

    func number(_ key: String) -> Double { values[key]!.value.numberValue! }
    func integer(_ key: String) -> Int {
        if case .integer(let value) = values[key]!.value { return value }
        return Int(number(key))
    }
    func text(_ key: String) -> String { values[key]!.value.description }
    func flag(_ key: String) -> Bool {
        if case .flag(let value) = values[key]!.value { return value }
        return false
    }

    /// `accelerometer.updateInterval`, in seconds.
    public var accelerometerUpdateInterval: Double { number("accelerometer.updateInterval") }
    /// `gyroscope.updateInterval`, in seconds.
    public var gyroUpdateInterval: Double { number("gyroscope.updateInterval") }
    /// `magnetometer.updateInterval`, in seconds.
    public var magnetometerUpdateInterval: Double { number("magnetometer.updateInterval") }
    /// `deviceMotion.updateInterval`, in seconds.
    public var deviceMotionUpdateInterval: Double { number("deviceMotion.updateInterval") }
    /// `deviceMotion.referenceFrame`.
    public var referenceFrame: AttitudeReferenceFrame {
        AttitudeReferenceFrame(rawValue: text("deviceMotion.referenceFrame")) ?? .xArbitraryZVertical
    }
    /// `device.selector`.
    public var deviceSelector: String { text("device.selector") }
    /// `device.includeBase`.
    public var includeBaseAccelerometers: Bool { flag("device.includeBase") }

    /// The shake detector's configuration, from the `shake.*` settings and the detector's other defaults.
    public var shakeConfiguration: ShakeDetector<Double>.Configuration {
        ShakeDetector<Double>.Configuration(
            threshold: number("shake.threshold"), minimumReversals: integer("shake.minimumReversals"),
            maximumDuration: number("shake.maximumDuration"))
    }

    /// The orientation classifier's configuration, from the `orientation.*` settings.
    public var orientationConfiguration: OrientationClassifier<Double>.Configuration {
        OrientationClassifier<Double>.Configuration(
            cutoff: number("orientation.cutoff"), hysteresis: number("orientation.hysteresis") * .pi / 180,
            settleTime: number("orientation.settleTime"))
    }

    /// The pedometer's step-length model: `pedometer.stepLength` when above 0, else 0.415 × `pedometer.height`.
    public var stepLengthModel: StepLengthModel {
        let stepLength = number("pedometer.stepLength")
        return stepLength > 0 ? StepLengthModel(stepLength: stepLength) : .height(number("pedometer.height"))
    }

    /// The algorithms' configuration: reference frame, declination, shake, orientation and pedometer settings.
    public var motionConfiguration: MotionConfiguration {
        MotionConfiguration(
            referenceFrame: referenceFrame, magneticDeclination: number("deviceMotion.magneticDeclination"),
            shake: shakeConfiguration,
            orientation: orientationConfiguration, stepLength: stepLengthModel)
    }
}

extension MotionSettings.Source {
    var location: MotionError.Location? {
        switch self {
        case .file(let path, let line): MotionError.Location(file: path, line: line)
        default: nil
        }
    }
}

extension MotionManager {
    /// Creates a manager on `source` with the settings' algorithm configuration and update intervals. For the
    /// device the settings select: `source: .device(settings.deviceSelector, includeBase:
    /// settings.includeBaseAccelerometers)` (MotionIIO).
    public convenience init(settings: MotionSettings, source: MotionSource) throws(MotionError) {
        try self.init(source: source, configuration: settings.motionConfiguration)
        accelerometerUpdateInterval = settings.accelerometerUpdateInterval
        gyroUpdateInterval = settings.gyroUpdateInterval
        magnetometerUpdateInterval = settings.magnetometerUpdateInterval
        deviceMotionUpdateInterval = settings.deviceMotionUpdateInterval
    }
}
