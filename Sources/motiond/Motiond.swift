import ArgumentParser
import MotionCore
import MotionIIO
import MotionService
import MotionStore

#if canImport(Glibc)
import Glibc
#endif

/// `motiond`: the motion service (Docs/Service.md).
struct Motiond: ParsableCommand, Sendable {
    static let configuration = CommandConfiguration(
        commandName: "motiond",
        abstract: "The motion service: shares the motion sensors on the D-Bus system bus.",
        discussion: """
            Serves net.hadess.SensorProxy (iio-sensor-proxy's API: accelerometer orientation and tilt, compass \
            heading) and org.swiftmotion.Motion1 (devices; streams of samples, device motion, shakes and \
            orientation changes over passed file descriptors) from the IIO devices. Stops cleanly on SIGTERM, SIGINT or SIGHUP, saving the calibration. \
            DBUS_SYSTEM_BUS_ADDRESS selects another bus. See Docs/Service.md.
            """,
        version: SwiftMotion.version)

    @Option(help: "The devices: auto, or a device's name, label, id (iio:device0), sysfs path or /dev node.")
    var device = "auto"

    /// The longest `--claim-timeout` and `--batch-duration`, in seconds: more is a mistake, not a setting.
    static let longestClaimTimeout = 3600.0
    static let longestBatchDuration = 10.0

    @Flag(help: "Also use accelerometers in the base of a convertible.")
    var includeBase = false

    @Option(help: "The orientation rules: swift-motion (debounced) or iio-sensor-proxy (its exact rules).")
    var orientationRules: OrientationRules = .swiftMotion

    @Option(
        help: "The folder of the saved calibration, an absolute path (default: $STATE_DIRECTORY, set by systemd; none without it).",
        completion: .directory)
    var stateDirectory: String?

    @Flag(name: [.short, .long], help: "Take the bus name from a running iio-sensor-proxy (or motiond).")
    var replace = false

    @Option(help: "Seconds a first Claim waits for the sensor's first value before it fails: more than 0, at most 3600.")
    var claimTimeout = 10.0

    @Option(help: "The group whose members may open raw streams faster than 25 Hz (root may too).")
    var highRateGroup = "motion"

    @Option(help: "Ask polkit who may claim sensors and open streams: auto (when it runs), on (always), off.")
    var polkit: PolkitUse = .auto

    @Option(help: "Seconds of samples per wake-up of the device at most (its buffer watermark is rate × this, at least one sample): lower cuts the streams' latency, higher the CPU time. More than 0, at most 10.")
    var batchDuration = 0.05

    @Flag(inversion: .prefixedNo, help: "Wake up at least once per interval of the fastest stream when that is shorter than --batch-duration, so that records wait at most that long in the device's buffer (one sample per wake-up at a 1 kHz stream). --no-low-latency always takes --batch-duration of samples per wake-up (less CPU time).")
    var lowLatency = true

    @Option(help: "Streams one client connection may have open at once.")
    var maxStreamsPerClient = ServiceLimits().streamsPerClient

    @Option(help: "Streams one user (uid) may have open at once, over all their connections.")
    var maxStreamsPerUser = ServiceLimits().streamsPerUser

    @Option(help: "Streams open at once in all (each is a file descriptor; lowered to fit the process's open-file limit).")
    var maxStreams = ServiceLimits().streams

    @Option(help: "Records one user's streams may buffer for slow readers, in all (each stream's buffer counts in full).")
    var maxBufferedRecordsPerUser = ServiceLimits().bufferedRecordsPerUser

    @Option(help: "polkit checks waiting for an answer per user (per client: 4; in all: 4 × this).")
    var maxPolkitChecksPerUser = ServiceLimits().pendingChecksPerUser

    @Option(
        help: "Record the samples into a store in this folder, an absolute path, so that programs can query the past (motionctl history; Docs/History.md). Created when missing.",
        completion: .directory)
    var history: String?

    @Option(help: "Seconds between the recorded samples (every device sample when the device is slower): 0.001 to 10.")
    var historyInterval = 0.02

    @Option(help: "The sensors recorded: a comma-separated list of accel, gyro, mag.")
    var historySensors = "accel"

    @Option(help: "Seconds the history keeps samples (whole segments go once their last write is older).")
    var historyMaxAge = MotionStore.Configuration().maximumAge

    @Option(help: "Bytes the history may take on disk at most (whole segments go, oldest first; at least 8388608).")
    var historyMaxSize = MotionStore.Configuration().maximumBytes

    /// What `--history` and its options ask for, or `nil` without `--history`.
    var historyConfiguration: HistoryConfiguration? {
        guard let history, let sensors = SensorSet(shortNames: historySensors) else { return nil }
        var store = MotionStore.Configuration()
        store.maximumAge = historyMaxAge
        store.maximumBytes = historyMaxSize
        return HistoryConfiguration(directory: history, interval: historyInterval, sensors: sensors, store: store)
    }

    /// The limits the options give.
    var limits: ServiceLimits {
        var limits = ServiceLimits()
        limits.streamsPerClient = maxStreamsPerClient
        limits.streamsPerUser = maxStreamsPerUser
        limits.streams = maxStreams
        limits.bufferedRecordsPerUser = maxBufferedRecordsPerUser
        limits.pendingChecksPerUser = maxPolkitChecksPerUser
        limits.pendingChecks = 4 * maxPolkitChecksPerUser
        return limits
    }

    func validate() throws {
        for (name, value) in [
            ("--max-streams-per-client", maxStreamsPerClient), ("--max-streams-per-user", maxStreamsPerUser),
            ("--max-streams", maxStreams), ("--max-buffered-records-per-user", maxBufferedRecordsPerUser),
            ("--max-polkit-checks-per-user", maxPolkitChecksPerUser),
        ] where value < 1 || value > 1_000_000 {
            throw ValidationError("\(name) must be a whole number from 1 to 1000000, not \(value)")
        }
        if maxPolkitChecksPerUser > 25 {
            throw ValidationError(
                "--max-polkit-checks-per-user must be at most 25: the bus lets the service wait for 128 replies at once")
        }
        guard claimTimeout > 0, claimTimeout <= Self.longestClaimTimeout else {
            throw ValidationError(
                "--claim-timeout must be more than 0 and at most \(Int(Self.longestClaimTimeout)) seconds, not \(claimTimeout)")
        }
        guard batchDuration > 0, batchDuration <= Self.longestBatchDuration else {
            throw ValidationError(
                "--batch-duration must be more than 0 and at most \(Int(Self.longestBatchDuration)) seconds, not \(batchDuration)")
        }
        guard !device.isEmpty else {
            throw ValidationError("--device needs a value: auto, or a device's name, label, id, sysfs path or /dev node")
        }
        guard !highRateGroup.isEmpty, !highRateGroup.contains(where: { $0 == ":" || $0 == "/" || $0 == " " }) else {
            throw ValidationError("--high-rate-group must be a group name (no ':', '/' or spaces), not '\(highRateGroup)'")
        }
        if let history, !history.hasPrefix("/") {
            throw ValidationError("--history must be an absolute path (starting with '/'), not '\(history)'")
        }
        guard historyInterval >= 0.001, historyInterval <= 10 else {
            throw ValidationError("--history-interval must be from 0.001 to 10 seconds, not \(historyInterval)")
        }
        guard SensorSet(shortNames: historySensors) != nil else {
            throw ValidationError("--history-sensors must list accel, gyro or mag (comma-separated), not '\(historySensors)'")
        }
        guard historyMaxAge >= 60, historyMaxAge <= 3.2e9 else {
            throw ValidationError("--history-max-age must be from 60 seconds to 100 years, not \(historyMaxAge)")
        }
        guard historyMaxSize >= 2 * MotionStore.Configuration().segmentBytes else {
            throw ValidationError(
                "--history-max-size must be at least \(2 * MotionStore.Configuration().segmentBytes) bytes (two segments), not \(historyMaxSize)")
        }
        if let stateDirectory, !stateDirectory.hasPrefix("/") {
            throw ValidationError("--state-directory must be an absolute path (starting with '/'), not '\(stateDirectory)'")
        }
    }

    /// Runs the service (main.swift calls it: the command itself is parsed synchronously).
    func serve() async throws {
        let directory = stateDirectory ?? getenv("STATE_DIRECTORY").map { String(cString: $0) }
        let configuration = ServiceConfiguration(
            device: device, includeBase: includeBase, orientationRules: orientationRules,
            stateDirectory: directory?.split(separator: ":").first.map(String.init), replace: replace,
            claimTimeout: claimTimeout, highRateGroup: highRateGroup, polkit: polkit, batchDuration: batchDuration,
            lowLatency: lowLatency, limits: limits, history: historyConfiguration)
        do {
            try await MotionDaemon.run(configuration) { line in Self.log(line) }
        } catch {
            Self.log("error: \(error)")
            throw ExitCode(error.code == .permissionDenied ? 77 : 1)
        }
    }

    /// `motiond --version`: the format of `motionctl --version` (Docs/CLI.md): ours, and the versions of the system
    /// libraries this process loaded, each with its file.
    static var versionReport: String { SystemLibraries.versionReport(tool: "motiond") }

    /// One line on standard error (the journal under systemd).
    static func log(_ line: String) {
        let text = "motiond: " + line + "\n"
        _ = text.withCString { write(2, $0, strlen($0)) }
    }
}

extension OrientationRules: ExpressibleByArgument {}
extension PolkitUse: ExpressibleByArgument {}
