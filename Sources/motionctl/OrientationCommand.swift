import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
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

    @Option(help: ArgumentHelp("The trace, in the canonical CSV format; '-' reads stdin.", valueName: "file"))
    var trace: String?

    @Option(help: "Replay speed: realtime, max, or a factor such as 2 or 0.5.")
    var speed: ReplaySpeed?

    @Option(help: "Output format: text (one line per change, like monitor-sensor) or jsonl (JSON Lines).")
    var format: EventFormat = .text

    @Flag(name: .customLong("isp-names"), help: "Use iio-sensor-proxy's names and also report its tilt.")
    var ispNames = false

    @Flag(help: "Skip malformed rows instead of stopping; a count of skipped rows by reason goes to stderr.")
    var lenient = false

    @OptionGroup var live: LiveEventOptions
    @OptionGroup var settings: OrientationSettingsOptions
    @OptionGroup var evaluation: EvaluationOptions

    func validate() throws {
        try live.validate(trace: trace, evaluate: evaluation.evaluate, speedGiven: speed != nil, lenient: lenient)
        if live.device == nil { try evaluation.validate(trace: trace) }
    }

    func run() async throws { try await runChosenInput() }

    func configuration(_ motionSettings: MotionSettings) -> OrientationClassifier<Double>.Configuration {
        settings.configuration(motionSettings)
    }

    /// The changes of a live device, through a `MotionManager`, each printed (and flushed) as it settles.
    func runLive(
        _ source: MotionSource, _ orientationConfiguration: OrientationClassifier<Double>.Configuration
    ) async throws(MotionError) {
        let format = format
        let ispNames = ispNames
        let configuration = MotionConfiguration(orientation: orientationConfiguration)
        try await LiveEventOptions.run(source, configuration: configuration) { manager throws(MotionError) in
            let output = try EventOutput(format: format)
            if ispNames && format == .text {
                try output.writeLine("=== Has accelerometer (orientation: undefined, tilt: undefined)")
                try output.flush()
            }
            for try await change in manager.deviceOrientationChanges() {
                try Self.write(change, ispNames: ispNames, to: output)
                try output.flush()
            }
        }
    }

    /// The changes of the trace, replayed at `--speed`.
    func runTrace(_ configuration: OrientationClassifier<Double>.Configuration) throws(MotionError) {
        let path = trace ?? "-"
        let reader = try TraceReader(path: path, options: .init(lenient: lenient))
        defer { warnAboutSkippedRows(reader) }
        try requireAccelerometer(reader, path: path)
        let output = try EventOutput(format: format)
        if ispNames && format == .text {
            try output.writeLine("=== Has accelerometer (orientation: undefined, tilt: undefined)")
        }
        var classifier = OrientationClassifier<Double>(configuration: configuration)
        var pacer = Pacer(speed: (speed ?? .realtime).factor)
        while !Interruption.isRequested, let sample = try reader.next() {
            guard let acceleration = sample.acceleration else { continue }
            if let deadline = pacer.deadline(for: sample.timestamp) {
                try output.flush()
                Pacer.sleep(until: deadline)
                if Interruption.isRequested { break }
            }
            guard let change = classifier.update(acceleration.vector, at: sample.timestamp) else { continue }
            try Self.write(change, ispNames: ispNames, to: output)
        }
        try output.flush()
    }

    static func write(
        _ change: OrientationClassifier<Double>.Change, ispNames: Bool, to output: EventOutput
    ) throws(MotionError) {
        var reports: [(type: String, label: String, value: String, previous: String)] = []
        if ispNames {
            if change.iioSensorProxyOrientationChanged {
                reports.append(
                    (
                        "orientation", "Accelerometer orientation changed", change.iioSensorProxyOrientation.rawValue,
                        change.previousIIOSensorProxyOrientation.rawValue
                    ))
            }
            if change.tiltChanged {
                reports.append(("tilt", "Tilt changed", change.tilt.rawValue, change.previousTilt.rawValue))
            }
        } else if change.orientationChanged {
            reports.append(
                (
                    "orientation", "Device orientation changed", change.orientation.description,
                    change.previousOrientation.description
                ))
        }
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
        for seed in evaluation.scenarioSeeds.seeds {
            if Interruption.isRequested { break }
            let scenario = Scenario.random(seed: seed)
            let simulation = try Simulation(scenario: scenario, options: evaluation.simulationOptions(seed: seed))
            score.add(scenario: scenario, simulation: simulation, configuration: configuration)
        }
        let output = try EventOutput(format: .text)
        for line in score.report(options: evaluation, verbose: evaluation.verbose) { try output.writeLine(line) }
        try output.flush()
    }
}

/// The orientation classifier's settings.
struct OrientationSettingsOptions: ParsableArguments {
    @Option(help: .setting("Low-pass cutoff applied before classifying.", "orientation.cutoff", valueName: "hz"))
    var cutoff: Double?

    @Option(
        help: .setting(
            "Half the dead zone between neighbouring orientations: a new one is taken within 45° minus this.",
            "orientation.hysteresis", valueName: "degrees"))
    var hysteresis: Double?

    @Option(
        name: .customLong("settle"),
        help: .setting(
            "How long a change must stand, with the device still, before it is reported.", "orientation.settleTime",
            valueName: "seconds"))
    var settleTime: Double?

    @Option(
        help: ArgumentHelp(
            "How far |a| may be from 1 g before the device counts as being moved.", valueName: "g"))
    var tolerance: Double = 0.2

    func validate() throws {
        // The flags that stand for a setting accept what the setting accepts (SettingFlags.swift).
        try validateFlag("--cutoff", cutoff, setting: "orientation.cutoff")
        try validateFlag("--hysteresis", hysteresis, setting: "orientation.hysteresis")
        try validateFlag("--settle", settleTime, setting: "orientation.settleTime")
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

/// Spurious orientation changes on labelled scenarios.
///
/// The truth of a steady segment (hold, shake, gait, tap, vibration) is its nearest named orientation; within
/// 3° + the dead zone of a boundary (offset > 45° − hysteresis − 3°) the second nearest is also right. A change
/// is **spurious** when its new orientation is not right for the steady segment it falls in, or, during a
/// rotation, tilt or set-down, for the next steady segment (or the previous one if that ended less than 1 s
/// before). A **flap** is a change back to the orientation of two changes ago within 2 s with no rotation
/// between. A hold of at least settle + 1 s with a clear truth is **wrong** when the orientation reported at
/// its end differs.
struct OrientationScore {
    var scenarios = 0
    var changes = 0
    var spurious = 0
    var flaps = 0
    var clearHolds = 0
    var wrongHolds = 0
    var ambiguousHolds = 0
    var details: [String] = []

    /// The names of the orientations that are right for a steady segment, or `nil` for a moving one.
    static func acceptable(_ segment: LabelledSegment, hysteresis: Double) -> Set<String>? {
        guard let expected = segment.expectedOrientation, let offset = segment.orientationOffset else { return nil }
        var names: Set<String> = [expected.rawValue]
        if offset > .pi / 4 - hysteresis - 3 * .pi / 180 {
            let g = segment.startAttitude.gravity.vector
            let others = NamedOrientation.allCases.filter { $0 != expected }
            if let second = others.max(by: { ($0.gravity.vector * g).sum() < ($1.gravity.vector * g).sum() }) {
                names.insert(second.rawValue)
            }
        }
        return names
    }

    mutating func add(
        scenario: Scenario, simulation: Simulation, configuration: OrientationClassifier<Double>.Configuration
    ) {
        scenarios += 1
        let hysteresis = configuration.hysteresis
        var classifier = OrientationClassifier<Double>(configuration: configuration)
        var found: [(t: Double, from: DeviceOrientation, to: DeviceOrientation)] = []
        var atEnd: [Int: DeviceOrientation] = [:]
        var segmentIndex = 0
        for sample in simulation {
            guard let a = sample.acceleration else { continue }
            while segmentIndex + 1 < scenario.segments.count && sample.timestamp >= scenario.segments[segmentIndex].end
            {
                atEnd[segmentIndex] = classifier.orientation
                segmentIndex += 1
            }
            if let change = classifier.update(a.vector, at: sample.timestamp), change.orientationChanged {
                found.append((change.timestamp, change.previousOrientation, change.orientation))
            }
        }
        atEnd[segmentIndex] = classifier.orientation
        changes += found.count
        let seed = scenario.seed.map { "\($0)" } ?? "?"
        for (k, change) in found.enumerated() {
            guard let segment = scenario.segment(at: change.t) else { continue }
            let truth = segment.isSteady ? segment : scenario.segments[segment.index...].first(where: \.isSteady)
            var right =
                truth.flatMap { Self.acceptable($0, hysteresis: hysteresis) }?.contains(change.to.description) ?? true
            if !right, !segment.isSteady, let previous = scenario.segments[..<segment.index].last(where: \.isSteady),
                change.t - previous.end < 1, let names = Self.acceptable(previous, hysteresis: hysteresis)
            {
                right = names.contains(change.to.description)
            }
            if !right {
                spurious += 1
                details.append(
                    "spurious \(change.from) -> \(change.to): seed \(seed) t=\(fixed(change.t, 3)) in \(segment)")
            }
            if k > 0 {
                let before = found[k - 1]
                let rotated = scenario.segments.contains { $0.end > before.t && $0.start < change.t && !$0.isSteady }
                if before.from == change.to && change.t - before.t < 2 && !rotated {
                    flaps += 1
                    details.append(
                        "flap \(before.from) -> \(before.to) -> \(change.to): seed \(seed) t=\(fixed(change.t, 3))")
                }
            }
        }
        for segment in scenario.segments
        where segment.kind == "hold" && segment.duration >= configuration.settleTime + 1 {
            guard let names = Self.acceptable(segment, hysteresis: hysteresis), let reported = atEnd[segment.index]
            else {
                continue
            }
            if names.count > 1 {
                ambiguousHolds += 1
                continue
            }
            clearHolds += 1
            if !names.contains(reported.description) {
                wrongHolds += 1
                details.append("wrong at the end of a hold: \(reported), seed \(seed) \(segment)")
            }
        }
    }

    func report(options: EvaluationOptions, verbose: Bool) -> [String] {
        var lines = [
            "orientation on \(options.settingsDescription)",
            "changes \(changes), spurious \(spurious), flaps \(flaps)",
            "holds of settle + 1 s or more: clear \(clearHolds) (wrong at the end \(wrongHolds)), "
                + "near a boundary \(ambiguousHolds)",
        ]
        if verbose { lines += details }
        return lines
    }
}
