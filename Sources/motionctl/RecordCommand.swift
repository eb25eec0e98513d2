import ArgumentParser
import Motion
import MotionCore
import MotionIIO
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl record`: writes live IIO samples to a canonical trace file, with the device's metadata.
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record live IIO device samples to a trace file in the canonical format.",
        discussion: """
            The trace starts with metadata naming the device(s), each sensor's mount matrix (already applied), \
            scale and offset with their sources, the rate and how samples were captured (# capture_…), then one \
            row per sample on CLOCK_BOOTTIME. The file is flushed after every batch of samples, so a recorder \
            killed with kill -9 loses at most the last partial line (the reader reports it as truncated). \
            SIGINT or SIGTERM ends the recording cleanly. A removed device is reported and the recording waits \
            for it to come back (a 'disconnected' event line), unless --exit-on-disconnect is given. \
            An existing file is never replaced unless --overwrite is given, and nothing is written at the path \
            until the devices are open and samples arrive: a failure before leaves the folder as it was. \
            On a terminal, stderr shows how far the recording is (at most 4 updates a second, erased at the end). \
            See Docs/Devices.md.
            """
    )

    @OptionGroup var live: LiveDeviceOptions

    @Option(help: ArgumentHelp(
        "The trace file to write; '-' is stdout. An existing file is kept unless --overwrite is given.",
        valueName: "file"), completion: .outputFile)
    var output: String

    @Flag(help: "Replace the --output file if it exists (atomically, once samples arrive).")
    var overwrite = false

    @Option(help: ArgumentHelp("Stop after this many seconds of samples.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Sensors to record, comma-separated (default: all the device has).", valueName: "accel,gyro,mag"))
    var sensors: SensorList?

    @Option(help: "Output format: csv (the canonical trace format) or jsonl (default: --output's extension, else csv).")
    var format: TraceFormat?

    func validate() throws {
        try live.validateDevice()
        _ = try OutputPath.format(of: output, given: format)
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration).")
        }
    }

    func run() async throws {
        Interruption.install()
        do {
            try OutputPath.check(output, overwrite: overwrite)  // before waiting for any device
            let format = (try? OutputPath.format(of: output, given: format)) ?? .csv
            let session = LiveSession(
                options: live, selector: live.device ?? "auto", wanted: sensors?.set,
                interval: 0, filter: nil,
                output: .init(
                    path: output, existing: overwrite ? .replace : .refuse, format: format, flushing: .whenFull,
                    source: "motionctl record"),
                // Not into a trace going to the same terminal.
                duration: duration, showsProgress: output != "-" || isatty(1) != 1)
            try await session.run()
        } catch {
            throw report(error)
        }
    }
}
