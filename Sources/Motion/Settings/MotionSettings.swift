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

    /// The values that are not the defaults.
    private var values: [SettingKey: Entry] = [:]

    /// The built-in defaults only.
    public init() {}

    /// Every setting, in ``SettingDefinition/all`` order.
    public var entries: [Entry] { SettingDefinition.all.map { self[$0.key] } }

    /// The entry of `key`: its value and where it came from.
    public subscript(key: SettingKey) -> Entry {
        values[key] ?? Entry(definition: key.definition, value: key.definition.defaultValue, source: .defaults)
    }

    /// Sets `key` from `text`, recording `source`.
    ///
    /// - Throws: `MotionError.Code.invalidArgument` naming the key, the source and what is allowed, for a value of
    ///   the wrong type or out of range.
    public mutating func set(_ key: SettingKey, to text: String, from source: Source) throws(MotionError) {
        let definition = key.definition
        switch definition.parse(text) {
        case .success(let value):
            values[key] = Entry(definition: definition, value: value, source: source)
        case .failure(let problem):
            // A file source is named by the error's location; the others in the message.
            let origin = source.location == nil ? " (\(source))" : ""
            throw MotionError(.invalidArgument, "\(key)\(origin): \(problem)", at: source.location)
        }
    }

    /// Sets the setting named `name` from `text` (a file's, a variable's or a command line's words).
    ///
    /// - Throws: As `set(_:to:from:)` with a key, and for a name no setting has, listing the known ones.
    public mutating func set(_ name: String, to text: String, from source: Source) throws(MotionError) {
        guard let key = SettingKey(name) else {
            throw MotionError(
                .invalidArgument,
                "unknown setting \"\(name)\"\(source.location == nil ? " (\(source))" : ""); known settings: "
                    + SettingKey.all.map(\.name).joined(separator: ", "),
                at: source.location)
        }
        try set(key, to: text, from: source)
    }

    /// A bad line or value that ``loadSkippingProblems(environment:systemFile:userFile:)`` skipped.
    public struct Problem: Sendable {
        /// The setting the line or variable names, when it names a known one.
        public var key: SettingKey?
        /// What is wrong, with the file and line or the variable.
        public var error: MotionError
    }

    /// Applies a settings file's text (`key = value` lines, `#` comments).
    /// - Throws: As `set(_:to:from:)` with a name, and for a line that is not `key = value`, naming the file and
    ///   line.
    public mutating func apply(fileContents text: String, path: String) throws(MotionError) {
        try apply(fileContents: text, path: path) { (problem) throws(MotionError) in throw problem.error }
    }

    /// Applies a settings file's text, handing each bad line to `problem` (which may throw to stop).
    mutating func apply(
        fileContents text: String, path: String, problem: (Problem) throws(MotionError) -> Void
    ) throws(MotionError) {
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let content = String(line).trimmingSpaces()
            guard !content.isEmpty else { continue }
            let source = Source.file(path: path, line: index + 1)
            guard let equals = content.firstIndex(of: "=") else {
                try problem(Problem(
                    key: nil,
                    error: MotionError(.invalidArgument, "expected key = value, found \"\(content)\"", at: source.location)))
                continue
            }
            let name = String(content[..<equals]).trimmingSpaces()
            let value = String(content[content.index(after: equals)...]).trimmingSpaces()
            do {
                try set(name, to: value, from: source)
            } catch {
                try problem(Problem(key: SettingKey(name), error: error))
            }
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
        var settings = try resolve(environment: environment, systemFile: systemFile, userFile: userFile) {
            (problem) throws(MotionError) in throw problem.error
        }
        for argument in commandLine { try settings.apply(argument: argument) }
        return settings
    }

    /// Resolves the settings from the files and the environment as ``load(environment:commandLine:systemFile:userFile:)``
    /// does, but skips each bad line or value (the default stays) and returns it, so that a caller fails only for
    /// the settings it uses. A file that exists and cannot be read is still an error.
    public static func loadSkippingProblems(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        systemFile: String? = MotionSettings.systemFile, userFile: String?? = nil
    ) throws(MotionError) -> (settings: MotionSettings, problems: [Problem]) {
        var problems: [Problem] = []
        let settings = try resolve(environment: environment, systemFile: systemFile, userFile: userFile) {
            problems.append($0)
        }
        return (settings, problems)
    }

    /// The defaults, then the files, then the environment; each bad line or value goes to `problem`.
    private static func resolve(
        environment: [String: String], systemFile: String?, userFile: String??,
        problem: (Problem) throws(MotionError) -> Void
    ) throws(MotionError) -> MotionSettings {
        var settings = MotionSettings()
        for path in [systemFile, userFile ?? Self.userFile(environment: environment)].compactMap({ $0 }) {
            guard let text = try readIfPresent(path) else { continue }
            try settings.apply(fileContents: text, path: path, problem: problem)
        }
        for definition in SettingDefinition.all {
            guard let text = environment[definition.environmentVariable] else { continue }
            do {
                try settings.set(definition.key, to: text, from: .environment(variable: definition.environmentVariable))
            } catch {
                try problem(Problem(key: definition.key, error: error))
            }
        }
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

    // Each setting's value has its definition's kind (`set` parses it so), so each kind reads back its own.
    func number(_ key: SettingKey) -> Double { self[key].value.numberValue ?? key.definition.defaultValue.numberValue ?? 0 }
    func integer(_ key: SettingKey) -> Int {
        if case .integer(let value) = self[key].value { return value }
        return Int(number(key))
    }
    func text(_ key: SettingKey) -> String { self[key].value.description }
    func flag(_ key: SettingKey) -> Bool {
        if case .flag(let value) = self[key].value { return value }
        return false
    }

    /// `accelerometer.updateInterval`, in seconds.
    public var accelerometerUpdateInterval: Double { number(.accelerometerUpdateInterval) }
    /// `gyroscope.updateInterval`, in seconds.
    public var gyroUpdateInterval: Double { number(.gyroscopeUpdateInterval) }
    /// `magnetometer.updateInterval`, in seconds.
    public var magnetometerUpdateInterval: Double { number(.magnetometerUpdateInterval) }
    /// `deviceMotion.updateInterval`, in seconds.
    public var deviceMotionUpdateInterval: Double { number(.deviceMotionUpdateInterval) }
    /// `deviceMotion.referenceFrame`.
    public var referenceFrame: AttitudeReferenceFrame {
        AttitudeReferenceFrame(rawValue: text(.deviceMotionReferenceFrame)) ?? .xArbitraryZVertical
    }
    /// `device.selector`.
    public var deviceSelector: String { text(.deviceSelector) }
    /// `device.includeBase`.
    public var includeBaseAccelerometers: Bool { flag(.deviceIncludeBase) }

    /// The shake detector's configuration, from the `shake.*` settings and the detector's other defaults.
    public var shakeConfiguration: ShakeDetector<Double>.Configuration {
        ShakeDetector<Double>.Configuration(
            threshold: number(.shakeThreshold), minimumReversals: integer(.shakeMinimumReversals),
            maximumDuration: number(.shakeMaximumDuration))
    }

    /// The orientation classifier's configuration, from the `orientation.*` settings.
    public var orientationConfiguration: OrientationClassifier<Double>.Configuration {
        OrientationClassifier<Double>.Configuration(
            cutoff: number(.orientationCutoff), hysteresis: number(.orientationHysteresis) * .pi / 180,
            settleTime: number(.orientationSettleTime))
    }

    /// The pedometer's step-length model: `pedometer.stepLength` (fixed) when above 0, else 0.415 × `pedometer.height`
    /// at 110 steps/min, proportional to the cadence (`StepLengthModel.height(_:ratio:)`).
    public var stepLengthModel: StepLengthModel {
        let stepLength = number(.pedometerStepLength)
        return stepLength > 0 ? StepLengthModel(stepLength: stepLength) : .height(number(.pedometerHeight))
    }

    /// The algorithms' configuration: reference frame, declination, shake, orientation and pedometer settings.
    public var motionConfiguration: MotionConfiguration {
        MotionConfiguration(
            referenceFrame: referenceFrame, magneticDeclination: number(.deviceMotionMagneticDeclination),
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
