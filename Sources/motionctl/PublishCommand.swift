import ArgumentParser
import Motion
import MotionCore
import MotionMQTT
import MotionStore
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl publish`: the samples of a trace, a device or the service, to an MQTT broker through a spool that
/// loses nothing (`Docs/History.md`, "Publishing").
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish motion samples to an MQTT broker, through a spool that loses nothing.",
        discussion: """
            Each message, on PREFIX/HOST/INPUT/samples at QoS 1, holds a header object {"type":"batch",\
            "stream":ID,"seq":N,"records":K} and then K samples as `stream --format jsonl` prints them; (stream, \
            seq) lets a receiver drop the duplicates QoS 1 allows. A message is written to the spool (--spool DIR) \
            before it is sent and leaves it only once the broker acknowledged it: while the broker is unreachable \
            messages wait there (up to --spool-size bytes; beyond, new ones are refused and counted) and go out in \
            order when it is back, reconnections backing off from 0.5 to 30 s with jitter. PREFIX/HOST/status holds \
            a retained online or offline. With no input option, sends what the spool holds and exits 0 once the \
            broker acknowledged it all. After the input ends, waits at most --drain-timeout seconds for the \
            acknowledgements, then exits 75 with the rest kept in the spool for the next run. SIGINT or SIGTERM \
            stops at once, keeping the spool. Passwords come from a file (--password-file), never the command line.
            """
    )

    @OptionGroup var input: InputOptions<RealTimeReplay>

    @Option(help: "The broker: mqtt://HOST[:PORT] (1883) or mqtts://HOST[:PORT] (8883, TLS).")
    var broker: String

    @Option(help: "The topic prefix: messages go to PREFIX/HOST/INPUT/samples.")
    var topic: String

    @Option(help: "The spool's folder: the outbox, created when missing.", completion: .directory)
    var spool: String

    @Option(help: "The most bytes waiting in the spool (at least 8388608).")
    var spoolSize = 1 << 30

    @Option(help: "Seconds between published samples of each sensor (0: every sample).")
    var interval = 0.0

    @Option(help: "The sensors published: a comma-separated list of accel, gyro, mag (default: all the input has).")
    var sensors: String?

    @Option(help: "Seconds of samples per message (sample time), at most 500 samples each.")
    var messageSeconds = 0.5

    @Option(help: "Seconds to wait for the broker's acknowledgements after the input ends.")
    var drainTimeout = 60.0

    @Option(help: "The client id (default: motionctl-HOST-PID).")
    var clientID: String?

    @Option(help: "The user name for the broker.")
    var username: String?

    @Option(help: "A file holding the password (its first line), readable only by you.", completion: .file())
    var passwordFile: String?

    @Option(help: "The CA certificate file that verifies the broker (mqtts://; default: the system's).", completion: .file())
    var caFile: String?

    @Option(help: "The client certificate file, for a broker that asks for one (with --key-file).", completion: .file())
    var certFile: String?

    @Option(help: "The client key file (with --cert-file).", completion: .file())
    var keyFile: String?

    func validate() throws {
        if !input.chosen().isEmpty { try input.validate() }
        guard !topic.isEmpty, !topic.contains("#"), !topic.contains("+"), topic.utf8.count <= 1024 else {
            throw ValidationError("--topic must be a topic prefix without wildcards (# +), not '\(topic)'")
        }
        guard spoolSize >= 8 << 20 else { throw ValidationError("--spool-size must be at least 8388608 bytes, not \(spoolSize)") }
        guard interval >= 0, interval.isFinite else { throw ValidationError("--interval must be 0 or more seconds, not \(interval)") }
        guard messageSeconds > 0, messageSeconds <= 60 else {
            throw ValidationError("--message-seconds must be more than 0 and at most 60, not \(messageSeconds)")
        }
        guard drainTimeout >= 0, drainTimeout <= 86_400 else {
            throw ValidationError("--drain-timeout must be 0 to 86400 seconds, not \(drainTimeout)")
        }
        if let sensors, SensorSet(shortNames: sensors) == nil {
            throw ValidationError("--sensors must list accel, gyro or mag (comma-separated), not '\(sensors)'")
        }
        if (certFile == nil) != (keyFile == nil) { throw ValidationError("give --cert-file and --key-file together") }
        if passwordFile != nil && username == nil { throw ValidationError("--password-file needs --username") }
    }

    func run() async throws {
        Interruption.install()
        do {
            try await publish()
        } catch {
            throw report(error)
        }
    }

    private func publish() async throws(MotionError) {
        let host = MQTTTopics.hostName()
        let options = try MQTTOptions(
            url: broker, clientID: clientID ?? "motionctl-\(host)-\(getpid())", username: username,
            passwordFile: passwordFile, caFile: caFile, certificateFile: certFile, keyFile: keyFile)
        let outbox = try MessageSpool(directory: spool, maximumBytes: spoolSize)
        let publisher = try MQTTPublisher(
            spool: outbox, options: options, statusTopic: MQTTTopics.status(prefix: topic, host: host),
            log: { printToStandardError("motionctl: \($0)") })
        try publisher.start()
        let inputs = input.chosen()
        var stopped = false
        if !inputs.isEmpty {
            let name = input.service ? "service" : input.live.device.map(MQTTTopics.level) ?? "trace"
            let batcher = SampleBatcher(
                spool: outbox, topic: MQTTTopics.samples(prefix: topic, host: host, input: name),
                stream: SampleBatcher.streamID(host: host),
                seconds: messageSeconds)
            do throws(MotionError) {
                try await input.withSource { source throws(MotionError) in
                    let wanted = sensors.flatMap(SensorSet.init(shortNames:)) ?? .all
                    try await drive(
                        source, request: MotionProcessor.Request(sensors: wanted, updateInterval: interval),
                        flush: {}
                    ) { outputs throws(MotionError) in
                        if let sample = outputs.sample { try batcher.add(sample) }
                        return true
                    }
                }
                try batcher.finish()
            } catch {
                await publisher.stop(drain: false)
                throw error
            }
            if batcher.refused > 0 {
                printToStandardError(
                    "motionctl: warning: the spool was full: \(batcher.refused) messages (\(batcher.refusedRecords) samples) were not kept")
            }
            stopped = Interruption.isRequested
        }
        if stopped {
            await publisher.stop(drain: false)
            printToStandardError("motionctl: stopped; \(outbox.pendingBytes) bytes wait in \(spool) for the next run")
            return
        }
        let drained = await Self.drain(publisher, within: drainTimeout)
        guard drained else {
            throw MotionError(
                .ioFailure,
                "the broker did not acknowledge everything within \(drainTimeout) s (\(publisher.lastProblem ?? "no answer")); "
                    + "\(outbox.pendingBytes) bytes wait in \(spool): run 'motionctl publish --spool \(spool) --broker "
                    + "\(broker) --topic \(topic)' to send them")
        }
    }

    /// Waits for the publisher to send and have acknowledged all the spool holds, at most `timeout` seconds (or
    /// until a signal); whether it did.
    private static func drain(_ publisher: MQTTPublisher, within timeout: Double) async -> Bool {
        let deadline = monotonicNanoseconds() + nanoseconds(clamping: timeout)
        let watcher = Task {
            while monotonicNanoseconds() < deadline && !Interruption.isRequested && !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
            }
            publisher.requestStop()
        }
        await publisher.stop(drain: true)
        watcher.cancel()
        return !publisher.stoppedEarly
    }
}
