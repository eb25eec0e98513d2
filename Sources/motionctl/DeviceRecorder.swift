import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace

/// Records live IIO devices as a canonical trace (`Docs/TraceFormat.md`), with their metadata and lifecycle, as
/// `motionctl record` and `motionctl stream --device` do.
///
/// An `IIODeviceSession` reads the devices (selection, the whole `CaptureConfiguration`, the reconnect policy); the
/// samples go through the one sample loop (`SampleLoop`, `MotionProcessor`: the filter, then `interval` thins each
/// sensor) to a `TraceWriter`. The output is opened at the first batch, so its metadata (the devices, each
/// sensor's mount matrix, scale and offset with their sources, the rate, how each device is read, after any
/// fallback to polling) is what the samples came from, and it never destroys a file (`TraceOutputFile`: put in
/// place once it holds samples). It is flushed after every batch, so a reader (or `kill -9`) sees whole lines. A
/// removal is written as a `disconnected` event and, when the policy waits for the device, its return as a
/// `connected` event; timestamps never go back in time.
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

    /// The devices to read.
    var selector: DeviceSelector
    /// The sensors to record (of those the devices have).
    var sensors: SensorSet
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

    /// How far a recording is, as ``run(report:progress:)`` tells it after every batch of samples.
    struct Progress: Sendable, Equatable {
        /// The samples written so far.
        var samples: Int
        /// The time from the first sample written to the last, s (0 before the second).
        var seconds: Double
    }

    /// Creates a recorder.
    init(
        selector: DeviceSelector, sensors: SensorSet = .all, configuration: DeviceSourceConfiguration,
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

    /// Records until the task is cancelled (the file then holds everything up to then, at its path), `duration`
    /// has passed, `maximumSamples` are written, or an error (a removal under `ReconnectPolicy.endOnDisconnect`:
    /// what was recorded is kept).
    /// `report` gets what a user should be told as it happens: warnings, a fallback to polling, a removal, a return;
    /// `progress`, when given, is called after every batch of samples written (on the caller's task, between
    /// batches: it should return quickly).
    func run(
        report: @escaping (String) -> Void, progress: ((Progress) -> Void)? = nil
    ) async throws(MotionError) {
        let session = try IIODeviceSession(
            selector: selector, sensors: sensors, includeBase: configuration.includeBase,
            configuration: configuration.capture, reconnect: configuration.reconnect)
        defer { session.close() }
        if let failure = session.monitorFailure {
            report("warning: cannot watch for devices (\(failure)); a removal will end the recording")
        }
        let sink = LiveOutput(recorder: self, report: report, progress: progress)
        defer { sink.file?.close() }
        var loop = SampleLoop(
            processor: MotionProcessor(configuration: MotionConfiguration(sensorFilter: filter), request: .init()),
            source: SessionSamples(session: SessionHandle(session: session), sink: sink, duration: duration),
            delivery: LiveDelivery(sink: sink))
        switch await loop.run() {
        case .ended:  // the duration has passed
            break
        case .stopped:  // the task was cancelled
            guard !session.details.isEmpty else {  // while waiting for a device
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
        let recorder: DeviceRecorder
        let report: (String) -> Void
        let progress: ((Progress) -> Void)?
        var file: TraceOutputFile?
        var writer: TraceWriter?
        var lastTimestamp = -Double.infinity
        /// The first sample's time, s.
        var firstTimestamp: Double?
        /// The samples written.
        var writtenSamples = 0
        var reported: [CaptureDetails] = []
        /// What the processor computes once the output is open: the output's sensors, thinned at the interval.
        var request = MotionProcessor.Request()
        var generation = 0

        init(recorder: DeviceRecorder, report: @escaping (String) -> Void, progress: ((Progress) -> Void)?) {
            self.recorder = recorder
            self.report = report
            self.progress = progress
        }

        func start(_ details: [CaptureDetails]) throws(MotionError) {
            guard writer == nil else { return }
            let sensors = details.reduce(SensorSet()) { set, detail in
                detail.sensors.reduce(set) { $0.union($1.sensor) }
            }.intersection(recorder.sensors)
            let opened = try TraceOutputFile(path: recorder.output.path, existing: recorder.output.existing)
            file = opened
            writer = try TraceWriter(
                fileDescriptor: opened.fileDescriptor, name: opened.name, format: recorder.output.format,
                sensors: sensors, metadata: recorder.metadata(details), flushing: recorder.output.flushing)
            request = MotionProcessor.Request(sensors: sensors, updateInterval: recorder.interval)
            generation += 1
        }

        /// After each batch: a reader (or kill -9) sees whole lines up to here, and a file that holds samples is
        /// put at its path.
        func endBatch() throws(MotionError) {
            try writer?.flush()
            if lastTimestamp > -.infinity { try file?.commit() }
            if let progress, let firstTimestamp {
                progress(Progress(samples: writtenSamples, seconds: lastTimestamp - firstTimestamp))
            }
        }

        func handle(_ event: IIODeviceSession.Event) throws(MotionError) {
            switch event {
            case .opened(let details), .detailsChanged(let details):
                DeviceRecorder.reportChanges(in: details, since: &reported, to: report)
            case .disconnected(let disconnection):
                report("\(disconnection.error.message); waiting for a matching device")
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
                DeviceRecorder.reportChanges(in: details, since: &reported, to: report)
                let names = IIODeviceSession.Event.names(details)
                report("\(names) connected; resuming")
                if let writer {  // an output that was already started records the event
                    try writer.writeEvent(
                        type: "connected", timestamp: timestamp, fields: [("devices", .string(names))])
                    try writer.flush()
                }
            }
        }
    }

    /// The session's samples (never back in time: the session clamps across reconnections), its events to the
    /// output between batches, until `duration` of samples has passed or the recorder's `maximumSamples` are
    /// written.
    struct SessionSamples: SampleSource {
        let session: SessionHandle
        let sink: LiveOutput
        let duration: Double?
        var batch: [MotionSample] = []
        var index = 0
        var firstTimestamp: Double?
        var ended = false

        mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
            guard !ended else { return .ended }
            if let maximum = sink.recorder.maximumSamples, sink.writtenSamples >= maximum {
                ended = true
                return .ended
            }
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
        mutating func wait(_ demand: SourceDemand) async throws(MotionError) {
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
            if sink.firstTimestamp == nil { sink.firstTimestamp = sample.timestamp }
            sink.writtenSamples += 1
            return .delivered
        }

        mutating func waitForRoom() async throws(MotionError) {}
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
