import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionEvaluation
import MotionTesting
import MotionTrace

/// `motionctl orientation`: device-orientation changes from a trace, in UIKit's or iio-sensor-proxy's names, or
/// the classifier's figures on simulated labelled scenarios.
struct OrientationCommand: AsyncParsableCommand, EventCommand {
    static let configuration = CommandConfiguration(
        commandName: "orientation",
        abstract: "Print each device-orientation change of a trace or a live device.",
        discussion: """
            Orientations are UIKit's (portrait, portraitUpsideDown, landscapeLeft: right edge up, landscapeRight, \
            faceUp: screen to the sky, faceDown), low-passed, with a dead zone between neighbours, a settle time \
            and no change while the device is being moved. --isp-names prints iio-sensor-proxy's vocabulary \
            instead, like monitor-sensor: the orientation (normal, bottom-up, left-up, right-up; kept while the \
            device lies flat) and the tilt (vertical, tilted-up/down, face-up/down, with face-up meaning the \
            screen faces the sky). The trace is replayed like stream (--speed realtime by default; --speed max for \
            batch use). --device reads a live accelerometer instead, until SIGINT or SIGTERM. --evaluate instead scores the classifier on simulated labelled scenarios. See \
            Docs/MotionEvents.md.
            """
    )

    @OptionGroup var input: InputOptions<RealTimeReplay>

    @Option(help: "Output format: text (one line per change, like monitor-sensor) or jsonl (JSON Lines).")
    var format: EventFormat = .text

    @Flag(name: .customLong("isp-names"), help: "Use iio-sensor-proxy's names and also report its tilt.")
    var ispNames = false

    @OptionGroup var settings: OrientationSettingsOptions
    @OptionGroup var evaluation: EvaluationOptions

    func validate() throws {
        try input.validate(
            evaluate: evaluation.evaluate, offersEvaluate: true, options: evaluation.evaluateOnlyOptions)
        try evaluation.validateValues(rate: simulatedRate)
    }

    func run() async throws { try await runChosenInput() }

    func configuration(_ motionSettings: MotionSettings) -> OrientationClassifier<Double>.Configuration {
        settings.configuration(motionSettings)
    }

    var settingsKeys: [SettingKey: Bool] {
        [
            .orientationCutoff: settings.cutoff != nil, .orientationHysteresis: settings.hysteresis != nil,
            .orientationSettleTime: settings.settleTime != nil,
        ]
    }

    /// The changes of a trace, a device or the service, each printed as it settles (flushed before each wait).
    /// Through the service at 25 Hz, which everyone may ask (`ServiceRates`); a device at its own rate.
    func printEvents(
        from source: MotionSource, _ orientationConfiguration: OrientationClassifier<Double>.Configuration
    ) async throws(MotionError) {
        let output = try EventOutput(format: format)
        if ispNames && format == .text {
            try output.writeLine("=== Has accelerometer (orientation: undefined, tilt: undefined)")
            try output.flush()
        }
        let ispNames = ispNames
        try await drive(
            source, configuration: MotionConfiguration(orientation: orientationConfiguration),
            request: .init(orientation: true), demandInterval: input.service ? ServiceRates.orientationInterval : 0,
            flush: output.flush
        ) { outputs throws(MotionError) in
            if let change = outputs.orientationChange { try Self.write(change, ispNames: ispNames, to: output) }
            return true
        }
    }

    static func write(
        _ change: OrientationClassifier<Double>.Change, ispNames: Bool, to output: EventOutput
    ) throws(MotionError) {
        let reports = OutputRecords.reports(of: change, iioSensorProxyNames: ispNames)
        for report in reports {
            switch output.format {
            case .text:
                try output.writeLine(timestamp: change.timestamp, message: "\(report.label): \(report.value)")
            case .jsonl:
                try output.writeEvent(
                    type: report.type, timestamp: change.timestamp,
                    fields: [(report.type, .string(report.value)), ("previous", .string(report.previous))])
            }
        }
    }

    func evaluate(_ configuration: OrientationClassifier<Double>.Configuration) throws(MotionError) {
        var score = OrientationScore()
        let (seeds, display) = (evaluation.scenarioSeeds.seeds, TerminalProgress())
        defer { display.finish() }
        for (index, seed) in seeds.enumerated() {
            if Interruption.isRequested { break }
            display.update("motionctl: evaluating: scenario \(index + 1) of \(seeds.count) (seed \(seed))")
            let scenario = Scenario.random(seed: seed)
            let simulation = try Simulation(scenario: scenario, options: evaluation.simulationOptions(seed: seed, rate: simulatedRate))
            score.add(scenario: scenario, simulation: simulation, configuration: configuration)
        }
        display.finish()  // before the report, which may go to the same terminal
        let output = try EventOutput(format: .text)
        for line in score.report(settings: evaluation.settingsDescription(rate: simulatedRate), verbose: evaluation.verbose) {
            try output.writeLine(line)
        }
        try output.flush()
    }
}

/// The orientation classifier's settings.
struct OrientationSettingsOptions: ParsableArguments {
    @Option(help: .setting("Low-pass cutoff applied before classifying.", .orientationCutoff, valueName: "hz"))
    var cutoff: Double?

    @Option(
        help: .setting(
            "Half the dead zone between neighbouring orientations: a new one is taken within 45° minus this.",
            .orientationHysteresis, valueName: "degrees"))
    var hysteresis: Double?

    @Option(
        name: .customLong("settle"),
        help: .setting(
            "How long a change must stand, with the device still, before it is reported.", .orientationSettleTime,
            valueName: "seconds"))
    var settleTime: Double?

    @Option(
        help: ArgumentHelp(
            "How far |a| may be from 1 g before the device counts as being moved.", valueName: "g"))
    var tolerance: Double = 0.2

    func validate() throws {
        // The flags that stand for a setting accept what the setting accepts (SettingFlags.swift).
        try validateFlag("--cutoff", cutoff, setting: .orientationCutoff)
        try validateFlag("--hysteresis", hysteresis, setting: .orientationHysteresis)
        try validateFlag("--settle", settleTime, setting: .orientationSettleTime)
        guard tolerance > 0, tolerance.isFinite else {
            throw ValidationError("--tolerance must be a positive number of g, got \(tolerance).")
        }
    }

    /// The classifier's configuration: these flags where given, else the settings (`orientation.*`,
    /// Docs/Settings.md).
    func configuration(_ settings: MotionSettings) -> OrientationClassifier<Double>.Configuration {
        let base = settings.orientationConfiguration
        return OrientationClassifier<Double>.Configuration(
            cutoff: cutoff ?? base.cutoff, hysteresis: hysteresis.map { $0 * .pi / 180 } ?? base.hysteresis,
            settleTime: settleTime ?? base.settleTime, accelerationTolerance: tolerance)
    }
}

// MARK: - Evaluation

