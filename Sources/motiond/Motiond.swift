import ArgumentParser
import MotionCore
import MotionIIO
import MotionMQTT
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

    @Option(
        help: "Record device motion too, at the history's interval, in this frame: arbitrary, arbitrary-corrected, magnetic-north or true-north (motionctl history --kind device-motion).")
    var historyDeviceMotion: String?

    @Flag(help: "Record shakes and device-orientation changes too (motionctl history --kind events).")
    var historyEvents = false

    @Option(help: "Seconds the history keeps samples (whole segments go once their last write is older).")
    var historyMaxAge = MotionStore.Configuration().maximumAge

    @Option(help: "Bytes the history may take on disk at most (whole segments go, oldest first; at least 8388608).")
    var historyMaxSize = MotionStore.Configuration().maximumBytes

    @Option(help: "Publish the samples to this MQTT broker: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (Docs/History.md, \"Publishing\"). Needs --publish-spool.")
    var publishBroker: String?

    @Option(help: "The topic prefix: samples on PREFIX/HOST/motiond/samples, the status on PREFIX/HOST/status.")
    var publishTopic = "motion"

    @Option(help: "The publisher's spool (its outbox), an absolute path; created when missing.", completion: .directory)
    var publishSpool: String?

    @Option(help: "The most bytes waiting in the spool (at least 8388608).")
    var publishSpoolSize = 1 << 30

    @Option(help: "Seconds between published samples: 0.001 to 10.")
    var publishInterval = 0.02

    @Option(help: "The sensors published: a comma-separated list of accel, gyro, mag.")
    var publishSensors = "accel"

    @Option(help: "The user name for the broker.")
    var publishUsername: String?

    @Option(help: "A file holding the broker's password (its first line).", completion: .file())
    var publishPasswordFile: String?

    @Option(help: "The CA certificate file that verifies the broker (mqtts://; default: the system's).", completion: .file())
    var publishCaFile: String?

    @Option(help: "The client certificate and key files, for a broker that asks for them.", completion: .file())
    var publishCertFile: String?

    @Option(help: "The client key file (with --publish-cert-file).", completion: .file())
    var publishKeyFile: String?

    /// What `--publish-broker` and its options ask for, or `nil` without it.
    func publishConfiguration() throws -> PublishConfiguration? {
        guard let publishBroker, let publishSpool, let sensors = SensorSet(shortNames: publishSensors) else { return nil }
        let options = try MQTTOptions(
            url: publishBroker, clientID: "motiond-\(MQTTTopics.hostName())", username: publishUsername,
            passwordFile: publishPasswordFile, caFile: publishCaFile, certificateFile: publishCertFile,
            keyFile: publishKeyFile)
        return PublishConfiguration(
            options: options, topic: publishTopic, spool: publishSpool, spoolSize: publishSpoolSize,
            interval: publishInterval, sensors: sensors)
    }

    /// What `--history` and its options ask for, or `nil` without `--history`.
    var historyConfiguration: HistoryConfiguration? {
        guard let history, let sensors = SensorSet(shortNames: historySensors) else { return nil }
        var store = MotionStore.Configuration()
        store.maximumAge = historyMaxAge
        store.maximumBytes = historyMaxSize
        return HistoryConfiguration(
            directory: history, interval: historyInterval, sensors: sensors,
            deviceMotion: historyDeviceMotion.flatMap(AttitudeReferenceFrame.init(shortName:)), events: historyEvents,
            store: store)
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
        if let historyDeviceMotion, AttitudeReferenceFrame(shortName: historyDeviceMotion) == nil {
            throw ValidationError(
                "--history-device-motion must be arbitrary, arbitrary-corrected, magnetic-north or true-north, not '\(historyDeviceMotion)'")
        }
        if (historyDeviceMotion != nil || historyEvents) && history == nil {
            throw ValidationError("--history-device-motion and --history-events need --history DIR")
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
        if publishBroker != nil {
            guard let publishSpool, publishSpool.hasPrefix("/") else {
                throw ValidationError("--publish-broker needs --publish-spool, an absolute path")
            }
            _ = try MQTTOptions(url: publishBroker!, clientID: "check")
            guard !publishTopic.isEmpty, !publishTopic.contains("#"), !publishTopic.contains("+") else {
                throw ValidationError("--publish-topic must be a topic prefix without wildcards (# +), not '\(publishTopic)'")
            }
            guard publishSpoolSize >= 8 << 20 else {
                throw ValidationError("--publish-spool-size must be at least 8388608 bytes, not \(publishSpoolSize)")
            }
            guard publishInterval >= 0.001, publishInterval <= 10 else {
                throw ValidationError("--publish-interval must be from 0.001 to 10 seconds, not \(publishInterval)")
            }
            guard SensorSet(shortNames: publishSensors) != nil else {
                throw ValidationError("--publish-sensors must list accel, gyro or mag (comma-separated), not '\(publishSensors)'")
            }
            if (publishCertFile == nil) != (publishKeyFile == nil) {
                throw ValidationError("give --publish-cert-file and --publish-key-file together")
            }
            if publishPasswordFile != nil && publishUsername == nil {
                throw ValidationError("--publish-password-file needs --publish-username")
            }
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
            lowLatency: lowLatency, limits: limits, history: historyConfiguration, publish: try publishConfiguration())
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
