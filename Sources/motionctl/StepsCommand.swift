import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import MotionTrace

/// `motionctl steps`: the pedometer on a trace, a live device or the motion service: one line per counted step,
/// then the total.
struct StepsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "steps",
        abstract: "Print the steps of a trace, a live device or the motion service (pedometer), and their total.",
        discussion: """
            Each counted step is one row: its time, the running count, the cadence (steps/s), the distance (m) \
            and the pace (s/m) from the step-length model (--height or --step-length; default 0.415 × 1.70 m = \
            0.7055 m per step). Steps are counted once ten regular steps in a row are seen, then retroactively, \
            so rows come in bursts at the start of each walk. The last row is the total (event 'total'). CSV by \
            default (columns event,t,steps,cadence,distance,pace), JSON Lines with --format jsonl. The trace is \
            processed as fast as possible (--speed max) unless --speed says otherwise. --device reads a live \
            accelerometer (asked for at least 50 Hz) and --service the motion service's samples (50 Hz, or 25 Hz \
            without its high-rate right), until SIGINT or SIGTERM; the total then covers the steps since the \
            command started. See Docs/Pedometer.md.
            """
    )

    @OptionGroup var input: InputOptions<FullSpeedReplay>

    @Option(help: "Output format: csv (a header, one row per step, a total row) or jsonl (JSON Lines).")
    var format: StepsFormat = .csv

    @Option(
        help: .setting(
            "The walker's height, for the step length (0.415 × height).", .pedometerHeight, valueName: "metres"))
    var height: Double?

    @Option(
        name: .customLong("step-length"),
        help: .setting(
            "A calibrated step length, instead of --height; 0: from the height.", .pedometerStepLength,
            valueName: "metres"))
    var stepLength: Double?

    func validate() throws {
        try input.validate()
        if height != nil && stepLength != nil { throw ValidationError("Choose one of --height and --step-length.") }
        // The flags accept what the settings accept (SettingFlags.swift).
        try validateFlag("--height", height, setting: .pedometerHeight)
        try validateFlag("--step-length", stepLength, setting: .pedometerStepLength)
    }

    /// The step-length model: the flags where given, else the settings (`pedometer.*`, Docs/Settings.md).
    func stepLengthModel(_ settings: MotionSettings) -> StepLengthModel {
        if let stepLength, stepLength > 0 { return StepLengthModel(stepLength: stepLength) }
        if let height { return .height(height) }
        return settings.stepLengthModel
    }

    func run() async throws {
        Interruption.install()
        do {
            // --height or a --step-length above 0 replaces both settings (stepLengthModel).
            let replaced = height != nil || (stepLength ?? 0) > 0
            let model = stepLengthModel(
                try loadSettings(reading: [.pedometerHeight: replaced, .pedometerStepLength: replaced]))
            try await input.withSource { source throws(MotionError) in
                try await count(from: source, model)
            }
        } catch {
            throw report(error)
        }
    }

    /// The steps of a trace, a device or the service, each printed as it is counted (flushed before each wait),
    /// then the total, also when a signal ends the command. A live source is asked for 50 Hz at least, the service
    /// for 25 Hz when the user lacks its high-rate right (`ServiceRates.atPedometerRate`).
    func count(from source: MotionSource, _ model: StepLengthModel) async throws(MotionError) {
        let output = try StepsOutput(format: format)
        try output.writeHeader()
        try output.flush()
        var lastTime = 0.0
        var processor: MotionProcessor?
        try await ServiceRates.atPedometerRate { interval throws(MotionError) in
            processor = try await drive(
                source, configuration: MotionConfiguration(stepLength: model), request: .init(steps: true),
                demandInterval: interval, flush: output.flush
            ) { outputs throws(MotionError) in
                lastTime = outputs.timestamp
                if let update = outputs.steps { try output.write(update) }
                return true
            }
        }
        let data = processor?.pedometerData ?? StepsOutput.noSteps
        try output.writeTotal(data, at: lastTime)
        try output.flush()
    }
}

/// The output formats of `steps`.
enum StepsFormat: String, ExpressibleByArgument, CaseIterable {
    /// `event,t,steps,cadence,distance,pace`: one `step` row per step, then one `total` row.
    case csv
    /// JSON Lines: `{"type":"step","t":…,"steps":…,…}` per step, then `{"type":"total",…}`.
    case jsonl
}

/// Writes the step rows to stdout.
final class StepsOutput {
    /// The figures before any step.
    static let noSteps = PedometerData(
        startTime: nil, endTime: nil, numberOfSteps: 0, distance: 0, currentCadence: nil, currentPace: nil)

    let format: StepsFormat
    private let writer: TraceWriter?
    private var text = ""

    init(format: StepsFormat) throws(MotionError) {
        self.format = format
        writer =
            format == .jsonl
            ? try TraceWriter(fileDescriptor: 1, name: "<stdout>", format: .jsonl, sensors: [], flushing: .eachLine)
            : nil
    }

    func writeHeader() throws(MotionError) {
        if format == .csv { text += "event,t,steps,cadence,distance,pace\n" }
    }

    /// One row per step of `update` (`OutputRecords.stepRecords`: the running count and the distance at that
    /// step; a confirmed run's steps all get the cadence at its confirmation).
    func write(_ update: PedometerUpdate) throws(MotionError) {
        for step in OutputRecords.stepRecords(of: update) {
            try writeRow("step", step)
        }
    }

    /// The total row, at the time of the trace's last sample.
    func writeTotal(_ data: PedometerData, at t: Double) throws(MotionError) {
        try writeRow(
            "total",
            OutputRecords.StepRecord(t: t, steps: data.numberOfSteps, cadence: nil, distance: data.distance, pace: nil))
    }

    private func writeRow(_ event: String, _ row: OutputRecords.StepRecord) throws(MotionError) {
        switch format {
        case .csv:
            text +=
                "\(event),\(fixed(row.t, 3)),\(row.steps),\(row.cadence.map { fixed($0, 3) } ?? ""),"
                + "\(fixed(row.distance, 3)),\(row.pace.map { fixed($0, 3) } ?? "")\n"
            if text.utf8.count > 1 << 16 { try flush() }
        case .jsonl:
            // The fields motiond's steps streams carry.
            try writer?.writeEvent(type: event, timestamp: row.t, fields: row.fields)
        }
    }

    func flush() throws(MotionError) {
        if !text.isEmpty {
            try TextOutput.write(text, to: 1, name: "<stdout>")
            text = ""
        }
        try writer?.flush()
    }
}
