import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionEvaluation
import MotionTesting
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl shake`: shake gestures (began, ended, cancelled) from a trace, or the detector's figures on
/// simulated labelled scenarios.
struct ShakeCommand: AsyncParsableCommand, EventCommand {
    static let configuration = CommandConfiguration(
        commandName: "shake",
        abstract: "Print shake gestures (began, ended, cancelled) of a trace or a live device.",
        discussion: """
            Each line is one event with UIKit's phases: began when a back-and-forth along one line has made \
            --reversals reversals, ended when it stops within --max-duration, cancelled when it goes on longer \
            (tooLong), stops being along one line (notAShake), or the trace ends during it (interrupted). The \
            axis is the device axis with most of the shake's energy. The trace is replayed like stream (--speed \
            realtime by default, so events appear when a live device would produce them; --speed max for \
            batch use). --device reads a live accelerometer instead, until SIGINT or SIGTERM. --evaluate instead \
            scores the detector on simulated labelled scenarios and prints \
            precision and recall. See Docs/MotionEvents.md.
            """
    )

    @OptionGroup var input: InputOptions<RealTimeReplay>

    @Option(help: "Output format: text (one line per event) or jsonl (JSON Lines).")
    var format: EventFormat = .text

    @OptionGroup var sensitivity: ShakeSensitivityOptions
    @OptionGroup var evaluation: EvaluationOptions

    @Option(
        help: ArgumentHelp(
            "With --evaluate: score Square seismic's rule instead (|a| over N m/s² in ≥ 75 % of 0.5 s; 11, 13 or 15).",
            valueName: "m/s²"))
    var seismic: Double?

    func validate() throws {
        try input.validate(
            evaluate: evaluation.evaluate, offersEvaluate: true,
            options: evaluation.evaluateOnlyOptions
                + [.init("--seismic", given: seismic != nil, for: [.evaluate])])
        try evaluation.validateValues(rate: simulatedRate)
        if let seismic {
            guard seismic > 0, seismic.isFinite else {
                throw ValidationError("--seismic must be a positive number of m/s², got \(seismic).")
            }
        }
    }

    func run() async throws { try await runChosenInput() }

    func configuration(_ settings: MotionSettings) -> ShakeDetector<Double>.Configuration {
        sensitivity.configuration(settings)
    }

    var settingsKeys: [SettingKey: Bool] {
        [
            .shakeThreshold: sensitivity.threshold != nil, .shakeMinimumReversals: sensitivity.reversals != nil,
            .shakeMaximumDuration: sensitivity.maximumDuration != nil,
        ]
    }

    /// The shakes of a trace, a device or the service, each event printed as it happens (flushed before each
    /// wait). Through the service at 50 Hz, the detector's rate (`ServiceRates`); a device at its own rate.
    func printEvents(
        from source: MotionSource, _ shakeConfiguration: ShakeDetector<Double>.Configuration
    ) async throws(MotionError) {
        let output = try EventOutput(format: format)
        do {
            try await drive(
                source, configuration: MotionConfiguration(shake: shakeConfiguration), request: .init(shake: true),
                demandInterval: input.service ? ServiceRates.shakeInterval : 0, flush: output.flush
            ) { outputs throws(MotionError) in
                if let event = outputs.shake { try Self.write(event, to: output) }
                return true
            }
        } catch where input.service && error.code == .permissionDenied {
            throw MotionError(
                .permissionDenied,
                "shake needs \(ServiceRates.hertz(ServiceRates.shakeInterval)) Hz, the slowest rate the detector "
                    + "is validated at (Docs/MotionEvents.md), and the motion service refused it: \(error.message)",
                underlying: error.underlying)
        }
    }

    static func write(_ event: ShakeEvent, to output: EventOutput) throws(MotionError) {
        switch output.format {
        case .text:
            try output.writeLine(timestamp: event.timestamp, message: Self.text(for: event))
        case .jsonl:
            try output.writeEvent(type: "shake", timestamp: event.timestamp, fields: OutputRecords.fields(of: event))
        }
    }

    /// `Shake began (axis x, 3 strokes, peak 1.52 g)`, `Shake cancelled: tooLong (axis y, …)`.
    static func text(for event: ShakeEvent) -> String {
        let phase =
            switch event.phase {
            case .began: "Shake began"
            case .ended: "Shake ended"
            case .cancelled(let reason): "Shake cancelled: \(reason)"
            }
        let duration = event.phase == .began ? "" : ", \(fixed(event.timestamp - event.startTime, 3)) s"
        return
            "\(phase) (axis \(event.axis), \(event.strokes) strokes\(duration), peak \(fixed(event.peakAcceleration, 2)) g)"
    }

    func evaluate(_ configuration: ShakeDetector<Double>.Configuration) throws(MotionError) {
        let seeds = evaluation.scenarioSeeds.seeds
        var score = ShakeScore()
        let display = TerminalProgress()
        defer { display.finish() }
        for (index, seed) in seeds.enumerated() {
            if Interruption.isRequested { break }
            display.update("motionctl: evaluating: scenario \(index + 1) of \(seeds.count) (seed \(seed))")
            let scenario = Scenario.random(seed: seed)
            let simulation = try Simulation(scenario: scenario, options: evaluation.simulationOptions(seed: seed, rate: simulatedRate))
            if let seismic {
                score.addSeismic(scenario: scenario, simulation: simulation, threshold: seismic)
            } else {
                score.add(scenario: scenario, simulation: simulation, configuration: configuration)
            }
        }
        display.finish()  // before the report, which may go to the same terminal
        let output = try EventOutput(format: .text)
        let title = seismic.map { "Square seismic's rule (\($0) m/s², 75 % of 0.5 s)" } ?? "shake detection"
        for line in score.report(title: title, settings: evaluation.settingsDescription(rate: simulatedRate), verbose: evaluation.verbose) {
            try output.writeLine(line)
        }
        try output.flush()
    }
}

/// The shake detector's sensitivity options.
struct ShakeSensitivityOptions: ParsableArguments {
    @Option(
        help: .setting(
            "Linear acceleration a stroke must reach, after gravity removal.", .shakeThreshold, valueName: "g"))
    var threshold: Double?

    @Option(
        name: .customLong("min-frequency"),
        help: ArgumentHelp("Slowest shake (full cycles per second).", valueName: "hz"))
    var minimumFrequency: Double = 1.5

    @Option(name: .customLong("max-frequency"), help: ArgumentHelp("Fastest shake.", valueName: "hz"))
    var maximumFrequency: Double = 10

    @Option(
        help: .setting(
            "Reversals (changes of direction) that make a shake begin.", .shakeMinimumReversals, valueName: "n"))
    var reversals: Int?

    @Option(
        name: .customLong("max-duration"),
        help: .setting(
            "Longest shake that ends rather than being cancelled.", .shakeMaximumDuration, valueName: "seconds"))
    var maximumDuration: Double?

    @Option(
        name: .customLong("min-linearity"),
        help: ArgumentHelp(
            "Fraction of the motion's energy that must lie along one line.", valueName: "0-1"))
    var minimumLinearity: Double = 0.97

    func validate() throws {
        // The flags that stand for a setting accept what the setting accepts (SettingFlags.swift).
        try validateFlag("--threshold", threshold, setting: .shakeThreshold)
        try validateFlag("--reversals", reversals, setting: .shakeMinimumReversals)
        try validateFlag("--max-duration", maximumDuration, setting: .shakeMaximumDuration)
        guard minimumFrequency > 0, maximumFrequency > minimumFrequency, maximumFrequency.isFinite else {
            throw ValidationError(
                "--min-frequency and --max-frequency must be positive hertz with min < max, got \(minimumFrequency) and \(maximumFrequency)."
            )
        }
        guard maximumFrequency < 15 else {
            throw ValidationError("--max-frequency must be below the 15 Hz smoothing cutoff, got \(maximumFrequency).")
        }
        guard minimumFrequency > 0.8 else {
            throw ValidationError("--min-frequency must be above the 0.8 Hz gravity cutoff, got \(minimumFrequency).")
        }
        guard (0...1).contains(minimumLinearity) else {
            throw ValidationError("--min-linearity must be between 0 and 1, got \(minimumLinearity).")
        }
    }

    /// The detector's configuration: these flags where given, else the settings (`shake.*`, Docs/Settings.md).
    func configuration(_ settings: MotionSettings) -> ShakeDetector<Double>.Configuration {
        let base = settings.shakeConfiguration
        return ShakeDetector<Double>.Configuration(
            threshold: threshold ?? base.threshold, frequencyBand: minimumFrequency...maximumFrequency,
            minimumReversals: reversals ?? base.minimumReversals, minimumLinearity: minimumLinearity,
            maximumDuration: maximumDuration ?? base.maximumDuration)
    }
}

// MARK: - Shared by the event commands

/// The output formats of the event commands.
enum EventFormat: String, ExpressibleByArgument, CaseIterable {
    /// One line per event: the timestamp (3 decimals) and a monitor-sensor-like message.
    case text
    /// JSON Lines: `{"type":"shake","t":…,…}`, one object per event.
    case jsonl
}

/// Writes event lines to stdout as they happen: text lines straight to the file descriptor, or JSON Lines
/// through `TraceWriter` (flushed after each line). Events are sparse, so nothing is held back.
final class EventOutput {
    let format: EventFormat
    private let writer: TraceWriter?

    init(format: EventFormat) throws(MotionError) {
        self.format = format
        writer =
            format == .jsonl
            ? try TraceWriter(fileDescriptor: 1, name: "<stdout>", format: .jsonl, sensors: [], flushing: .eachLine)
            : nil
    }

    /// Writes `<t with 3 decimals> <message>`.
    func writeLine(timestamp: Double, message: String) throws(MotionError) {
        try writeLine("\(fixed(timestamp, 3))    \(message)")
    }

    /// Writes one line of text (a newline is added).
    func writeLine(_ line: String) throws(MotionError) {
        try TextOutput.write(line + "\n", to: 1, name: "<stdout>")
    }

    /// Writes a JSON Lines event.
    func writeEvent(type: String, timestamp: Double, fields: [(String, EventValue)]) throws(MotionError) {
        try writer?.writeEvent(type: type, timestamp: timestamp, fields: fields)
    }

    func flush() throws(MotionError) {
        try writer?.flush()
    }
}

/// Fails with a usage error when the trace has no accelerometer.
func requireAccelerometer(_ reader: TraceReader, path: String) throws(MotionError) {
    guard reader.sensors.contains(.accelerometer) else {
        throw MotionError(
            .invalidArgument, "the trace has no accelerometer columns (ax,ay,az); it has \(reader.sensors)",
            at: .init(file: path))
    }
}

/// A range of scenario seeds: `N` or `FIRST-LAST`.
struct SeedRange: ExpressibleByArgument, CustomStringConvertible {
    let first: UInt64
    let last: UInt64

    init(first: UInt64, last: UInt64) {
        self.first = first
        self.last = last
    }

    init?(argument: String) {
        let parts = argument.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2, let first = UInt64(parts[0]),
            let last = UInt64(parts.count == 2 ? parts[1] : parts[0]), first <= last, last - first < 1_000_000
        else { return nil }
        self.init(first: first, last: last)
    }

    var seeds: ClosedRange<UInt64> { first...last }
    var count: Int { Int(last - first) + 1 }
    var description: String { first == last ? "\(first)" : "\(first)-\(last)" }
    var defaultValueDescription: String { description }
}

/// `--evaluate` and the simulation it runs.
struct EvaluationOptions: ParsableArguments {
    @Flag(help: "Score the detector on simulated labelled scenarios (Scenario.random) instead of reading a trace.")
    var evaluate = false

    @Option(
        name: .customLong("scenario-seeds"),
        help: ArgumentHelp(
            "With --evaluate: the scenario seeds, N or FIRST-LAST (the noise seed is the scenario seed; default "
                + "1000-1199).", valueName: "range"))
    var scenarioSeedsOption: SeedRange?

    @Option(
        name: .customLong("accel-noise"),
        help: ArgumentHelp(
            "With --evaluate: accelerometer white noise, standard deviation (default 0.005).", valueName: "g"))
    var accelerometerNoiseOption: Double?

    @Option(
        name: .customLong("jitter"),
        help: ArgumentHelp("With --evaluate: timestamp jitter, standard deviation (default 0).", valueName: "seconds"))
    var jitterOption: Double?

    @Flag(help: "With --evaluate: also list every miss and false or wrong event.")
    var verbose = false

    var scenarioSeeds: SeedRange { scenarioSeedsOption ?? SeedRange(first: 1000, last: 1199) }
    var accelerometerNoise: Double { accelerometerNoiseOption ?? 0.005 }
    var jitter: Double { jitterOption ?? 0 }

    /// The options of `--evaluate` only.
    var evaluateOnlyOptions: [InputSpecificOption] {
        [
            .init("--scenario-seeds", given: scenarioSeedsOption != nil, for: [.evaluate]),
            .init("--accel-noise", given: accelerometerNoiseOption != nil, for: [.evaluate]),
            .init("--jitter", given: jitterOption != nil, for: [.evaluate]),
            .init("--verbose", given: verbose, for: [.evaluate]),
        ]
    }

    /// Checks the values (which input they go with is `validateInput`'s check); `rate` is the simulated rate (Hz),
    /// `--rate` of the input options or 100.
    func validateValues(rate: Double) throws {
        guard rate > 0, rate.isFinite, rate <= 10_000 else {
            throw ValidationError("--rate must be more than 0 and at most 10000 Hz, got \(rate).")
        }
        guard accelerometerNoise >= 0, accelerometerNoise.isFinite else {
            throw ValidationError("--accel-noise must be ≥ 0 g, got \(accelerometerNoise).")
        }
        guard jitter >= 0, jitter.isFinite else { throw ValidationError("--jitter must be ≥ 0 s, got \(jitter).") }
    }

    func simulationOptions(seed: UInt64, rate: Double) -> SimulationOptions {
        SimulationOptions(
            rate: rate, sensors: .accelerometer, seed: seed, accelerometerNoise: accelerometerNoise,
            timestampJitter: jitter)
    }

    /// `200 scenarios (Scenario.random, seeds 1000-1199; noise seed = scenario seed; 100 Hz, noise 0.005 g)`.
    func settingsDescription(rate: Double) -> String {
        "\(scenarioSeeds.count) scenarios (Scenario.random, seeds \(scenarioSeeds); noise seed = scenario seed; "
            + "\(fixed(rate, 0)) Hz, noise \(accelerometerNoise) g" + (jitter > 0 ? ", jitter \(jitter) s)" : ")")
    }
}
