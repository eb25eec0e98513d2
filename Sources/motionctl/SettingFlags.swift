import ArgumentParser
import Foundation
import Motion
import MotionCore

// Flags that stand for a setting (`--threshold` for `shake.threshold`) take their allowed values, and the words
// for a bad value, from the setting's definition (Docs/Settings.md): a value is accepted by both or by neither.

extension ArgumentHelp {
    /// `text` and the values the setting `key` allows: `… Allowed: a number of g in (0, 10] (shake.threshold).`
    static func setting(_ text: String, _ key: SettingKey, valueName: String) -> ArgumentHelp {
        ArgumentHelp("\(text) Allowed: \(key.definition.allowed) (\(key)).", valueName: valueName)
    }
}

/// Checks `value`, given with `flag`, with the definition of the setting `key`.
///
/// - Throws: A `ValidationError` naming the flag, the value and what the setting allows:
///   `--threshold: expected a number of g in (0, 10], found "12"`.
func validateFlag(_ flag: String, _ value: SettingValue?, setting key: SettingKey) throws {
    guard let value else { return }
    if case .failure(let problem) = key.definition.check(value) {
        throw ValidationError("\(flag): \(problem)")
    }
}

/// ``validateFlag(_:_:setting:)`` for a number.
func validateFlag(_ flag: String, _ value: Double?, setting key: SettingKey) throws {
    try validateFlag(flag, value.map(SettingValue.number), setting: key)
}

/// ``validateFlag(_:_:setting:)`` for a whole number.
func validateFlag(_ flag: String, _ value: Int?, setting key: SettingKey) throws {
    try validateFlag(flag, value.map(SettingValue.integer), setting: key)
}

/// The settings of a command that reads `keys` (key → `true` when a flag given on this command line replaces
/// it): a bad value of one of those, in a file or the environment, fails the command, naming the source (file and
/// line) and the key; a bad value of any other key, an unknown key or a line that is not `key = value` is skipped
/// with one warning on stderr, so one bad key only affects the commands that use it. An unreadable file is still
/// an error. (`motionctl settings` reports every problem: it uses `MotionSettings.load`.)
func loadSettings(reading keys: [SettingKey: Bool]) throws(MotionError) -> MotionSettings {
    let (settings, problems) = try MotionSettings.loadSkippingProblems()
    for problem in problems {
        if let key = problem.key, keys[key] == false { throw problem.error }
    }
    for problem in problems {
        let why =
            problem.key.flatMap { keys[$0] } == true
            ? "ignored: a flag replaces it" : "ignored: this command does not use it"
        printToStandardError("motionctl: warning: \(problem.error) (\(why); motionctl settings lists every problem)")
    }
    return settings
}
