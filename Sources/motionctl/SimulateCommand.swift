import ArgumentParser
import MotionCore
import MotionTesting
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl simulate`: writes a deterministic, seeded synthetic trace.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Write a deterministic, seeded synthetic motion trace in the canonical format.",
        discussion: """
            Scenarios: orientationSweep (portrait, landscape left/right, upside down, face up/down), shakeSequence \
            (shakes on each axis with walking, taps, tilts, set-down and vibration between them), walking, \
            random (varied labelled segments drawn from --scenario-seed), and tumbling (42 s of turns through \
            every direction without a pause, the fusion benchmarks' input: with --sensors accel,gyro,mag and \
            --mag-offset, a magnetometer calibration fits within seconds). The same options always give the same \
            bytes. The trace's metadata lists the scenario, seed, noise settings and every labelled segment.
            """
    )

    @Option(help: ArgumentHelp("The scenario: \(Scenario.libraryNames.joined(separator: ", ")).", valueName: "name"))
    var scenario: String

    @Option(help: "Seed of the sensor noise and jitter.")
    var seed: UInt64 = 0

    @Option(name: .customLong("scenario-seed"), help: "Seed of the randomised scenarios (shakeSequence, random).")
    var scenarioSeed: UInt64 = 0

    @Option(help: ArgumentHelp("Sample rate in Hz.", valueName: "hz"))
    var rate: Double = 100

    @Option(help: ArgumentHelp("Sensors to simulate, comma-separated.", valueName: "accel,gyro,mag"))
    var sensors: SensorList?

    @Option(help: ArgumentHelp("Play the scenario this many times back to back.", valueName: "n"))
    var `repeat`: Int = 1

    @Option(name: .customLong("accel-noise"), help: ArgumentHelp("Accelerometer white noise, standard deviation.", valueName: "g"))
    var accelerometerNoise: Double = 0.005

    @Option(name: .customLong("gyro-noise"), help: ArgumentHelp("Gyroscope white noise, standard deviation.", valueName: "rad/s"))
    var gyroscopeNoise: Double = 0.002

    @Option(name: .customLong("gyro-bias"), help: ArgumentHelp("Constant gyroscope bias.", valueName: "x,y,z rad/s"))
    var gyroscopeBias: String = "0,0,0"

    @Option(help: ArgumentHelp("Timestamp jitter, standard deviation.", valueName: "seconds"))
    var jitter: Double = 0

    @Option(
        name: .customLong("mag-offset"),
        help: ArgumentHelp(
            "Hard-iron offset added to every magnetometer reading (device frame), the field a calibration removes.",
            valueName: "x,y,z µT"))
    var magnetometerOffset: String = "0,0,0"

    @Option(help: ArgumentHelp(
        "Significant digits of every value written (sensor noise is far above 1e-9 relative).", valueName: "n"))
    var digits: Int = 9

    @Option(help: ArgumentHelp(
        "Where to write the trace; '-' is stdout. An existing file is kept unless --overwrite is given.",
        valueName: "file"), completion: .outputFile)
    var output: String = "-"

    @Flag(help: "Replace the --output file if it exists (atomically, once the trace is written).")
    var overwrite = false

    @Option(help: "Output format: csv (the canonical trace format) or jsonl (default: --output's extension, else csv).")
    var format: TraceFormat?

    func validate() throws {
        _ = try OutputPath.format(of: output, given: format)
        guard Scenario.libraryNames.contains(scenario) else {
            throw ValidationError("Unknown scenario '\(scenario)'; choose one of \(Scenario.libraryNames.joined(separator: ", ")).")
        }
        guard (1...17).contains(digits) else { throw ValidationError("--digits must be 1 to 17, got \(digits).") }
        guard rate > 0, rate.isFinite else { throw ValidationError("--rate must be a positive number of hertz, got \(rate).") }
        guard `repeat` >= 1 else { throw ValidationError("--repeat must be at least 1, got \(`repeat`).") }
        guard parsedBias != nil else {
            throw ValidationError("--gyro-bias takes three numbers in rad/s, such as 0.01,-0.02,0, got '\(gyroscopeBias)'.")
        }
        guard parsedOffset != nil else {
            throw ValidationError("--mag-offset takes three numbers in µT, such as 35,-22,48, got '\(magnetometerOffset)'.")
        }
    }

    private var parsedBias: SIMD3<Double>? { Self.vector(gyroscopeBias) }
    private var parsedOffset: SIMD3<Double>? { Self.vector(magnetometerOffset) }

    /// Three comma-separated finite numbers.
    private static func vector(_ text: String) -> SIMD3<Double>? {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.filter { $0 != " " }) }
        guard parts.count == 3, case let values = parts.compactMap({ $0 }), values.count == 3,
            values.allSatisfy(\.isFinite)
        else { return nil }
        return SIMD3(values[0], values[1], values[2])
    }

    func run() throws {
        Interruption.install()
        do {
            try simulate()
        } catch {
            throw report(error)
        }
    }

    func simulate() throws(MotionError) {
        try OutputPath.check(output, overwrite: overwrite)
        guard var script = Scenario.named(scenario, seed: scenarioSeed) else {
            throw MotionError(.invalidArgument, "unknown scenario '\(scenario)'")
        }
        let once = script.segments.map(\.segment)
        for _ in 1..<`repeat` { script.append(contentsOf: once) }
        let options = SimulationOptions(
            rate: rate, sensors: sensors?.set ?? [.accelerometer, .gyroscope], seed: seed,
            accelerometerNoise: accelerometerNoise, gyroscopeNoise: gyroscopeNoise, gyroscopeBias: parsedBias ?? .zero,
            magnetometerOffset: parsedOffset ?? .zero, timestampJitter: jitter)
        let simulation = try Simulation(scenario: script, options: options)

        var metadata = TraceMetadata()
        for (key, value) in simulation.metadata { metadata[key] = value }
        let file = try TraceOutputFile(path: output, existing: overwrite ? .replace : .refuse)
        defer { file.close() }
        let writer = try TraceWriter(
            fileDescriptor: file.fileDescriptor, name: file.name, format: (try? OutputPath.format(of: output, given: format)) ?? .csv,
            sensors: options.sensors, metadata: metadata)
        for sample in simulation {
            if Interruption.isRequested { break }
            try writer.write(sample.rounded(toSignificantDigits: digits))
        }
        try writer.flush()
        try OutputPath.commit(file, path: output)
    }
}

extension MotionSample {
    /// The sample with every reading rounded to `digits` significant decimal digits (the timestamp is kept).
    func rounded(toSignificantDigits digits: Int) -> MotionSample {
        func round(_ x: Double) -> Double {
            guard x != 0, x.isFinite else { return x }
            // x·10^k has `digits` digits before the point; integer / 10^k is the double nearest that decimal.
            let k = digits - 1 - Int((abs(x)).log10().rounded(.down))
            let scaled = (x * pow10(k)).rounded()
            return k >= 0 ? scaled / pow10(k) : scaled * pow10(-k)
        }
        func round<V: MotionVector>(_ v: V?) -> V? { v.map { V(x: round($0.x), y: round($0.y), z: round($0.z)) } }
        return MotionSample(
            timestamp: timestamp, acceleration: round(acceleration), rotationRate: round(rotationRate),
            magneticField: round(magneticField))
    }
}

private func pow10(_ k: Int) -> Double {
    var result = 1.0
    for _ in 0..<k { result *= 10 }
    return result
}

extension Double {
    fileprivate func log10() -> Double { Glibc.log10(self) }
}
