public import ArgumentParser
import Motion
import MotionAlgorithms
public import MotionCore
import MotionTrace

extension AttitudeReferenceFrame: ExpressibleByArgument {
    public init?(argument: String) {
        guard let frame = AttitudeReferenceFrame.allCases.first(where: { $0.cliName == argument || $0.rawValue == argument })
        else { return nil }
        self = frame
    }

    /// The short CLI name: `arbitrary`, `arbitrary-corrected`, `magnetic-north`, `true-north`.
    var cliName: String { shortName }

    public static var allValueStrings: [String] { allCases.map(\.cliName) }
    public var defaultValueDescription: String { cliName }
    public static var allValueDescriptions: [String: String] {
        [
            "arbitrary": "6D (gyroscope and accelerometer): z up, x wherever the device pointed at the start",
            "arbitrary-corrected": "as arbitrary, using the magnetometer to limit heading drift",
            "magnetic-north": "9D: x to magnetic north, y west, z up",
            "true-north": "9D: x to true north (magnetic north turned by --declination), y west, z up",
        ]
    }
}

/// `motionctl attitude`: fused attitude (device motion) from a trace, one row per input row, or from a live device.
struct AttitudeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attitude",
        abstract: "Fuse gyroscope, accelerometer and magnetometer into attitude: one row per input row, or live.",
        discussion: """
            Quaternions are scalar first (qw,qx,qy,qz) and map device to reference: v_ref = q·v_device·q*. The \
            reference frame has z up; x is arbitrary (arbitrary, arbitrary-corrected) or north with y west \
            (magnetic-north, true-north: north-west-up). score_attitude.py reads the output with \
            --convention device-to-reference and --frame nwu (any frame works for 6D). Rows before both the \
            gyroscope and the accelerometer have reported carry the identity. --all adds roll, pitch, yaw (rad), \
            unbiased rotation rate (rad/s), gravity and user acceleration (g), heading (degrees, -1 without north) and \
            the calibrated magnetic field (µT, bias removed; 0 in the arbitrary frame) with its accuracy (-1 \
            uncalibrated, 0 low, 1 medium, 2 high). \
            --device reads live IIO devices instead (through MotionManager, until SIGINT or SIGTERM): one row per \
            device motion update, from the first one on; --speed, --lenient and --sensors apply to --trace only (refused with another input).
            """
    )

    @OptionGroup var input: InputOptions<FullSpeedReplay>

    @Option(help: ArgumentHelp(
        "Reference frame (default: the setting deviceMotion.referenceFrame, arbitrary unless set).",
        valueName: "frame"))
    var frame: AttitudeReferenceFrame?

    @Option(help: .setting(
        "Magnetic declination for --frame true-north, degrees east of true north (default: the setting, 0 unless set).",
        .deviceMotionMagneticDeclination, valueName: "degrees"))
    var declination: Double?

    @Option(help: ArgumentHelp(
        "Latency compensation: report the attitude predicted this far ahead from the latest rotation rate.",
        valueName: "seconds"))
    var predict: Double = 0

    @Option(help: ArgumentHelp(
        "The gyroscope's full-scale range, e.g. 2000 for ±2000 °/s; without it, saturation is detected from readings pinned at one value.",
        valueName: "degrees-per-second"))
    var gyroRange: Double?

    @Option(help: ArgumentHelp("Sensors to fuse, comma-separated (accel,gyro for 6D).", valueName: "accel,gyro,mag"))
    var sensors: SensorList?

    @Flag(help: "Also write Euler angles, rotation rate, gravity, user acceleration, heading, calibrated field.")
    var all = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        try input.validate(options: [.init("--sensors", given: sensors != nil, for: [.trace])])
        guard predict >= 0, predict <= 1 else {
            throw ValidationError("--predict must be between 0 and 1 second, got \(predict).")
        }
        if let gyroRange, !(gyroRange > 0 && gyroRange.isFinite) {
            throw ValidationError("--gyro-range must be a positive number of degrees per second, got \(gyroRange).")
        }
        try validateFlag("--declination", declination, setting: .deviceMotionMagneticDeclination)
    }

    func run() async throws {
        Interruption.install()
        do {
            if let source = input.liveSource {
                try await fuseLive(source)
            } else {
                try await fuse(input.trace ?? "-")
            }
        } catch {
            throw report(error)
        }
    }

    static let quaternionColumns = OutputRecords.quaternionColumns
    static let allColumns = OutputRecords.deviceMotionColumns

    /// The algorithms' configuration: the settings, overridden by the flags.
    func motionConfiguration(_ settings: MotionSettings) -> MotionConfiguration {
        var configuration = settings.motionConfiguration
        if let frame { configuration.referenceFrame = frame }
        if let declination { configuration.magneticDeclination = declination }
        configuration.predictionInterval = predict
        if let gyroRange { configuration.attitude.gyroscopeRange = gyroRange * .pi / 180 }
        return configuration
    }

    /// The settings the configuration reads (`loadSettings`): the frame, and the declination for true north.
    var settingsKeys: [SettingKey: Bool] {
        [.deviceMotionReferenceFrame: frame != nil, .deviceMotionMagneticDeclination: declination != nil]
    }

    /// Our metadata keys for `configuration`, after `metadata`'s.
    func describe(_ configuration: MotionConfiguration, input: String, in metadata: inout TraceMetadata) {
        let frame = configuration.referenceFrame
        metadata["generator"] = "motionctl attitude"
        metadata["input"] = input
        metadata["frame"] = "\(frame.rawValue) (\(frame == .xArbitraryZVertical || frame == .xArbitraryCorrectedZVertical ? "x arbitrary, z up" : "x north, y west, z up"))"
        metadata["quaternion"] = "scalar first, device to reference: v_ref = q v_device q*"
        if frame == .xTrueNorthZVertical { metadata["declination_deg"] = "\(configuration.magneticDeclination)" }
        if predict > 0 { metadata["prediction_s"] = "\(predict)" }
        if let gyroRange { metadata["gyro_range_deg_s"] = "\(gyroRange)" }
    }

    func fuse(_ trace: String) async throws(MotionError) {
        let configuration = motionConfiguration(try loadSettings(reading: settingsKeys))
        let frame = configuration.referenceFrame
        let reader = try openTrace(trace, lenient: input.lenient)
        defer { warnAboutSkippedRows(reader) }
        let chosen = sensors?.set ?? reader.sensors
        let needed = frame.requiredSensors
        guard chosen.isSuperset(of: needed), reader.sensors.isSuperset(of: needed) else {
            throw MotionError(
                .invalidArgument,
                "the \(frame.cliName) frame needs \(needed) but the trace has \(reader.sensors)"
                    + (sensors == nil ? "" : " and --sensors chose \(chosen)")
                    + "; use --frame arbitrary for 6D",
                at: .init(file: trace))
        }
        // The input's lines become comments (attribution travels with the output); our own keys follow.
        var metadata = TraceMetadata(lines: reader.metadata.lines.map { line in
            switch line {
            case .comment: line
            case .entry(let key, let value): .comment("\(key): \(value)")
            }
        })
        describe(configuration, input: trace, in: &metadata)
        try await fuse(
            from: .trace(reader, pacing: input.speed), configuration: configuration, metadata: metadata,
            sensors: chosen, rows: .everySample(flushing: output.flushing))
    }

    /// When `fuse` writes a row.
    enum Rows {
        /// One per input sample (the identity until both sensors have reported), the header at once: a trace.
        case everySample(flushing: TraceWriter.Flushing)
        /// One per device motion update, each line flushed, the header with the first: a live input (a refused
        /// service attempt then writes nothing).
        case everyUpdate
    }

    /// Device motion of `source` (a trace, a device, the service) through the one path (`drive`), to stdout.
    func fuse(
        from source: MotionSource, configuration: MotionConfiguration, metadata: TraceMetadata,
        sensors: SensorSet? = nil, demandInterval: Double = 0, rows: Rows
    ) async throws(MotionError) {
        let frame = configuration.referenceFrame
        let (format, all) = (output.format, self.all)
        let columns = all ? Self.allColumns : Self.quaternionColumns
        let makeWriter = { (flushing: TraceWriter.Flushing) throws(MotionError) -> TraceWriter in
            try TraceWriter(
                fileDescriptor: 1, name: "<stdout>", format: format, recordType: "attitude", columns: columns,
                metadata: metadata, flushing: flushing)
        }
        var values = [Double](repeating: 0, count: columns.count)
        values[0] = 1  // the identity until both the gyroscope and the accelerometer have reported
        let request = MotionProcessor.Request(referenceFrames: [frame])
        // However the run ends (a malformed row, a signal too): the rows written came from saturated readings.
        let warnAboutSaturation = { (processor: MotionProcessor) in
            let saturated = processor.deviceMotionFilter(for: frame)?.estimator.gyroscopeSaturationCount ?? 0
            if saturated > 0 {
                printToStandardError(
                    "motionctl: warning: \(saturated) gyroscope readings were saturated (clipped at the full-scale range)")
            }
        }
        switch rows {
        case .everySample(let flushing):
            let writer = try makeWriter(flushing)  // a constant: nothing to load or retain per row
            try await drive(
                source, configuration: configuration, request: request, sensors: sensors,
                demandInterval: demandInterval, flush: writer.flush, ended: warnAboutSaturation
            ) { outputs throws(MotionError) in
                if let motion = outputs.deviceMotion(in: frame) { Self.fill(&values, with: motion, all: all) }
                try writer.write(recordAt: outputs.timestamp, values: values)
                return true
            }
        case .everyUpdate:
            var writer: TraceWriter?  // made at the first update: a refused service attempt writes nothing
            try await drive(
                source, configuration: configuration, request: request, sensors: sensors,
                demandInterval: demandInterval, flush: { () throws(MotionError) in try writer?.flush() },
                ended: warnAboutSaturation
            ) { outputs throws(MotionError) in
                guard let motion = outputs.deviceMotion(in: frame) else { return true }
                Self.fill(&values, with: motion, all: all)
                if writer == nil { writer = try makeWriter(.eachLine) }
                try writer!.write(recordAt: outputs.timestamp, values: values)
                return true
            }
        }
    }

    /// Device motion from a live device or the service, one row per update (flushed), until SIGINT or SIGTERM
    /// (status 0) or a device error. Through the service: every sample at the device's current rate (25 Hz when
    /// that needs a right the user lacks: `ServiceRates`).
    func fuseLive(_ source: MotionSource) async throws(MotionError) {
        let configuration = motionConfiguration(try loadSettings(reading: settingsKeys))
        var metadata = TraceMetadata()
        describe(configuration, input: source.description, in: &metadata)
        metadata["clock"] = "boottime"
        if input.service {
            try await ServiceRates.atCurrentRate(of: configuration.referenceFrame.requiredSensors) {
                interval throws(MotionError) in
                try await fuse(
                    from: source, configuration: configuration, metadata: metadata, demandInterval: interval,
                    rows: .everyUpdate)
            }
        } else {
            try await fuse(from: source, configuration: configuration, metadata: metadata, rows: .everyUpdate)
        }
    }

    /// Puts `motion` into a row of ``quaternionColumns`` (or ``allColumns`` with `all`).
    static func fill(_ values: inout [Double], with motion: DeviceMotion, all: Bool) {
        OutputRecords.fill(&values, with: motion, all: all)
    }
}
