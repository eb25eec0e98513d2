import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTesting
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
        "Sampling rate: with --device, the rate to ask for, the device's nearest available rate at or above it "
            + "(default: the device's current rate, or 1/--interval); with --evaluate, the simulated rate (default 100).",
        valueName: "hz"))
    var rate: Double?

    @Option(name: .customLong("batch"), help: ArgumentHelp(
        "Seconds of data per wake-up (the buffer watermark is rate × this; default 0.05).", valueName: "seconds"))
    var batchOption: Double?

    @Option(help: "How to read: automatic (buffered when possible; the default), buffered or polled.")
    var mode: CaptureModeArgument?

    var batchDuration: Double { batchOption ?? 0.05 }

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

    /// The options of `--device` only, for a command that reads traces too (`stream`).
    var deviceOnlyOptions: [InputSpecificOption] {
        [
            .init("--rate", given: rate != nil, for: [.device]), .init("--batch", given: batchOption != nil, for: [.device]),
            .init("--mode", given: mode != nil, for: [.device]), .init("--include-base", given: includeBase, for: [.device]),
        ] + mountMatrixOptions.map { .init($0.option, given: $0.text != nil, for: [.device]) } + [
            .init("--timeout", given: timeout != nil, for: [.device]),
            .init("--exit-on-disconnect", given: exitOnDisconnect, for: [.device]),
        ]
    }

    func validateDevice() throws {
        if device?.isEmpty == true { throw ValidationError("--device needs a value: auto, or a device's name or path.") }
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
            rate: rate ?? (interval > 0 ? 1 / interval : nil), batchDuration: batchDuration, mode: (mode ?? .automatic).mode,
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

/// `stream --device` and `record`: a library `DeviceRecorder` configured from the options; what it reports goes to
/// stderr. With `--exit-on-disconnect` (`ReconnectPolicy.endOnDisconnect`) a removal ends it with the
/// `disconnected` error (exit status 69).
struct LiveSession {
    typealias Output = DeviceRecorder.Output

    let options: LiveDeviceOptions
    let selector: String
    /// `--sensors`, or `nil` for every sensor the devices have.
    let wanted: SensorSet?
    let interval: Double
    let filter: VectorFilter?
    let output: Output
    /// Stop after this many seconds of samples (from the first sample's timestamp).
    let duration: Double?
    /// Stop after writing this many samples.
    var count: Int? = nil
    /// Show how far the recording is on stderr when it is a terminal (`record`; ``TerminalProgress``).
    var showsProgress = false

    func run() async throws(MotionError) {
        let recorder = DeviceRecorder(
            selector: selector, sensors: wanted,
            configuration: DeviceSourceConfiguration(
                includeBase: options.includeBase, capture: options.configuration(interval: interval),
                reconnect: options.exitOnDisconnect ? .endOnDisconnect : .waitForDevice),
            filter: filter, interval: interval, duration: duration, maximumSamples: count, output: output)
        guard showsProgress else {
            try await recorder.run { printToStandardError("motionctl: " + $0) }
            return
        }
        let display = TerminalProgress()
        defer { display.finish() }
        let target = output.path == "-" ? "stdout" : output.path
        display.update("motionctl: recording to \(target): waiting for samples…")
        let total = duration.map { " of \(JSONNumber.text($0)) s" } ?? ""
        try await recorder.run(report: { display.print("motionctl: " + $0) }) { progress in
            display.update(
                "motionctl: recording to \(target): \(fixed(progress.seconds, 1)) s\(total), \(progress.samples) samples")
        }
    }
}
