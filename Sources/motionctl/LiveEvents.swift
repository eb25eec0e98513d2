import ArgumentParser
import Motion
import MotionClient
import MotionCore
import MotionIIO
import MotionTrace

/// What `shake` and `orientation` share: the detector's configuration from the settings and the flags, then one of
/// three inputs, each a `MotionSource` through the one path (``drive(_:configuration:request:sensors:demandInterval:flush:write:)``),
/// or simulated labelled scenarios (`--evaluate`).
protocol EventCommand {
    associatedtype Configuration
    associatedtype Replay: ReplayDefault
    /// The input: a trace, a device or the service.
    var input: InputOptions<Replay> { get }
    var evaluation: EvaluationOptions { get }
    /// The settings the configuration reads, each `true` when a flag given replaces it (`loadSettings`).
    var settingsKeys: [SettingKey: Bool] { get }
    /// The detector's configuration: the settings, overridden by the flags.
    func configuration(_ settings: MotionSettings) -> Configuration
    /// Scores the detector on simulated labelled scenarios.
    func evaluate(_ configuration: Configuration) throws(MotionError)
    /// Prints the events of `source` (a trace, a device or the service) until it ends, or SIGINT or SIGTERM.
    func printEvents(from source: MotionSource, _ configuration: Configuration) async throws(MotionError)
}

extension EventCommand {
    /// `--evaluate`'s sample rate, Hz: `--rate` (the one option for an input's rate), 100 by default.
    var simulatedRate: Double { input.live.rate ?? 100 }

    /// Loads the settings and runs the chosen input; an error ends the command with its exit status.
    func runChosenInput() async throws {
        Interruption.install()
        do {
            let configuration = configuration(try loadSettings(reading: settingsKeys))
            if evaluation.evaluate {
                try evaluate(configuration)
            } else {
                try await input.withSource { source throws(MotionError) in
                    try await printEvents(from: source, configuration)
                }
            }
        } catch {
            throw report(error)
        }
    }
}
