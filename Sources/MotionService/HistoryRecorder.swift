import Motion
package import MotionCore
package import MotionStore
import MotionSystem

/// What `motiond --history DIR` records (`Docs/History.md`).
package struct HistoryConfiguration: Sendable {
    /// The store's directory.
    package var directory: String
    /// The interval of the recorded samples, in seconds. Default 0.02 s (50 Hz, as Core Motion's
    /// `CMSensorRecorder`); every device sample when the device is slower.
    package var interval: Double
    /// The sensors recorded. Default the accelerometer.
    package var sensors: SensorSet
    /// Retention and the store's other settings.
    package var store: MotionStore.Configuration

    package init(
        directory: String, interval: Double = 0.02, sensors: SensorSet = .accelerometer,
        store: MotionStore.Configuration = MotionStore.Configuration()
    ) {
        self.directory = directory
        self.interval = interval
        self.sensors = sensors
        self.store = store
    }
}

/// Records the service's samples into a ``MotionStore``: a subscription of the service's `MotionManager` at the
/// history's interval (so the device runs at least at that rate while the service runs) puts each sample in a
/// bounded queue on the device's thread; a thread of its own moves them into the store every half second and
/// writes them, so that the device's thread never waits for the disk (a `write`, an `fdatasync`), and a
/// SIGKILL loses at most about half a second.
final class HistoryRecorder: Sendable {
    /// How often queued samples are written, in seconds: what a SIGKILL can lose.
    static let writeInterval = 0.5

    private let store: MotionStore
    private let thread = SourceThread()
    private let queue: LockedState<Queue>
    private let subscription: LockedState<ProducerSubscription?>
    private let writer: LockedState<Task<Void, Never>?>
    private let log: @Sendable (String) -> Void

    private struct Queue {
        var samples: [MotionSample] = []
        /// Samples dropped because the writer fell behind by more than the queue's bound, since the last report.
        var dropped = 0
    }

    /// The most samples waiting for the writer: the store's own bound on what it holds while writes fail.
    private let queueLimit: Int

    /// Opens the store (throwing when it cannot be written: the service then does not start) and starts recording.
    init(_ configuration: HistoryConfiguration, manager: MotionManager, log: @escaping @Sendable (String) -> Void)
        throws(MotionError)
    {
        var storeConfiguration = configuration.store
        if storeConfiguration.label.isEmpty { storeConfiguration.label = "motiond \(configuration.sensors)" }
        store = try MotionStore(directory: configuration.directory, clock: .boottime, configuration: storeConfiguration)
        queueLimit = storeConfiguration.maximumPendingSamples
        queue = LockedState(Queue())
        subscription = LockedState(nil)
        writer = LockedState(nil)
        self.log = log
        let sensors = configuration.sensors
        let limit = queueLimit
        let started = manager.subscribeOnProducer(
            .samples(sensors), interval: configuration.interval,
            receive: { [queue] record in
                guard case .sample(let sample) = record else { return }
                queue.withLock { queue in
                    if queue.samples.count < limit { queue.samples.append(sample) } else { queue.dropped += 1 }
                }
            },
            ended: { result in
                if case .failure(let error) = result { log("history: the samples ended: \(error)") }
            })
        subscription.withLock { $0 = started }
        let task = Task(executorPreference: thread) { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(Self.writeInterval))
                writeQueued()
            }
        }
        writer.withLock { $0 = task }
        log("history: recording \(sensors) every \(configuration.interval) s into \(configuration.directory)")
    }

    /// Moves the queued samples into the store and writes them (on the writer's thread).
    private func writeQueued() {
        let (samples, dropped) = queue.withLock { queue in
            defer { (queue.samples, queue.dropped) = ([], 0) }
            return (queue.samples, queue.dropped)
        }
        if dropped > 0 { log("history: \(dropped) samples dropped: the disk did not keep up") }
        if let event = store.append(contentsOf: samples) { log("history: \(event)") }
        if let event = store.flush() { log("history: \(event)") }
    }

    /// Stops recording: what is queued is written, the store flushed to the disk and closed.
    func stop() async {
        subscription.withLock { $0 }?.cancel()
        let task = writer.withLock { $0 }
        task?.cancel()
        await task?.value
        await Task(executorPreference: thread) { [self] in
            writeQueued()
            do {
                try store.close()
            } catch {
                log("history: closing the store: \(error)")
            }
        }.value
        thread.stop()
    }
}
