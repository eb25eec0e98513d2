import Motion
package import MotionCore
package import MotionMQTT
import MotionStore

/// What `motiond --publish-broker URL` publishes (`Docs/History.md`, "Publishing").
package struct PublishConfiguration: Sendable {
    /// The broker and the credentials.
    package var options: MQTTOptions
    /// The topic prefix: samples on `PREFIX/HOST/motiond/samples`, the status on `PREFIX/HOST/status`.
    package var topic: String
    /// The spool's directory, and the most bytes it holds.
    package var spool: String
    package var spoolSize: Int
    /// The interval of the published samples, in seconds (default 0.02 s: 50 Hz), and their sensors.
    package var interval: Double
    package var sensors: SensorSet

    package init(
        options: MQTTOptions, topic: String, spool: String, spoolSize: Int = 1 << 30, interval: Double = 0.02,
        sensors: SensorSet = .accelerometer
    ) {
        self.options = options
        self.topic = topic
        self.spool = spool
        self.spoolSize = spoolSize
        self.interval = interval
        self.sensors = sensors
    }
}

/// The service's publisher: a ``QueuedSubscription`` puts each half second's samples in a message in a spool,
/// and an `MQTTPublisher` sends the spool to the broker, losing nothing while it is away (up to the spool's size).
final class ServicePublisher: Sendable {
    private let subscription: QueuedSubscription
    private let publisher: MQTTPublisher

    /// Opens the spool (a spool another process uses, or a bad TLS file, stops the service's start) and starts.
    init(_ configuration: PublishConfiguration, manager: MotionManager, log: @escaping @Sendable (String) -> Void)
        throws(MotionError)
    {
        let spool = try MessageSpool(directory: configuration.spool, maximumBytes: configuration.spoolSize)
        let host = MQTTTopics.hostName()
        publisher = try MQTTPublisher(
            spool: spool, options: configuration.options,
            statusTopic: MQTTTopics.status(prefix: configuration.topic, host: host), log: { log("publish: \($0)") })
        try publisher.start()
        let batcher = BatcherBox(
            SampleBatcher(
                spool: spool, topic: MQTTTopics.samples(prefix: configuration.topic, host: host, input: "motiond"),
                stream: SampleBatcher.streamID(host: host), seconds: QueuedSubscription.period))
        subscription = QueuedSubscription(
            manager: manager, kinds: [(.samples(configuration.sensors), configuration.interval)], limit: 100_000,
            name: "publish", log: log,
            // Each hand-over's samples make a message (the last at the stop too), so none waits longer than the
            // hand-over period for the spool (a SIGKILL loses at most that), however slow the device.
            drain: { records in
                batcher.add(records.compactMap { if case .sample(let sample) = $0 { sample } else { nil } }, log: log)
                batcher.finish(log: log)
            })
        log(
            "publish: \(configuration.sensors) every \(configuration.interval) s to \(configuration.options.host):"
                + "\(configuration.options.port) under \(configuration.topic), spooled in \(configuration.spool)")
    }

    /// Stops: what is queued goes to the spool, and the publisher ends (what is not acknowledged stays spooled).
    func stop() async {
        await subscription.stop()
        await publisher.stop(drain: false)
    }
}

/// The batcher, used only on the subscription's thread.
private final class BatcherBox: @unchecked Sendable {
    private let batcher: SampleBatcher
    private var failed = false

    init(_ batcher: SampleBatcher) { self.batcher = batcher }

    func add(_ samples: [MotionSample], log: (String) -> Void) {
        let refused = batcher.refused
        for sample in samples {
            do throws(MotionError) {
                try batcher.add(sample)
                failed = false
            } catch {
                if !failed { log("publish: \(error)") }
                failed = true
            }
        }
        if batcher.refused > refused { log("publish: the spool is full: \(batcher.refused - refused) messages not kept") }
    }

    func finish(log: (String) -> Void) {
        do throws(MotionError) {
            try batcher.finish()
        } catch {
            log("publish: \(error)")
        }
    }
}
