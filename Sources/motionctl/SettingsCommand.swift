import ArgumentParser
import Motion
import MotionCore

/// `motionctl settings`: the effective settings and where each value came from.
struct SettingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Print the effective settings and where each value came from.",
        discussion: """
            Sources, each overriding the ones before: the built-in defaults, /etc/swift-motion/settings.conf, \
            $XDG_CONFIG_HOME/swift-motion/settings.conf (~/.config/… when unset), SWIFT_MOTION_… environment \
            variables, then --set key=value. A file holds one 'key = value' per line; '#' starts a comment. An \
            unknown key or a value out of range exits with status 64, naming the key, the source and what is \
            allowed. See Docs/Settings.md.
            """
    )

    @Option(name: .customLong("set"), help: ArgumentHelp(
        "Override a setting, as a command-line source (repeatable).", valueName: "key=value"))
    var overrides: [String] = []

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(help: "Also print each setting's allowed values, environment variable and description.")
    var verbose = false

    func run() throws {
        do {
            let settings = try MotionSettings.load(commandLine: overrides)
            try StandardOutput.write(json ? Self.json(settings) : Self.text(settings, verbose: verbose))
        } catch {
            throw report(error)
        }
    }

    /// `key = value    (source)`, aligned; with `verbose`, the allowed values, variable and summary below each.
    static func text(_ settings: MotionSettings, verbose: Bool) -> String {
        let width = settings.entries.map { $0.definition.key.name.count + 3 + $0.value.description.count }.max() ?? 0
        var lines: [String] = []
        for entry in settings.entries {
            let assignment = "\(entry.definition.key) = \(entry.value)"
            lines.append(assignment + String(repeating: " ", count: width - assignment.count + 2) + "(\(entry.source))")
            if verbose {
                lines.append("    \(entry.definition.summary)")
                lines.append("    allowed: \(entry.definition.allowed); default \(entry.definition.defaultValue); "
                    + "environment \(entry.definition.environmentVariable)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ settings: MotionSettings) -> String {
        let entries: [JSON] = settings.entries.map { entry in
            let value: JSON =
                switch entry.value {
                case .number(let number): .number(number)
                case .integer(let integer): .number(Double(integer))
                case .flag(let flag): .bool(flag)
                case .text(let text): .string(text)
                }
            return .object([
                ("key", .string(entry.definition.key.name)), ("value", value),
                ("source", .string(entry.source.description)), ("allowed", .string(entry.definition.allowed)),
                ("default", .string(entry.definition.defaultValue.description)),
                ("environment", .string(entry.definition.environmentVariable)),
            ])
        }
        return JSON.object([("settings", .array(entries))]).rendered + "\n"
    }
}
