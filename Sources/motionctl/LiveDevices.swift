import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// The options of commands that read live IIO devices (`stream --device`, `record`).
struct LiveDeviceOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The device to read: auto (one device per sensor, merged by timestamp), or a name, label, id "
            + "(iio:device0), sysfs path or /dev node.", valueName: "auto|name|path"))
    var device: String?

    @Option(help: ArgumentHelp(
        "Sampling rate to ask for: the device's nearest available rate at or above it (default: the device's "
            + "current rate, or 1/--interval).", valueName: "hz"))
    var rate: Double?

    @Option(name: .customLong("batch"), help: ArgumentHelp(
        "Seconds of data per wake-up (the buffer watermark is rate × this).", valueName: "seconds"))
    var batchDuration: Double = 0.05

    @Option(help: "How to read: automatic (buffered when possible), buffered or polled.")
    var mode: CaptureModeArgument = .automatic

    @Flag(name: .customLong("include-base"), help: "Also use accelerometers in the base of a convertible.")
    var includeBase = false

    @Option(name: [.customLong("mount-matrix"), .customLong("accel-mount-matrix")], help: ArgumentHelp(
        "The accelerometer's mount matrix, replacing the discovered one: corrected = M · raw, rows separated by ';' "
            + "(write --mount-matrix=… when it starts with '-').",
        valueName: "x1, y1, z1; x2, y2, z2; x3, y3, z3"))
    var mountMatrix: String?

    @Option(name: .customLong("gyro-mount-matrix"), help: ArgumentHelp(
        "The gyroscope's mount matrix, replacing the discovered one (same form as --mount-matrix).",
        valueName: "matrix"))
    var gyroMountMatrix: String?

    @Option(name: .customLong("mag-mount-matrix"), help: ArgumentHelp(
        "The magnetometer's mount matrix, replacing the discovered one (same form as --mount-matrix).",
        valueName: "matrix"))
    var magMountMatrix: String?

    /// The mount-matrix options, by sensor: option name and text.
    private var mountMatrixOptions: [(kind: IIOSensorKind, option: String, text: String?)] {
        [
            (.accelerometer, "--mount-matrix", mountMatrix), (.gyroscope, "--gyro-mount-matrix", gyroMountMatrix),
            (.magnetometer, "--mag-mount-matrix", magMountMatrix),
        ]
    }

    @Option(help: ArgumentHelp(
        "Fail (status 74) when a device delivers nothing for this long (default: wait).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: .customLong("exit-on-disconnect"), help: ArgumentHelp(
        "Exit with status 69 when the device goes away, instead of waiting for it to come back."))
    var exitOnDisconnect = false

    func validateDevice() throws {
        if let rate, !(rate > 0 && rate.isFinite) {
            throw ValidationError("--rate must be a positive number of hertz, got \(rate).")
        }
        guard batchDuration > 0 && batchDuration.isFinite else {
            throw ValidationError("--batch must be a positive number of seconds, got \(batchDuration).")
        }
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            throw ValidationError("--timeout must be a positive number of seconds, got \(timeout).")
        }
        for (_, option, text) in mountMatrixOptions {
            if let text, case .failure(let error) = MountMatrix.parse(text) {
                throw ValidationError("\(option): \(error).")
            }
        }
    }

    /// The capture configuration, with the rate from --rate or else from --interval.
    func configuration(interval: Double) -> CaptureConfiguration {
        var overrides: [IIOSensorKind: MountMatrix] = [:]
        for (kind, _, text) in mountMatrixOptions {
            if let text, case .success(let matrix) = MountMatrix.parse(text) { overrides[kind] = matrix }
        }
        return CaptureConfiguration(
            rate: rate ?? (interval > 0 ? 1 / interval : nil), batchDuration: batchDuration, mode: mode.mode,
            timeout: timeout, mountMatrixOverrides: overrides)
    }
}

/// `--mode automatic|buffered|polled`.
enum CaptureModeArgument: String, ExpressibleByArgument, CaseIterable {
    case automatic, buffered, polled

    var mode: CaptureConfiguration.Mode {
        switch self {
        case .automatic: .automatic
        case .buffered: .buffered
        case .polled: .polled
        }
    }
}

/// Streams samples from live devices into a trace writer, surviving disconnections (see `Docs/Devices.md`):
/// an `IIODeviceSession` reads the devices; a removal is reported (stderr line, and a `disconnected` event in the
/// output), then the session waits for a matching device and resumes with a `connected` event, or with
/// `--exit-on-disconnect` (`ReconnectPolicy.endOnDisconnect`) it ends with the `disconnected` error (exit
/// status 69).
struct LiveSession {
    struct Output {
        /// The file to write, `-` for stdout; opened only once the devices are, and put in place
        /// (`TraceOutputFile.commit()`) once it holds samples, so a failure before leaves any old file as it was.
        var path: String
        var existing: TraceOutputFile.ExistingFile = .refuse
        var format: TraceFormat
        var flushing: TraceWriter.Flushing
        /// `source` metadata, such as `motionctl record`.
        var source: String
        /// Metadata added after the device's, such as the filter.
        var extraMetadata: [(String, String)] = []
    }

    let options: LiveDeviceOptions
    let selector: DeviceSelector
    let wanted: SensorSet
    let interval: Double
    let filter: VectorFilter?
    let output: Output
    /// Stop after this many seconds of samples (from the first sample's timestamp).
    let duration: Double?

    func run() async throws(MotionError) {
        // One session owns discovery, the capture and the wait for a matching device after a removal.
        let session = try IIODeviceSession(
            selector: selector, sensors: wanted, includeBase: options.includeBase,
            configuration: options.configuration(interval: interval),
            reconnect: options.exitOnDisconnect ? .endOnDisconnect : .waitForDevice)
        defer { session.close() }
        if let failure = session.monitorFailure {
            // Without it (no permission to listen to udev), a removal ends the command as with --exit-on-disconnect.
            printToStandardError(
                "motionctl: warning: cannot watch for devices (\(failure)); a removal will end the command")
        }
        let sink = LiveOutput(session: self)
        defer { sink.file?.close() }
        // The one sample loop: the session's samples through MotionProcessor to the trace writer.
        var loop = SampleLoop(
            processor: MotionProcessor(configuration: MotionConfiguration(sensorFilter: filter), request: .init()),
            source: SessionSamples(session: SessionHandle(session: session), sink: sink, duration: duration),
            delivery: LiveDelivery(sink: sink))
        switch await loop.run() {
        case .ended:  // --duration reached
            break
        case .stopped:  // SIGINT or SIGTERM
            guard !session.details.isEmpty else {  // cancelled while waiting for a device
                throw MotionError(.cancelled, "interrupted before a device was found")
            }
        case .failed(let error):
            try? sink.writer?.flush()
            throw error
        }
        try sink.start(session.details)
        try sink.writer!.flush()
        try sink.file!.commit()
    }

    /// The output of a session: opened at the first batch (or at the end, if none came), so its metadata says how
    /// the devices are read after any fallback to polling; the session's events written into it.
    final class LiveOutput {
        let session: LiveSession
        var file: TraceOutputFile?
        var writer: TraceWriter?
        var lastTimestamp = -Double.infinity
        var reported: [CaptureDetails] = []
        /// What the processor computes once the output is open: the output's sensors, thinned at the interval.
        var request = MotionProcessor.Request()
        var generation = 0

        init(session: LiveSession) {
            self.session = session
        }

        func start(_ details: [CaptureDetails]) throws(MotionError) {
            guard writer == nil else { return }
            let sensors = details.reduce(SensorSet()) { set, detail in
                detail.sensors.reduce(set) { $0.union($1.sensor) }
            }.intersection(session.wanted)
            let opened = try TraceOutputFile(path: session.output.path, existing: session.output.existing)
            file = opened
            writer = try TraceWriter(
                fileDescriptor: opened.fileDescriptor, name: opened.name, format: session.output.format,
                sensors: sensors, metadata: session.metadata(details), flushing: session.output.flushing)
            request = MotionProcessor.Request(sensors: sensors, updateInterval: session.interval)
            generation += 1
        }

        /// After each batch: a reader (or kill -9) sees whole lines up to here, and a file that holds samples is
        /// put at its path.
        func endBatch() throws(MotionError) {
            try writer?.flush()
            if lastTimestamp > -.infinity { try file?.commit() }
        }

        func handle(_ event: IIODeviceSession.Event) throws(MotionError) {
            switch event {
            case .opened(let details), .detailsChanged(let details):
                session.reportChanges(in: details, since: &reported)
            case .disconnected(let disconnection):
                printToStandardError("motionctl: \(disconnection.error.message); waiting for a matching device")
                guard let writer else { return }  // nothing written yet: no event to record
                try writer.writeEvent(
                    type: "disconnected", timestamp: disconnection.timestamp,
                    fields: [
                        ("device", .string(disconnection.device?.id ?? "")),
                        ("name", .string(disconnection.device?.name ?? "")),
                        ("reason", .string(disconnection.error.message)),
                    ])
                try writer.flush()
            case .reconnected(let details, let timestamp):
                reported = []
                session.reportChanges(in: details, since: &reported)
                let names = IIODeviceSession.Event.names(details)
                printToStandardError("motionctl: \(names) connected; resuming")
                if let writer {  // an output that was already started records the event
                    try writer.writeEvent(
                        type: "connected", timestamp: timestamp, fields: [("devices", .string(names))])
                    try writer.flush()
                }
            }
        }
    }

    /// The session's samples (never back in time: the session clamps across reconnections), its events to the
    /// output between batches, until `--duration` of samples has passed.
    struct SessionSamples: SampleSource {
        let session: SessionHandle
        let sink: LiveOutput
        let duration: Double?
        var batch: [MotionSample] = []
        var index = 0
        var firstTimestamp: Double?
        var ended = false

        mutating func next(_ demand: SampleDemand) throws(MotionError) -> SampleSourceStep {
            guard !ended else { return .ended }
            guard index < batch.count else { return .wait }
            let sample = batch[index]
            index += 1
            if let duration {
                let first = firstTimestamp ?? sample.timestamp
                firstTimestamp = first
                if sample.timestamp - first >= duration {
                    ended = true
                    return .ended
                }
            }
            return .sample(sample)
        }

        /// Ends the batch (flush and commit), then waits for the next one, writing the events that come before it.
        mutating func wait(_ demand: SampleDemand) async throws(MotionError) {
            if !batch.isEmpty { try sink.endBatch() }
            (batch, index) = ([], 0)
            while batch.isEmpty {
                switch try await session.next() {
                case .event(let event):
                    try sink.handle(event)
                case .samples(let samples):
                    try sink.start(session.session.details)
                    batch = samples
                }
            }
        }

        mutating func putBack(_ sample: MotionSample) {}  // no pacing: never called
    }

    /// The session as the loop's source holds it. The loop runs in one task, which alone uses the session (as its
    /// documentation asks), so handing it to `next()` (nonisolated) from the loop's caller-isolated code is safe.
    struct SessionHandle: @unchecked Sendable {
        let session: IIODeviceSession

        func next() async throws(MotionError) -> IIODeviceSession.Output { try await session.next() }
    }

    /// Writes each sample's readings that are due.
    struct LiveDelivery: SampleDelivery {
        let sink: LiveOutput
        var demand: SampleDemand { SampleDemand(request: sink.request) }
        var demandGeneration: Int { sink.generation }

        mutating func deliver(_ outputs: MotionOutputs, end: Bool) throws(MotionError) -> SampleDeliveryResult {
            guard let sample = outputs.sample else { return .delivered }
            try sink.writer!.write(sample)
            sink.lastTimestamp = sample.timestamp
            return .delivered
        }

        mutating func waitForRoom() async throws(MotionError) {}
    }

    /// Prints each device's warnings, and why it is polled after a fallback, once: for the entries of `details`
    /// that differ from `reported`, which becomes `details`.
    func reportChanges(in details: [CaptureDetails], since reported: inout [CaptureDetails]) {
        for (index, detail) in details.enumerated() where index >= reported.count || reported[index] != detail {
            let before = index < reported.count ? reported[index] : nil
            for warning in detail.warnings where before?.warnings.contains(warning) != true {
                printToStandardError("motionctl: warning: \(detail.device.id): \(warning)")
            }
            if let fallback = detail.fallback, before?.fallback != fallback {
                printToStandardError(
                    "motionctl: warning: \(detail.device.id): reading in_*_raw attributes instead of the buffer: "
                        + fallback)
            }
        }
        reported = details
    }

    func metadata(_ details: [CaptureDetails]) -> TraceMetadata {
        var metadata = TraceMetadata()
        metadata["source"] = output.source
        metadata["device"] = details.map { "\($0.device.name) (\($0.device.id))" }.joined(separator: ", ")
        metadata["clock"] = "boottime"
        if let rate = details.first?.samplingFrequency { metadata["rate_hz"] = DeviceReport.number(rate) }
        for detail in details {
            for kind in detail.sensors {
                guard let sensor = detail.device.sensor(kind) else { continue }
                let suffix = SensorSet.shortNames.first { $0.sensor == kind.sensor }?.name ?? kind.channelType
                metadata["mount_matrix_\(suffix)"] = "\(sensor.mountMatrix.value) (\(sensor.mountMatrix.source))"
                metadata["scale_\(suffix)"] = DeviceReport.axes(sensor.scale)
                metadata["offset_\(suffix)"] = DeviceReport.axes(sensor.offset)
            }
            var capture = "\(detail.device.id) \(detail.mode.rawValue)"
            if let fallback = detail.fallback { capture += " (instead of buffered: \(fallback))" }
            if let rate = detail.samplingFrequency { capture += " at \(DeviceReport.number(rate)) Hz" }
            if let trigger = detail.trigger { capture += ", trigger \(trigger)" }
            capture += ", \(detail.batchSize) scan\(detail.batchSize == 1 ? "" : "s") per wake-up"
            capture += ", timestamps \(detail.timestamps)"
            metadata["capture_\(detail.device.id.replacingColons())"] = capture
        }
        metadata["notes"] =
            "live IIO readings in the device frame: each sensor's mount matrix was applied (corrected = M · raw); "
            + "acceleration in g with Core Motion's sign, rotation rate in rad/s, magnetic field in µT"
        for (key, value) in output.extraMetadata { metadata[key] = value }
        return metadata
    }
}

extension String {
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
