import ArgumentParser
import Motion
import MotionClient
import MotionCore
import MotionIIO
import MotionTrace

/// Where a command's samples come from: the same options on every command that reads motion (`stream`, `attitude`,
/// `shake`, `orientation`, `steps`, `activity`; `Docs/CLI.md`, "Inputs"). One input per run; each option applies to
/// some inputs and is refused with the others, naming why (`validate`). `Replay` gives the command's default
/// replay speed.
struct InputOptions<Replay: ReplayDefault>: ParsableArguments {
    @Option(
        help: ArgumentHelp("The trace to read, in the canonical CSV format; '-' reads stdin.", valueName: "file"),
        completion: .traceFile)
    var trace: String?

    // A live device instead: --device, --rate, --mode, --mount-matrix, … (LiveDevices.swift, Docs/Devices.md).
    @OptionGroup var live: LiveDeviceOptions

    @Flag(help: ArgumentHelp(
        "Read the motion service (motiond) instead: its raw samples, shared with other programs (Docs/Service.md)."))
    var service = false

    @Option(
        name: .customLong("speed"),
        help: ArgumentHelp(
            "Replay speed: realtime, max, or a factor such as 2 or 0.5 "
                + "(default: \(Replay.pacing.defaultValueDescription)).",
            valueName: "speed"))
    var speedOption: ReplayPacing?

    @Flag(help: "Skip malformed rows instead of stopping; a count of skipped rows by reason goes to stderr.")
    var lenient = false

    /// `--speed`, or the command's default.
    var speed: ReplayPacing { speedOption ?? Replay.pacing }

    /// The inputs chosen, `--evaluate` included for a command that offers it.
    func chosen(evaluate: Bool = false) -> [Input] {
        [(Input.trace, trace != nil), (.device, live.device != nil), (.service, service), (.evaluate, evaluate)]
            .filter(\.1).map(\.0)
    }

    /// The one input check: exactly one input, and every option given applies to it (this group's and `options`,
    /// the command's own); `offersEvaluate` for a command with `--evaluate`.
    @discardableResult
    func validate(
        evaluate: Bool = false, offersEvaluate: Bool = false, options: [InputSpecificOption] = []
    ) throws -> Input {
        let offers: [Input] = offersEvaluate ? Input.allCases : [.trace, .device, .service]
        // --rate is the rate of the samples: asked of a device, or simulated by --evaluate.
        let deviceOptions = live.deviceOnlyOptions.map { option in
            guard option.name == "--rate" && offersEvaluate else { return option }
            return InputSpecificOption(option.name, given: option.given, for: [.device, .evaluate])
        }
        let input = try validateInput(
            chosen: chosen(evaluate: evaluate), offers: offers,
            options: .traceOnly(speed: speedOption != nil, lenient: lenient) + deviceOptions + options)
        if input == .device { try live.validateDevice() }
        return input
    }

    /// The live source, or `nil` for a trace: the service, or the device with this group's capture options (the
    /// rate from --rate, else the run's demand). When the device goes away, the command waits for a matching one
    /// (reported on stderr, as `stream --device` does), or with --exit-on-disconnect ends with status 69.
    var liveSource: MotionSource? {
        if service { return .service() }
        guard let device = live.device else { return nil }
        let configuration = DeviceSourceConfiguration(
            includeBase: live.includeBase, capture: live.configuration(interval: 0),
            reconnect: live.exitOnDisconnect ? .endOnDisconnect : .waitForDevice)
        return .device(device, configuration: configuration, events: reportDeviceEvent)
    }

    /// Runs `body` with the chosen input as a source: the device or the service, else the trace (`nil` or `-`:
    /// stdin) at ``speed``, which must have accelerometer columns; its skipped rows are reported after.
    func withSource(_ body: (MotionSource) async throws(MotionError) -> Void) async throws(MotionError) {
        if let source = liveSource { return try await body(source) }
        let path = trace ?? "-"
        let reader = try openTrace(path, lenient: lenient)
        defer { warnAboutSkippedRows(reader) }
        try requireAccelerometer(reader, path: path)
        try await body(.trace(reader, pacing: speed))
    }
}

/// A command's default replay speed for ``InputOptions``.
protocol ReplayDefault {
    static var pacing: ReplayPacing { get }
}

/// Replayed as a live device would deliver it (`stream`, `shake`, `orientation`): events appear when they would.
enum RealTimeReplay: ReplayDefault {
    static var pacing: ReplayPacing { .realTime }
}

/// Replayed as fast as it is read (`attitude`, `steps`, `activity`): a whole recording's result at once.
enum FullSpeedReplay: ReplayDefault {
    static var pacing: ReplayPacing { .max }
}

/// Prints a removal and a reconnection of an input's device on stderr, in `stream --device`'s words.
func reportDeviceEvent(_ event: IIODeviceEvent) {
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
