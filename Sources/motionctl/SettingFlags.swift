import ArgumentParser
import Motion

// Flags that stand for a setting (`--threshold` for `shake.threshold`) take their allowed values, and the words
// for a bad value, from the setting's definition (Docs/Settings.md): a value is accepted by both or by neither.

extension SettingDefinition {
    /// The definition of the setting a flag stands for; `key` must be one of ``all``.
    static func forFlag(_ key: String) -> SettingDefinition {
        guard let definition = named(key) else { preconditionFailure("no setting \(key) for a flag") }
        return definition
    }
}

extension ArgumentHelp {
    /// `text` and the values the setting `key` allows: `… Allowed: a number of g in (0, 10] (shake.threshold).`
    static func setting(_ text: String, _ key: String, valueName: String) -> ArgumentHelp {
        ArgumentHelp("\(text) Allowed: \(SettingDefinition.forFlag(key).allowed) (\(key)).", valueName: valueName)
    }
}

/// Checks `value`, given with `flag`, with the definition of the setting `key`.
///
/// - Throws: A `ValidationError` naming the flag, the value and what the setting allows:
///   `--threshold: expected a number of g in (0, 10], found "12"`.
func validateFlag(_ flag: String, _ value: SettingValue?, setting key: String) throws {
    guard let value else { return }
    if case .failure(let problem) = SettingDefinition.forFlag(key).check(value) {
        throw ValidationError("\(flag): \(problem)")
    }
}

/// ``validateFlag(_:_:setting:)`` for a number.
func validateFlag(_ flag: String, _ value: Double?, setting key: String) throws {
    try validateFlag(flag, value.map(SettingValue.number), setting: key)
}

/// ``validateFlag(_:_:setting:)`` for a whole number.
func validateFlag(_ flag: String, _ value: Int?, setting key: String) throws {
    try validateFlag(flag, value.map(SettingValue.integer), setting: key)
}
