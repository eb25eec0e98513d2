import MotionCore

/// One setting swift-motion knows: its key, its type with the allowed values, its default and what it does.
///
/// Keys are `group.name` in camel case (`shake.threshold`); the environment variable is `SWIFT_MOTION_` and the
/// key in upper snake case (`SWIFT_MOTION_SHAKE_THRESHOLD`).
public struct SettingDefinition: Hashable, Sendable {
    /// The kind of value and what is allowed.
    public enum Kind: Hashable, Sendable {
        /// A decimal number in a range, with its unit (`s`, `g`, `Hz`, `°`).
        case number(NumberRange, unit: String)
        /// A whole number in a range.
        case integer(ClosedRange<Int>)
        /// One of a fixed list of words.
        case choice([String])
        /// `true` or `false` (also `yes`/`no`, `on`/`off`, `1`/`0`).
        case flag
        /// Any text.
        case text
    }

    /// A range of numbers whose ends may be open.
    public struct NumberRange: Hashable, Sendable, CustomStringConvertible {
        /// The lower end.
        public var lowerBound: Double
        /// The upper end.
        public var upperBound: Double
        /// `true` when the lower end is allowed.
        public var includesLowerBound: Bool
        /// `true` when the upper end is allowed.
        public var includesUpperBound: Bool

        /// Creates a range; both ends are included unless stated.
        public init(
            _ lowerBound: Double, _ upperBound: Double, includesLowerBound: Bool = true, includesUpperBound: Bool = true
        ) {
            self.lowerBound = lowerBound
            self.upperBound = upperBound
            self.includesLowerBound = includesLowerBound
            self.includesUpperBound = includesUpperBound
        }

        /// `true` when `value` is in the range (and finite).
        public func contains(_ value: Double) -> Bool {
            guard value.isFinite else { return false }
            let aboveLower = includesLowerBound ? value >= lowerBound : value > lowerBound
            let belowUpper = includesUpperBound ? value <= upperBound : value < upperBound
            return aboveLower && belowUpper
        }

        /// Interval notation: `(0, 10]`.
        public var description: String {
            "\(includesLowerBound ? "[" : "(")\(SettingValue.formatted(lowerBound)), "
                + "\(SettingValue.formatted(upperBound))\(includesUpperBound ? "]" : ")")"
        }
    }

    /// The key, such as `shake.threshold`.
    public let key: SettingKey
    /// The type and allowed values.
    public let kind: Kind
    /// The built-in default.
    public let defaultValue: SettingValue
    /// What the setting does, with its unit.
    public let summary: String

    /// The environment variable that sets it: `SWIFT_MOTION_SHAKE_THRESHOLD` for `shake.threshold`.
    public var environmentVariable: String {
        var name = "SWIFT_MOTION_"
        for character in key.name {
            if character == "." {
                name.append("_")
            } else if character.isUppercase {
                name.append("_")
                name.append(character)
            } else {
                name.append(contentsOf: character.uppercased())
            }
        }
        return name
    }

    /// The allowed values in words: `a number of g in (0, 10]`, `one of a, b`.
    public var allowed: String {
        switch kind {
        case .number(let range, let unit): "a number\(unit.isEmpty ? "" : " of \(unit)") in \(range)"
        case .integer(let range): "a whole number in \(range.lowerBound)...\(range.upperBound)"
        case .choice(let words): "one of \(words.joined(separator: ", "))"
        case .flag: "true or false"
        case .text: "any text"
        }
    }

    /// Checks a value parsed elsewhere, such as a command-line flag's, exactly as ``parse(_:)`` checks its text:
    /// a flag that stands for this setting accepts the same values, and a bad one gets the same words.
    public func check(_ value: SettingValue) -> Result<SettingValue, MotionError> {
        // `description` writes a number so that `Double(_:)` reads it back exactly.
        parse(value.description)
    }

    /// Parses `text` as a value of this setting, or says what is allowed: a `MotionError.Code.invalidArgument`
    /// whose message is `expected a number of g in (0, 10], found "12"`.
    public func parse(_ text: String) -> Result<SettingValue, MotionError> {
        let trimmed = text.trimmingSpaces()
        switch kind {
        case .number(let range, _):
            guard let number = Double(trimmed), range.contains(number) else {
                return .failure(MotionError(.invalidArgument, "expected \(allowed), found \"\(trimmed)\""))
            }
            return .success(.number(number))
        case .integer(let range):
            guard let integer = Int(trimmed), range.contains(integer) else {
                return .failure(MotionError(.invalidArgument, "expected \(allowed), found \"\(trimmed)\""))
            }
            return .success(.integer(integer))
        case .choice(let words):
            guard words.contains(trimmed) else {
                return .failure(MotionError(.invalidArgument, "expected \(allowed), found \"\(trimmed)\""))
            }
            return .success(.text(trimmed))
        case .flag:
            switch trimmed.lowercased() {
            case "true", "yes", "on", "1": return .success(.flag(true))
            case "false", "no", "off", "0": return .success(.flag(false))
            default: return .failure(MotionError(.invalidArgument, "expected \(allowed), found \"\(trimmed)\""))
            }
        case .text:
            return .success(.text(trimmed))
        }
    }
}

/// A setting's value.
public enum SettingValue: Hashable, Sendable, CustomStringConvertible {
    /// A decimal number, in the setting's unit.
    case number(Double)
    /// A whole number.
    case integer(Int)
    /// A word or text (choices too).
    case text(String)
    /// `true` or `false`.
    case flag(Bool)

    /// The value as written in a settings file.
    public var description: String {
        switch self {
        case .number(let number):
            number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : "\(number)"
        case .integer(let integer): "\(integer)"
        case .text(let text): text
        case .flag(let flag): flag ? "true" : "false"
        }
    }

    static func formatted(_ value: Double) -> String { SettingValue.number(value).description }

    var numberValue: Double? {
        switch self {
        case .number(let number): number
        case .integer(let integer): Double(integer)
        default: nil
        }
    }
}

extension SettingDefinition {
    /// Every setting, in the order `motionctl settings` prints them.
    public static let all: [SettingDefinition] = [
        .init(key: .accelerometerUpdateInterval, kind: .number(.init(0, 1), unit: "s"), defaultValue: .number(0.01),
              summary: "Seconds between accelerometer updates; 0 for every sample."),
        .init(key: .gyroscopeUpdateInterval, kind: .number(.init(0, 1), unit: "s"), defaultValue: .number(0.01),
              summary: "Seconds between gyroscope updates; 0 for every sample."),
        .init(key: .magnetometerUpdateInterval, kind: .number(.init(0, 1), unit: "s"), defaultValue: .number(0.01),
              summary: "Seconds between magnetometer updates; 0 for every sample."),
        .init(key: .deviceMotionUpdateInterval, kind: .number(.init(0, 1), unit: "s"), defaultValue: .number(0.01),
              summary: "Seconds between device-motion updates; 0 for every sample."),
        .init(key: .deviceMotionReferenceFrame, kind: .choice(AttitudeReferenceFrame.allCases.map(\.rawValue)),
              defaultValue: .text(AttitudeReferenceFrame.xArbitraryZVertical.rawValue),
              summary: "The reference frame of device motion (Docs/Attitude.md)."),
        .init(key: .deviceMotionMagneticDeclination, kind: .number(.init(-180, 180), unit: "°"), defaultValue: .number(0),
              summary: "Magnetic declination in degrees, east positive, for the true-north frame."),
        .init(key: .shakeThreshold, kind: .number(.init(0, 10, includesLowerBound: false), unit: "g"),
              defaultValue: .number(0.3), summary: "Linear acceleration a stroke must reach, in g."),
        .init(key: .shakeMinimumReversals, kind: .integer(1...20), defaultValue: .integer(2),
              summary: "Reversals (changes of direction) that make a shake begin."),
        .init(key: .shakeMaximumDuration, kind: .number(.init(0, 60, includesLowerBound: false), unit: "s"),
              defaultValue: .number(1), summary: "Longest shake that ends rather than being cancelled, in seconds."),
        .init(key: .orientationHysteresis, kind: .number(.init(0, 45, includesUpperBound: false), unit: "°"),
              defaultValue: .number(15), summary: "Half the dead zone between neighbouring orientations, in degrees."),
        .init(key: .orientationSettleTime, kind: .number(.init(0, 10), unit: "s"), defaultValue: .number(0.5),
              summary: "How long a new orientation must stand before it is reported, in seconds."),
        .init(key: .orientationCutoff, kind: .number(.init(0, 50, includesLowerBound: false), unit: "Hz"),
              defaultValue: .number(1), summary: "Low-pass cutoff before classifying, in hertz."),
        .init(key: .pedometerHeight, kind: .number(.init(0.5, 2.5), unit: "m"), defaultValue: .number(1.70),
              summary: "The walker's height in metres: the step length is 0.415 × it (Docs/Pedometer.md)."),
        .init(key: .pedometerStepLength, kind: .number(.init(0, 3), unit: "m"), defaultValue: .number(0),
              summary: "A calibrated step length in metres; 0 derives it from pedometer.height."),
        .init(key: .deviceSelector, kind: .text, defaultValue: .text("auto"),
              summary: "The device to read: auto, or a name, label, id, sysfs path or /dev node."),
        .init(key: .deviceIncludeBase, kind: .flag, defaultValue: .flag(false),
              summary: "Also use accelerometers in the base of a convertible."),
    ]

    /// The definition of the setting named `name`, or `nil`.
    public static func named(_ name: String) -> SettingDefinition? { SettingKey(name).map(\.definition) }

    /// ``all`` by key.
    static let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })
}

extension String {
    func trimmingSpaces() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        return String(slice)
    }
}
