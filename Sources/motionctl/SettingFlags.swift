import ArgumentParser
import Foundation
import Motion
import MotionCore

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

/// The settings of a command that reads `keys` (key → `true` when a flag given on this command line replaces
/// it): a bad value of one of those, in a file or the environment, fails the command, naming the source (file and
/// line) and the key; a bad value of any other key, an unknown key or a line that is not `key = value` is skipped
/// with one warning on stderr, so one bad key only affects the commands that use it. An unreadable file is still
/// an error. (`motionctl settings` reports every problem: it uses `MotionSettings.load`.)
func loadSettings(reading keys: [String: Bool]) throws(MotionError) -> MotionSettings {
    let environment = ProcessInfo.processInfo.environment
    var settings = MotionSettings()
    var problems: [(key: String?, error: MotionError)] = []
    func set(_ key: String, _ text: String, from source: MotionSettings.Source) {
        do {
            try settings.set(key, to: text, from: source)
        } catch {
            problems.append((key, error))
        }
    }
    let files = [MotionSettings.systemFile, MotionSettings.userFile(environment: environment)].compactMap { $0 }
    for path in files where FileManager.default.fileExists(atPath: path) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw MotionError(
                .permissionDenied, "cannot read the settings file \(path) (\(error.localizedDescription))",
                at: .init(file: path))
        }
        // Line by line (the syntax of `MotionSettings.apply(fileContents:path:)`), so a bad line stops nothing else.
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let content = rawLine.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            guard !content.isEmpty else { continue }
            let source = MotionSettings.Source.file(path: path, line: index + 1)
            guard let equals = content.firstIndex(of: "=") else {
                problems.append((nil, MotionError(
                    .invalidArgument, "expected key = value, found \"\(content)\"",
                    at: .init(file: path, line: index + 1))))
                continue
            }
            let key = content[..<equals].trimmingCharacters(in: .whitespaces)
            set(key, content[content.index(after: equals)...].trimmingCharacters(in: .whitespaces), from: source)
        }
    }
    for definition in SettingDefinition.all {
        guard let text = environment[definition.environmentVariable] else { continue }
        set(definition.key, text, from: .environment(variable: definition.environmentVariable))
    }
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
