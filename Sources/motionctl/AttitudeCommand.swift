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
    var cliName: String {
        switch self {
        case .xArbitraryZVertical: "arbitrary"
        case .xArbitraryCorrectedZVertical: "arbitrary-corrected"
        case .xMagneticNorthZVertical: "magnetic-north"
        case .xTrueNorthZVertical: "true-north"
        }
    }

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

/// `motionctl attitude`: fused attitude (device motion) from a trace, one row per input row.
struct AttitudeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attitude",
        abstract: "Fuse gyroscope, accelerometer and magnetometer into attitude: one row per input row.",
        discussion: """
            Quaternions are scalar first (qw,qx,qy,qz) and map device to reference: v_ref = q·v_device·q*. The \
            reference frame has z up; x is arbitrary (arbitrary, arbitrary-corrected) or north with y west \
            (magnetic-north, true-north: north-west-up). score_attitude.py reads the output with \
            --convention device-to-reference and --frame nwu (any frame works for 6D). Rows before both the \
            gyroscope and the accelerometer have reported carry the identity. --all adds roll, pitch, yaw (rad), \
            unbiased rotation rate (rad/s), gravity and user acceleration (g), heading (degrees, -1 without north) and \
            the calibrated magnetic field (µT, bias removed; 0 in the arbitrary frame) with its accuracy (-1 \
            uncalibrated, 0 low, 1 medium, 2 high).
            """
    )

    @Option(help: ArgumentHelp("The trace, in the canonical CSV format; '-' reads stdin.", valueName: "file"))
    var trace: String

    @Option(help: ArgumentHelp(
        "Reference frame (default: the setting deviceMotion.referenceFrame, arbitrary unless set).",
        valueName: "frame"))
    var frame: AttitudeReferenceFrame?

    @Option(help: .setting(
        "Magnetic declination for --frame true-north, degrees east of true north (default: the setting, 0 unless set).",
        "deviceMotion.magneticDeclination", valueName: "degrees"))
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

    @Option(help: "Replay speed: realtime, max, or a factor such as 2 or 0.5.")
    var speed: ReplaySpeed = .max

    @Flag(help: "Also write Euler angles, rotation rate, gravity, user acceleration, heading, calibrated field.")
    var all = false

    @Flag(help: "Skip malformed rows instead of stopping; a count of skipped rows by reason goes to stderr.")
    var lenient = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard predict >= 0, predict <= 1 else {
            throw ValidationError("--predict must be between 0 and 1 second, got \(predict).")
        }
        if let gyroRange, !(gyroRange > 0 && gyroRange.isFinite) {
            throw ValidationError("--gyro-range must be a positive number of degrees per second, got \(gyroRange).")
        }
        try validateFlag("--declination", declination, setting: "deviceMotion.magneticDeclination")
    }

    func run() throws {
        Interruption.install()
        do {
            try fuse()
        } catch {
            throw report(error)
        }
    }

    static let quaternionColumns = ["qw", "qx", "qy", "qz"]
    static let allColumns = quaternionColumns + [
        "roll", "pitch", "yaw", "rx", "ry", "rz", "gravx", "gravy", "gravz", "ux", "uy", "uz", "heading",
        "cmx", "cmy", "cmz", "maccuracy",
    ]

    func fuse() throws(MotionError) {
        let settings = try MotionSettings.load()
        let frame = self.frame ?? settings.referenceFrame
        let declination = self.declination ?? settings.motionConfiguration.magneticDeclination
        let reader = try TraceReader(path: trace, options: .init(lenient: lenient))
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
        metadata["generator"] = "motionctl attitude"
        metadata["input"] = trace
        metadata["frame"] = "\(frame.rawValue) (\(frame == .xArbitraryZVertical || frame == .xArbitraryCorrectedZVertical ? "x arbitrary, z up" : "x north, y west, z up"))"
        metadata["quaternion"] = "scalar first, device to reference: v_ref = q v_device q*"
        if predict > 0 { metadata["prediction_s"] = "\(predict)" }
        var configuration = AttitudeEstimatorConfiguration()
        if let gyroRange {
            metadata["gyro_range_deg_s"] = "\(gyroRange)"
            configuration.gyroscopeRange = gyroRange * .pi / 180
        }
        let columns = all ? Self.allColumns : Self.quaternionColumns
        let writer = try TraceWriter(
            fileDescriptor: 1, name: "<stdout>", format: output.format, recordType: "attitude", columns: columns,
            metadata: metadata, flushing: output.flushing)
        var filter = DeviceMotionFilter(
            referenceFrame: frame, magneticDeclination: declination * .pi / 180, predictionInterval: predict,
            configuration: configuration)
        defer {
            let saturated = filter.estimator.gyroscopeSaturationCount
            if saturated > 0 {
                printToStandardError(
                    "motionctl: warning: \(saturated) gyroscope readings were saturated (clipped at the full-scale range)")
            }
        }
        var pacer = Pacer(speed: speed.factor)
        var values = [Double](repeating: 0, count: columns.count)
        values[0] = 1
        while !Interruption.isRequested, let sample = try reader.next() {
            if let motion = filter.update(sample.restricted(to: chosen)) {
                let q = motion.attitude.quaternion
                (values[0], values[1], values[2], values[3]) = (q.w, q.x, q.y, q.z)
                if all {
                    (values[4], values[5], values[6]) = (motion.attitude.roll, motion.attitude.pitch, motion.attitude.yaw)
                    (values[7], values[8], values[9]) = (motion.rotationRate.x, motion.rotationRate.y, motion.rotationRate.z)
                    (values[10], values[11], values[12]) = (motion.gravity.x, motion.gravity.y, motion.gravity.z)
                    (values[13], values[14], values[15]) =
                        (motion.userAcceleration.x, motion.userAcceleration.y, motion.userAcceleration.z)
                    values[16] = motion.heading
                    let field = motion.magneticField?.field ?? MagneticField(x: 0, y: 0, z: 0)
                    (values[17], values[18], values[19]) = (field.x, field.y, field.z)
                    values[20] = Double(motion.magneticField?.accuracy.rawValue ?? -1)
                }
            }
            if let deadline = pacer.deadline(for: sample.timestamp) {
                try writer.flush()
                Pacer.sleep(until: deadline)
                if Interruption.isRequested { break }
            }
            try writer.write(recordAt: sample.timestamp, values: values)
        }
        try writer.flush()
    }
}
