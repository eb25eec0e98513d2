import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace

/// Records live IIO devices as a canonical trace (`Docs/TraceFormat.md`), with their metadata and lifecycle, as
/// `motionctl record` and `motionctl stream --device` do.
///
/// The one path: `MotionSource.device` (selection, the whole `CaptureConfiguration`, the reconnect policy) through
/// a `MotionManager`'s loop (`drive`: the filter, then `interval` thins each sensor) to the library's one recorder
/// (`TraceRecorder`). The output is opened at the first sample, so its metadata (the devices, each sensor's mount
/// matrix, scale and offset with their sources, the rate, how each device is read, after any fallback to
/// polling) is what the samples came from, and it never destroys a file (put in place once it holds samples). It
/// is flushed after every batch, so a reader (or `kill -9`) sees whole lines. A removal is written as a
/// `disconnected` event and, when the policy waits for the device, its return as a `connected` event; timestamps
/// never go back in time.
struct DeviceRecorder: Sendable {
    /// Where the trace goes.
    struct Output: Sendable {
        /// The file, or `-` for standard output.
        var path: String
        /// What to do with a file already at `path`.
        var existing: TraceOutputFile.ExistingFile
        /// CSV (the canonical trace) or JSON Lines.
        var format: TraceFormat
        /// When lines are written out (besides after every batch).
        var flushing: TraceWriter.Flushing
        /// The `source` metadata line, such as `motionctl record`.
        var source: String
        /// `key: value` lines after the devices' (the filter, the interval).
        var metadata: [(String, String)]

        /// Creates an output description.
        init(
            path: String, existing: TraceOutputFile.ExistingFile = .refuse, format: TraceFormat = .csv,
            flushing: TraceWriter.Flushing = .whenFull, source: String, metadata: [(String, String)] = []
        ) {
            self.path = path
            self.existing = existing
            self.format = format
            self.flushing = flushing
            self.source = source
            self.metadata = metadata
        }
    }

    /// The devices to read: `auto`, or a device's name, label, id, sysfs path or `/dev` node.
    var selector: String
    /// The sensors to record: each must be on the devices (``run(report:progress:)`` fails at once naming a missing
    /// one); `nil` records every sensor the devices have.
    var sensors: SensorSet?
    /// How the devices are read; `includeBase` and the reconnect policy too.
    var configuration: DeviceSourceConfiguration
    /// The filter of every reading, or `nil`.
    var filter: VectorFilter?
    /// Seconds between the recorded readings of each sensor (0: every reading).
    var interval: Double
    /// Stop after this many seconds of samples (from the first sample's timestamp), or `nil` to run until the task
    /// is cancelled.
    var duration: Double?
    /// Stop after writing this many samples (rows), or `nil` for no limit.
    var maximumSamples: Int?
    /// Where the trace goes.
    var output: Output

    /// Fails at once with a usage error when the devices `selector` picks lack a sensor of `--sensors` (as for a
    /// trace without its columns), naming the sensor and the devices; when none matches, the session says so.
    static func requireSensors(_ asked: SensorSet, of selector: String, includeBase: Bool) throws(MotionError) {
        let sources = DeviceSelector(selector).sources(
            from: try IIODeviceDiscovery.devices(includeBase: includeBase), sensors: asked)
        guard !sources.isEmpty else { return }
        let names = sources.map { "\($0.device.id) (\($0.device.name))" }.joined(separator: ", ")
        try requireAskedSensors(
            asked, have: sources.reduce(SensorSet()) { $0.union($1.device.sensorSet) }, input: "--device \(selector)",
            holder: names)
    }

    /// How far a recording is, as ``run(report:progress:)`` tells it after every batch of samples.
    struct Progress: Sendable, Equatable {
        /// The samples written so far.
        var samples: Int
        /// The time from the first sample written to the last, s (0 before the second).
        var seconds: Double
    }

    /// Creates a recorder.
    init(
        selector: String, sensors: SensorSet? = nil, configuration: DeviceSourceConfiguration,
        filter: VectorFilter? = nil, interval: Double = 0, duration: Double? = nil, maximumSamples: Int? = nil,
        output: Output
    ) {
        self.selector = selector
        self.sensors = sensors
        self.configuration = configuration
        self.filter = filter
        self.interval = interval
        self.duration = duration
        self.maximumSamples = maximumSamples
        self.output = output
    }

    /// Records until SIGINT or SIGTERM (the file then holds everything up to then, at its path), `duration` has
    /// passed, `maximumSamples` are written, or an error (a removal under `ReconnectPolicy.endOnDisconnect`: what
    /// was recorded is kept).
    /// `report` gets what a user should be told as it happens: warnings, a fallback to polling, a removal, a return;
    /// `progress`, when given, is called after every batch of samples written (on the device's thread, between
    /// batches: it should return quickly).
    func run(
        report: @escaping (String) -> Void, progress: ((Progress) -> Void)? = nil
    ) async throws(MotionError) {
        let sink = LiveOutput(recorder: self, report: report)
        let manager = try MotionManager(
            source: .device(selector, configuration: configuration, events: { event in sink.handle(event) }),
            configuration: MotionConfiguration(sensorFilter: filter))
        // The sensors asked, which the devices present must have; without --sensors, those the devices have (all
        // when none is present yet: the first that comes decides).
        let recorded: SensorSet
        if let sensors {
            try Self.requireSensors(sensors, of: selector, includeBase: configuration.includeBase)
            recorded = sensors
        } else {
            recorded = manager.availableSensors.isEmpty ? .all : manager.availableSensors
        }
        sink.output.sensors = recorded
        let (duration, maximumSamples, output) = (self.duration, self.maximumSamples, sink.output)
        do {
            try await drive(
                manager, request: .init(sensors: recorded, updateInterval: interval), demandInterval: interval,
                flush: { () throws(MotionError) in
                    try sink.throwIfFailed()
                    try output.endBatch()
                    if let progress, let first = output.firstTimestamp, let last = output.lastTimestamp {
                        progress(Progress(samples: output.sampleCount, seconds: last - first))
                    }
                }
            ) { outputs throws(MotionError) in
                try sink.throwIfFailed()
                if let duration, let first = sink.firstInputTimestamp ?? Optional(outputs.timestamp) {
                    sink.firstInputTimestamp = first
                    if outputs.timestamp - first >= duration { return false }
                }
                if let sample = outputs.sample { try output.write(sample) }
                return maximumSamples.map { output.sampleCount < $0 } ?? true
            }
        } catch {
            output.abandon()
            throw error
        }
        guard sink.hasOpened else { throw MotionError(.cancelled, "interrupted before a device was found") }
        try output.finish(requireOutput: true)
    }

    /// The recording's state between the run's loop and the device's events, which both run on the device's
    /// thread, one at a time (the events come from the source's wait, inside the loop): hence `@unchecked
    /// Sendable`.
    final class LiveOutput: @unchecked Sendable {
        let recorder: DeviceRecorder
        let report: (String) -> Void
        let output: TraceRecorder
        var reported: [CaptureDetails] = []
        /// The first sample's time, s (for `duration`).
        var firstInputTimestamp: Double?
        /// A device was opened.
        var hasOpened = false
        /// An event's write failed: the loop throws it at its next step.
        var failure: MotionError?

        init(recorder: DeviceRecorder, report: @escaping (String) -> Void) {
            self.recorder = recorder
            self.report = report
            output = TraceRecorder(
                path: recorder.output.path, existing: recorder.output.existing, format: recorder.output.format,
                flushing: recorder.output.flushing, sensors: recorder.sensors ?? .all, metadata: TraceMetadata())
        }

        func throwIfFailed() throws(MotionError) {
            if let failure { throw failure }
        }

        /// Until the first sample, the output's columns and metadata follow the devices opened.
        func describe(_ details: [CaptureDetails]) {
            guard !output.isStarted else { return }
            let sensors = details.reduce(SensorSet()) { set, detail in
                detail.sensors.reduce(set) { $0.union($1.sensor) }
            }.intersection(recorder.sensors ?? .all)
            if !sensors.isEmpty { output.sensors = sensors }
            output.metadata = recorder.metadata(details)
        }

        func handle(_ event: IIODeviceEvent) {
            do {
                switch event {
                case .opened(let details), .detailsChanged(let details):
                    hasOpened = true
                    describe(details)
                    DeviceRecorder.reportChanges(in: details, since: &reported, to: report)
                case .monitorUnavailable(let error):
                    report("warning: cannot watch for devices (\(error)); a removal will end the recording")
                case .disconnected(let disconnection):
                    report("\(disconnection.error.message); waiting for a matching device")
                    try output.writeEvent(
                        type: "disconnected", timestamp: disconnection.timestamp,
                        fields: [
                            ("device", .string(disconnection.device?.id ?? "")),
                            ("name", .string(disconnection.device?.name ?? "")),
                            ("reason", .string(disconnection.error.message)),
                        ])
                case .reconnected(let details, let timestamp):
                    reported = []
                    describe(details)
                    DeviceRecorder.reportChanges(in: details, since: &reported, to: report)
                    let names = IIODeviceEvent.names(details)
                    report("\(names) connected; resuming")
                    try output.writeEvent(type: "connected", timestamp: timestamp, fields: [("devices", .string(names))])
                }
            } catch {
                failure = failure ?? error
            }
        }
    }

    /// Prints each device's warnings, and why it is polled after a fallback, once: for the entries of `details`
    /// that differ from `reported`, which becomes `details`.
    static func reportChanges(
        in details: [CaptureDetails], since reported: inout [CaptureDetails], to report: (String) -> Void
    ) {
        for (index, detail) in details.enumerated() where index >= reported.count || reported[index] != detail {
            let before = index < reported.count ? reported[index] : nil
            for warning in detail.warnings where before?.warnings.contains(warning) != true {
                report("warning: \(detail.device.id): \(warning)")
            }
            if let fallback = detail.fallback, before?.fallback != fallback {
                report("warning: \(detail.device.id): reading in_*_raw attributes instead of the buffer: " + fallback)
            }
        }
        reported = details
    }

    /// The trace's metadata for `details`: the devices, each sensor's mount matrix, scale and offset with their
    /// sources, the rate and how each device is read; then the output's own.
    func metadata(_ details: [CaptureDetails]) -> TraceMetadata {
        var metadata = TraceMetadata()
        metadata["source"] = output.source
        metadata["device"] = details.map { "\($0.device.name) (\($0.device.id))" }.joined(separator: ", ")
        metadata["clock"] = "boottime"
        if let rate = details.first?.samplingFrequency { metadata["rate_hz"] = DeviceValueText.number(rate) }
        for detail in details {
            for kind in detail.sensors {
                guard let sensor = detail.device.sensor(kind) else { continue }
                let suffix = SensorSet.shortNames.first { $0.sensor == kind.sensor }?.name ?? kind.channelType
                metadata["mount_matrix_\(suffix)"] = "\(sensor.mountMatrix.value) (\(sensor.mountMatrix.source))"
                metadata["scale_\(suffix)"] = DeviceValueText.axes(sensor.scale)
                metadata["offset_\(suffix)"] = DeviceValueText.axes(sensor.offset)
            }
            var capture = "\(detail.device.id) \(detail.mode.rawValue)"
            if let fallback = detail.fallback { capture += " (instead of buffered: \(fallback))" }
            if let rate = detail.samplingFrequency { capture += " at \(DeviceValueText.number(rate)) Hz" }
            if let trigger = detail.trigger { capture += ", trigger \(trigger)" }
            capture += ", \(detail.batchSize) scan\(detail.batchSize == 1 ? "" : "s") per wake-up"
            capture += ", timestamps \(detail.timestamps)"
            metadata["capture_\(detail.device.id.replacingColons())"] = capture
        }
        metadata["notes"] =
            "live IIO readings in the device frame: each sensor's mount matrix was applied (corrected = M · raw); "
            + "acceleration in g with Core Motion's sign, rotation rate in rad/s, magnetic field in µT"
        for (key, value) in output.metadata { metadata[key] = value }
        return metadata
    }
}

extension String {
    fileprivate func replacingColons() -> String { String(map { $0 == ":" ? "_" : $0 }) }
}
