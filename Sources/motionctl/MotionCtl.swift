import ArgumentParser
import MotionCore
import MotionIIO
import MotionCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl`: stream, record and simulate motion data. See `Docs/CLI.md`.
@main
struct MotionCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motionctl",
        abstract: "Stream, filter and simulate motion data from Linux IIO devices and recorded traces.",
        discussion: """
            Units: acceleration in g (Core Motion sign: upright portrait reads y = -1), rotation rate in rad/s, \
            magnetic field in µT, time in seconds. Exit status: 0 success (also after SIGINT/SIGTERM or a closed \
            output pipe), 64 usage, 65 bad input data, 66 no input, 69 device unavailable, 70 internal error, \
            73 output file exists, 74 I/O error, 77 permission denied. See Docs/CLI.md.
            """,
        version: SwiftMotion.version,
        subcommands: [StreamCommand.self, AttitudeCommand.self, SimulateCommand.self, OrientationCommand.self, ShakeCommand.self, StepsCommand.self, ActivityCommand.self, DevicesCommand.self, RecordCommand.self, SettingsCommand.self, InfoCommand.self, PlotCommand.self, HistoryCommand.self, PublishCommand.self]
    )

    /// Parses and runs a command; usage errors become one `motionctl: error: …` line on stderr with status 64.
    static func main() async {
        let arguments = CommandLineArguments.joiningNegativeValues(Array(CommandLine.arguments.dropFirst()))
        if arguments == ["--version"] {
            print(versionReport)
            return
        }
        if let unknown = unknownWord(in: arguments) {
            printToStandardError("motionctl: error: \(unknown.message) (see 'motionctl\(unknown.command) --help')")
            Glibc.exit(ExitStatus.usage)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitCode(for: error)
            let message = self.message(for: error)
            if status == .success {
                if !message.isEmpty { print(fullMessage(for: error)) }  // --help, --version
            } else if !message.isEmpty {
                let names = configuration.subcommands.compactMap { $0.configuration.commandName }
                let subcommand = arguments.first.flatMap { names.contains($0) ? " \($0)" : nil } ?? ""
                let oneLine = message.split(whereSeparator: \.isNewline).joined(separator: " ")
                printToStandardError("motionctl: error: \(oneLine) (see 'motionctl\(subcommand) --help')")
            }
            Glibc.exit(status.rawValue)
        }
    }

    /// An unknown command or option with the closest valid one (`Suggestions`), checked before parsing so that no
    /// other check answers first; the command it was given to (` stream`), or `""` for none.
    static func unknownWord(in arguments: [String]) -> (message: String, command: String)? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }  // the parser's own answer
        let commands = configuration.subcommands
        guard let command = commands.first(where: { $0.configuration.commandName == first }) else {
            guard first != "help" else { return nil }
            let names = commands.compactMap { $0.configuration.commandName }
            let suggestion = Suggestions.closest(to: first, among: names)
            let list = suggestion == nil ? " The commands are \(names.joined(separator: ", "))." : ""
            return (Suggestions.message(kind: "command", first, suggestion) + list, "")
        }
        guard let (word, suggestion) = Suggestions.unknownOption(in: Array(arguments.dropFirst()), of: command) else {
            return nil
        }
        return (Suggestions.message(kind: "option", word, suggestion), " \(first)")
    }

    /// `motionctl --version`: ours, and the versions of the system libraries this process loaded.
    static var versionReport: String { SystemLibraries.versionReport(tool: "motionctl") }
}
