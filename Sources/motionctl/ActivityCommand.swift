import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import MotionTrace

/// `motionctl activity`: the activity classifier on a trace, a live device or the motion service: one line per
/// change.
struct ActivityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Print each activity change of a trace, a live device or the service: stationary, walking, running or unknown.",
        discussion: """
            Each line is one change, with its confidence (low, medium, high): stationary when the device is still, \
            walking or running while the pedometer counts steps (running from 2.5 steps/s, with a dead band of \
            ±0.1 steps/s), unknown for motion without steps (a vehicle, a bicycle, handling the device). A change \
            is reported once it has held for 2 s (10 s for unknown). The trace is processed as fast as possible \
            (--speed max) unless --speed says otherwise. --device reads a live accelerometer (asked for at least \
            50 Hz) and --service the motion service's samples (50 Hz, or 25 Hz without its high-rate right), until \
            SIGINT or SIGTERM. See Docs/Pedometer.md.
            """
    )

    @OptionGroup var input: InputOptions<FullSpeedReplay>

    @Option(help: "Output format: text (one line per change) or jsonl (JSON Lines).")
    var format: EventFormat = .text

    func validate() throws {
        try input.validate()
    }

    func run() async throws {
        Interruption.install()
        do {
            try await input.withSource { source throws(MotionError) in
                try await classify(from: source)
            }
        } catch {
            throw report(error)
        }
    }

    /// The activity changes of a trace, a device or the service, each printed as it happens (flushed before each
    /// wait). A live source is asked for 50 Hz at least, the service for 25 Hz when the user lacks its high-rate
    /// right (`ServiceRates.atPedometerRate`).
    func classify(from source: MotionSource) async throws(MotionError) {
        let output = try EventOutput(format: format)
        try await ServiceRates.atPedometerRate { interval throws(MotionError) in
            try await drive(
                source, request: .init(activity: true), demandInterval: interval, flush: output.flush
            ) { outputs throws(MotionError) in
                if let activity = outputs.activity { try Self.write(activity, to: output) }
                return true
            }
        }
    }

    static func write(_ activity: MotionActivity, to output: EventOutput) throws(MotionError) {
        switch output.format {
        case .text:
            try output.writeLine(
                timestamp: activity.timestamp, message: "Activity: \(activity.kind) (\(activity.confidence))")
        case .jsonl:
            try output.writeEvent(
                type: "activity", timestamp: activity.timestamp, fields: OutputRecords.fields(of: activity))
        }
    }
}
