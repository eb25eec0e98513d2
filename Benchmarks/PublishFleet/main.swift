// motion-publish-fleet: many simulated devices publishing their motion to one MQTT broker, in one process, each
// the way `motionctl publish` does it: its own spool, batcher and publisher (a thread of its own that sleeps until
// its broker socket, a new message or a stop needs it). `Scripts/benchmark-publish.sh fleet` runs it against a real
// mosquitto with a broker outage in the middle; `Docs/Performance.md` ("Publishing") has the figures.
//
//   motion-publish-fleet --broker mqtt://127.0.0.1:PORT --topic fleet --spools DIR [--devices 1000] [--rate 50]
//                        [--sensors accel] [--seconds 120] [--message-seconds 0.5] [--drain-timeout 300]
//
// Each device publishes the accelerometer of the simulated `tumbling` scenario (MotionTesting) at --rate Hz, one
// message per --message-seconds, on `PREFIX/device-NNNN/sim/samples`; the devices' messages are spread evenly over
// the period. Prints a line a second (messages written, acknowledged, waiting; devices connected) and at the end
// what was written and acknowledged and what the process cost.

import ArgumentParser
import MotionCore
import MotionMQTT
import MotionStore
import MotionSystem
import MotionTesting

#if canImport(Glibc)
import Glibc
#endif

@main
struct PublishFleet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motion-publish-fleet", abstract: "Simulates many devices publishing motion to one MQTT broker.")

    @Option(help: "The broker: mqtt://HOST:PORT.") var broker: String
    @Option(help: "The topic prefix.") var topic = "fleet"
    @Option(help: "A directory for the devices' spools (one folder each).") var spools: String
    @Option(help: "Simulated devices.") var devices = 1000
    @Option(help: "Samples per second per device, in Hz.") var rate = 50.0
    @Option(help: "The sensors each sample has (accel, gyro, mag).") var sensors = "accel"
    @Option(help: "Seconds of motion to publish.") var seconds = 120.0
    @Option(help: "Seconds of samples in one message.") var messageSeconds = 0.5
    @Option(help: "Seconds to wait, after the last message, for all to be acknowledged.") var drainTimeout = 300.0

    func validate() throws {
        guard (1...10_000).contains(devices) else { throw ValidationError("--devices must be 1 to 10000") }
        guard rate > 0, rate <= 1000 else { throw ValidationError("--rate must be above 0 and at most 1000 Hz") }
        guard seconds > 0, seconds <= 86_400 else { throw ValidationError("--seconds must be above 0 and at most 86400") }
        guard messageSeconds >= 0.01, messageSeconds <= 60 else { throw ValidationError("--message-seconds: 0.01 to 60") }
        guard drainTimeout >= 0, drainTimeout <= 86_400 else { throw ValidationError("--drain-timeout: 0 to 86400") }
        guard SensorSet(shortNames: sensors) != nil else { throw ValidationError("--sensors lists accel, gyro or mag") }
    }

    func run() async throws {
        raiseOpenFileLimit(to: devices * 8 + 64)
        let sensorSet = SensorSet(shortNames: sensors)!
        // One minute of simulated motion, replayed by every device with its own timestamps.
        let motion = Array(try Simulation(scenario: .tumbling(), options: SimulationOptions(rate: rate, sensors: sensorSet)))
        let perMessage = max(1, Int((rate * messageSeconds).rounded()))
        let fleet = try (0..<devices).map { index in
            let name = "device-" + String(index + 1).leftPadded(to: 4)
            let spool = try MessageSpool(
                directory: spools + "/" + name, maximumBytes: 256 << 20, segmentBytes: 1 << 20)
            let options = try MQTTOptions(url: broker, clientID: "fleet-\(getpid())-\(name)")
            let publisher = try MQTTPublisher(
                spool: spool, options: options, statusTopic: MQTTTopics.status(prefix: topic, host: name),
                log: { _ in })
            let batcher = SampleBatcher(
                spool: spool, topic: MQTTTopics.samples(prefix: topic, host: name, input: "sim"), stream: name,
                seconds: messageSeconds)
            return (publisher: publisher, batcher: batcher)
        }
        for device in fleet { try device.publisher.start() }

        let start = monotonicNanoseconds()
        let period = nanoseconds(clamping: messageSeconds)
        let periods = Int((seconds / messageSeconds).rounded(.up))
        // The devices' messages spread over the period in `slots` groups.
        let slots = min(devices, 50)
        var written = 0
        var samples = 0
        var refused = 0
        var latest = 0  // how late the generator woke, at most, in nanoseconds
        var nextReport = start + 1_000_000_000
        for round in 0..<periods {
            for slot in 0..<slots {
                let due = start + UInt64(round) * period + period * UInt64(slot) / UInt64(slots)
                let now = monotonicNanoseconds()
                if due > now { usleep(UInt32((due - now) / 1000)) } else { latest = max(latest, Int(now - due)) }
                for index in stride(from: slot, to: devices, by: slots) {
                    let device = fleet[index]
                    let refusedBefore = device.batcher.refused
                    for offset in 0..<perMessage {
                        let n = round * perMessage + offset
                        var sample = motion[n % motion.count]
                        sample.timestamp = Double(n) / rate
                        try device.batcher.add(sample)
                    }
                    try device.batcher.finish()
                    if device.batcher.refused > refusedBefore { refused += 1 } else { written += 1 }
                    samples += perMessage
                }
                if monotonicNanoseconds() >= nextReport {
                    Self.report(fleet.map(\.publisher), written: written, since: start)
                    nextReport += 1_000_000_000
                }
            }
        }
        let generated = monotonicNanoseconds()
        say(
            "generated: \(written) messages, \(samples) samples in \(seconds) s; \(refused) refused; "
                + "the generator was at most \(latest / 1_000_000) ms late")
        // Drain: every publisher ends once its spool is acknowledged, or at the timeout.
        let publishers = fleet.map(\.publisher)
        let (limit, total) = (nanoseconds(clamping: drainTimeout), written)
        let watcher = Task { [publishers] in
            var next = monotonicNanoseconds() + 1_000_000_000
            while monotonicNanoseconds() - generated < limit {
                try await Task.sleep(for: .milliseconds(100))
                if monotonicNanoseconds() >= next {
                    Self.report(publishers, written: total, since: start)
                    next += 1_000_000_000
                }
            }
            for publisher in publishers { publisher.requestStop() }
        }
        await withTaskGroup(of: Void.self) { group in
            for publisher in publishers { group.addTask { await publisher.stop(drain: true) } }
        }
        watcher.cancel()
        let drained = Double(monotonicNanoseconds() - generated) / 1e9
        let acknowledged = publishers.reduce(0) { $0 + $1.acknowledgedCount }
        let early = publishers.filter(\.stoppedEarly).count
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let elapsed = Double(monotonicNanoseconds() - start) / 1e9
        say(
            "acknowledged: \(acknowledged) of \(written) messages (\(acknowledged >= written ? "all" : "NOT all")), "
                + "\(early) devices not drained; drained \(String(format2: drained)) s after the last message")
        say(
            "process: \(String(format2: user + system)) s CPU (user \(String(format2: user)), system "
                + "\(String(format2: system))) in \(String(format2: elapsed)) s: \(String(format2: 100 * (user + system) / elapsed)) % "
                + "of a core, \(String(format2: 1e6 * (user + system) / Double(max(samples, 1)))) µs a sample; max RSS "
                + "\(usage.ru_maxrss / 1024) MiB")
        if acknowledged < written || early > 0 { throw ExitCode(1) }
    }

    private static func report(_ publishers: [MQTTPublisher], written: Int, since start: UInt64) {
        let acknowledged = publishers.reduce(0) { $0 + $1.acknowledgedCount }
        let connected = publishers.filter(\.isConnected).count
        say(
            "t=\(String(format2: Double(monotonicNanoseconds() - start) / 1e9)) s: \(written) written, \(acknowledged) "
                + "acknowledged, \(written - acknowledged) waiting; \(connected) of \(publishers.count) connected")
    }
}

private func raiseOpenFileLimit(to wanted: Int) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    limit.rlim_cur = max(limit.rlim_cur, min(limit.rlim_max, rlim_t(wanted)))
    _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    if Int(limit.rlim_cur) < wanted {
        say("warning: the open-files limit is \(limit.rlim_cur); \(wanted) wanted (raise it with ulimit -n)")
    }
}

extension String {
    fileprivate init(format2 value: Double) { self = String((value * 100).rounded() / 100) }
    fileprivate func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// Prints a line at once (unbuffered: the script reads the progress as it comes).
private func say(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }
}
