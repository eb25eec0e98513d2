import Motion
import MotionCore
import MotionSystem

/// A subscription of the service's `MotionManager` to samples at an interval, whose samples wait in a bounded queue
/// (filled on the device's thread, which never waits) and are handed in batches, every ``period`` seconds, to a
/// sink on a thread of the subscription's own: for sinks that write files (the history) or spool messages (the
/// publisher), so that the device's thread never waits for a disk.
final class QueuedSubscription: Sendable {
    /// How often the queue is handed to the sink, in seconds.
    static let period = 0.5

    private let thread = SourceThread()
    private let queue: LockedState<Queue>
    private let subscription = LockedState<ProducerSubscription?>(nil)
    private let writer = LockedState<Task<Void, Never>?>(nil)
    private let drain: @Sendable ([MotionSample]) -> Void
    private let finish: @Sendable () -> Void

    private struct Queue {
        var samples: [MotionSample] = []
        /// Samples dropped since the last report because the sink fell behind by more than the queue's bound.
        var dropped = 0
    }

    /// Subscribes to `sensors` every `interval` seconds; `drain` gets the queued samples every ``period`` and
    /// `finish` runs once at ``stop()``, both on the subscription's thread. At most `limit` samples wait.
    init(
        manager: MotionManager, sensors: SensorSet, interval: Double, limit: Int, name: String,
        log: @escaping @Sendable (String) -> Void, drain: @escaping @Sendable ([MotionSample]) -> Void,
        finish: @escaping @Sendable () -> Void
    ) {
        queue = LockedState(Queue())
        self.drain = drain
        self.finish = finish
        let started = manager.subscribeOnProducer(
            .samples(sensors), interval: interval,
            receive: { [queue] record in
                guard case .sample(let sample) = record else { return }
                queue.withLock { queue in
                    if queue.samples.count < limit { queue.samples.append(sample) } else { queue.dropped += 1 }
                }
            },
            ended: { result in
                if case .failure(let error) = result { log("\(name): the samples ended: \(error)") }
            })
        subscription.withLock { $0 = started }
        let task = Task(executorPreference: thread) { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(Self.period))
                handOver(log: log, name: name)
            }
        }
        writer.withLock { $0 = task }
    }

    private func handOver(log: @Sendable (String) -> Void, name: String) {
        let (samples, dropped) = queue.withLock { queue in
            defer { (queue.samples, queue.dropped) = ([], 0) }
            return (queue.samples, queue.dropped)
        }
        if dropped > 0 { log("\(name): \(dropped) samples dropped: the sink did not keep up") }
        drain(samples)
    }

    /// Stops the subscription, hands over what is queued, runs `finish`, and ends the thread.
    func stop(log: @escaping @Sendable (String) -> Void, name: String) async {
        subscription.withLock { $0 }?.cancel()
        let task = writer.withLock { $0 }
        task?.cancel()
        await task?.value
        await Task(executorPreference: thread) { [self] in
            handOver(log: log, name: name)
            finish()
        }.value
        thread.stop()
    }
}
