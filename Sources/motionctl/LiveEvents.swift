import ArgumentParser
import Motion
import MotionClient
import MotionCore
import MotionIIO
import MotionTrace

/// `--device` for the event commands (`shake`, `orientation`): the events of a live device, through a
/// `MotionManager` (the accelerometer runs while the command listens and is switched off when it ends).
struct LiveEventOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Read a live device instead of a trace: auto, or a name, label, id (iio:device0), sysfs path or /dev node.",
        valueName: "auto|name|path"))
    var device: String?

    @Flag(help: ArgumentHelp(
        "Read the motion service (motiond) instead of a trace or a device: its raw samples, shared with other programs."))
    var service = false

    @Flag(name: .customLong("include-base"), help: "With --device: also use accelerometers in the base of a convertible.")
    var includeBase = false

    @Flag(name: .customLong("exit-on-disconnect"), help: ArgumentHelp(
        "With --device: exit with status 69 when the device goes away, instead of waiting for it to come back."))
    var exitOnDisconnect = false

    /// `true` with --device or --service.
    var isLive: Bool { device != nil || service }

    /// The inputs of this group that were chosen, after `--trace` (given or not) and `--evaluate`.
    func chosen(trace: String?, evaluate: Bool = false) -> [Input] {
        [(Input.trace, trace != nil), (.device, device != nil), (.service, service), (.evaluate, evaluate)]
            .filter(\.1).map(\.0)
    }

    /// The options of `--device` only.
    var deviceOnlyOptions: [InputSpecificOption] {
        [
            .init("--include-base", given: includeBase, for: [.device]),
            .init("--exit-on-disconnect", given: exitOnDisconnect, for: [.device]),
        ]
    }

    /// The one input check (`validateInput`) for a command with this group, `--trace` and the options of `other`
    /// inputs; `offersEvaluate` for a command with `--evaluate`.
    @discardableResult
    func validate(
        trace: String?, evaluate: Bool = false, offersEvaluate: Bool = false, options: [InputSpecificOption]
    ) throws -> Input {
        let offers: [Input] = offersEvaluate ? Input.allCases : [.trace, .device, .service]
        let input = try validateInput(
            chosen: chosen(trace: trace, evaluate: evaluate), offers: offers, options: deviceOnlyOptions + options)
        if device?.isEmpty == true { throw ValidationError("--device needs a value: auto, or a device's name or path.") }
        return input
    }

    /// The device source: when the device goes away, the events wait for a matching one (reported on stderr, as
    /// `stream --device` does), or with --exit-on-disconnect end with status 69.
    var source: MotionSource? {
        if service { return .service() }
        let configuration = DeviceSourceConfiguration(
            includeBase: includeBase, reconnect: exitOnDisconnect ? .endOnDisconnect : .waitForDevice)
        return device.map { MotionSource.device($0, configuration: configuration, events: Self.report) }
    }

    /// Runs `body` with the chosen input as a source: the device or the service, else the trace (`nil` or `-`:
    /// stdin) paced by `pacing`, which must have accelerometer columns; its skipped rows are reported after.
    func withSource(
        trace: String?, lenient: Bool, pacing: ReplayPacing,
        _ body: (MotionSource) async throws(MotionError) -> Void
    ) async throws(MotionError) {
        if let source { return try await body(source) }
        let path = trace ?? "-"
        let reader = try openTrace(path, lenient: lenient)
        defer { warnAboutSkippedRows(reader) }
        try requireAccelerometer(reader, path: path)
        try await body(.trace(reader, pacing: pacing))
    }

    /// Prints a removal and a reconnection on stderr, in `stream --device`'s words.
    static func report(_ event: IIODeviceEvent) {
        switch event {
        case .disconnected(let disconnection):
            printToStandardError("motionctl: \(disconnection.error.message); waiting for a matching device")
        case .reconnected(let details, _):
            printToStandardError("motionctl: \(IIODeviceEvent.names(details)) connected; resuming")
        case .monitorUnavailable(let error):
            printToStandardError("motionctl: warning: cannot watch for devices (\(error)); a removal will end the command")
        case .opened, .detailsChanged:
            break
        }
    }

}

/// What `shake` and `orientation` share: the detector's configuration from the settings and the flags, then one of
/// three inputs, each a `MotionSource` through the one path (``drive(_:configuration:request:sensors:demandInterval:flush:write:)``),
/// or simulated labelled scenarios (`--evaluate`).
protocol EventCommand {
    associatedtype Configuration
    var live: LiveEventOptions { get }
    var evaluation: EvaluationOptions { get }
    /// `--trace`, or `nil` for stdin when no other input is chosen.
    var trace: String? { get }
    /// `--lenient`.
    var lenient: Bool { get }
    /// `--speed`, or `nil` for real time.
    var speed: ReplayPacing? { get }
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
    /// Loads the settings and runs the chosen input; an error ends the command with its exit status.
    func runChosenInput() async throws {
        Interruption.install()
        do {
            let configuration = configuration(try loadSettings(reading: settingsKeys))
            if evaluation.evaluate {
                try evaluate(configuration)
            } else {
                try await live.withSource(trace: trace, lenient: lenient, pacing: speed ?? .realTime) {
                    source throws(MotionError) in try await printEvents(from: source, configuration)
                }
            }
        } catch {
            throw report(error)
        }
    }
}
