import ArgumentParser
import Motion
import MotionClient
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace

/// `motionctl stream`: replays a trace, or reads a live device (`--device`), to stdout, filtered and thinned.
struct StreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Stream motion samples from a recorded trace or a live IIO device to stdout.",
        discussion: """
            The trace is read as it streams (any size; '-' reads stdin) and replayed paced by its timestamps like a \
            live device (--speed realtime), faster or slower (--speed 4, --speed 0.5), or as fast as possible \
            (--speed max). Filters run on every input sample; --interval then thins each sensor's readings. \
            In CSV the trace's comment and metadata lines are kept (attribution included) and the processing is \
            added as metadata. --duration and --count end the stream after that much trace or device time or \
            that many rows, for every input. \
            With --device (auto, a name, label, id, sysfs path or /dev node) samples come from live IIO devices \
            instead, at --rate; --speed and --lenient are refused there, as the device options are with --trace. \
            See Docs/Devices.md.
            """
    )

    @OptionGroup var input: InputOptions<RealTimeReplay>

    @Option(help: ArgumentHelp(
        "Stop after this many seconds of trace or device time, from the first sample (that sample's time + this "
            + "is left out).", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Stop after writing this many samples (rows).", valueName: "n"))
    var count: Int?

    @OptionGroup var processing: ProcessingOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        try input.validate()
        if let duration, !(duration > 0 && duration.isFinite) {
            throw ValidationError("--duration must be a positive number of seconds, got \(duration).")
        }
        if let count, count <= 0 {
            throw ValidationError("--count must be a positive number of samples, got \(count).")
        }
    }

    func run() async throws {
        Interruption.install()
        do {
            if let device = input.live.device {
                try await streamDevice(device)
            } else if input.service {
                try await streamService()
            } else {
                try await stream()
            }
        } catch {
            throw report(error)
        }
    }

    /// Live samples through the same filters and output as a trace (LiveDevices.swift).
    func streamDevice(_ device: String) async throws(MotionError) {
        var extra: [(String, String)] = []
        if let filter = processing.filter { extra.append(("filter", filter.description)) }
        if processing.interval > 0 { extra.append(("update_interval_s", "\(processing.interval)")) }
        let session = LiveSession(
            options: input.live, selector: device, wanted: processing.sensors?.set,
            interval: processing.interval, filter: processing.filter,
            output: .init(
                path: "-", format: output.format, flushing: output.flushing,
                source: "motionctl stream", metadata: extra),
            duration: duration, count: count)
        try await session.run()
    }

    /// The motion service's samples, through a `MotionManager` on `MotionSource.service()`: the same filters,
    /// interval and output as `--device`, until SIGINT or SIGTERM. Without `--interval`, every sample at the
    /// device's current rate (25 Hz when that needs a right the user lacks: `ServiceRates`).
    func streamService() async throws(MotionError) {
        var configuration = MotionConfiguration()
        configuration.sensorFilter = processing.filter
        var metadata = TraceMetadata()
        metadata["source"] = "motionctl stream"
        metadata["input"] = "motion service (org.swiftmotion.Motion1)"
        metadata["clock"] = "boottime"
        if let filter = processing.filter { metadata["filter"] = filter.description }
        if processing.interval > 0 { metadata["update_interval_s"] = "\(processing.interval)" }
        let (asked, interval, format) = (processing.sensors?.set, processing.interval, output.format)
        let wanted = asked ?? .all
        // `demand`: the interval the service is asked for, each sample delivered (no --interval), or `nil` for
        // --interval's grid.
        let (duration, count) = (self.duration, self.count)
        let attempt = { (demand: Double?) async throws(MotionError) -> Void in
            let manager = try MotionManager(source: .service(), configuration: configuration)
            let available = manager.availableSensors
            // --sensors must all be there, as on a device; without it, those the service has. Nothing available: the
            // service cannot be reached, and the run says why.
            if let asked, !available.isEmpty {
                try requireAskedSensors(asked, have: available, input: "the motion service", holder: "it")
            }
            let sensors = available.isEmpty ? wanted : wanted.intersection(available)
            guard !sensors.isEmpty else {
                throw MotionError(
                    .deviceNotFound,
                    "the motion service has no \(wanted) sensor; it has \(available.isEmpty ? "none" : "\(available)")")
            }
            var writer: TraceWriter?  // made at the first sample: a refused attempt writes nothing
            let limit = OutputLimit.make(duration: duration, count: count)
            try await drive(
                manager, request: .init(sensors: sensors, updateInterval: demand == nil ? interval : 0),
                demandInterval: demand ?? interval, flush: { () throws(MotionError) in try writer?.flush() }
            ) { outputs throws(MotionError) in
                if let limit, !limit.admits(outputs.timestamp) { return false }
                guard let sample = outputs.sample else { return true }
                if writer == nil {
                    writer = try TraceWriter(
                        fileDescriptor: 1, name: "<stdout>", format: format, sensors: sensors, metadata: metadata,
                        flushing: .eachLine)
                }
                try writer!.write(sample)
                limit?.didWrite()
                return limit?.isReached != true
            }
        }
        if interval > 0 {
            try await attempt(nil)
        } else {
            try await ServiceRates.atCurrentRate(of: wanted, hint: " (--interval chooses another rate)") {
                interval throws(MotionError) in try await attempt(interval)
            }
        }
    }

    func stream() async throws(MotionError) {
        let trace = input.trace ?? "-"
        let reader = try openTrace(trace, lenient: input.lenient)
        defer { warnAboutSkippedRows(reader) }
        let sensors = processing.sensors?.set ?? reader.sensors
        guard reader.sensors.isSuperset(of: sensors) else {
            throw MotionError(
                .invalidArgument,
                "the trace has no \(sensors.subtracting(reader.sensors)) columns (it has \(reader.sensors)); "
                    + "choose --sensors among those",
                at: .init(file: trace))
        }
        var metadata = reader.metadata
        if let filter = processing.filter { metadata["filter"] = filter.description }
        if processing.interval > 0 { metadata["update_interval_s"] = "\(processing.interval)" }
        let writer = try TraceWriter(
            fileDescriptor: 1, name: "<stdout>", format: output.format, sensors: sensors, metadata: metadata,
            flushing: output.flushing)
        let limit = OutputLimit.make(duration: duration, count: count)
        try await drive(
            .trace(reader, pacing: input.speed), configuration: MotionConfiguration(sensorFilter: processing.filter),
            request: .init(sensors: sensors, updateInterval: processing.interval), flush: writer.flush
        ) { outputs throws(MotionError) in
            if let limit, !limit.admits(outputs.timestamp) { return false }
            if let sample = outputs.sample {
                try writer.write(sample)
                limit?.didWrite()
            }
            return limit?.isReached != true
        }
    }
}
