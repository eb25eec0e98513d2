import Motion
import MotionCore
import MotionSystem

/// Subscriptions of the service's `MotionManager` to records (samples, device motion, events), each at an interval,
/// whose records wait in one bounded queue (filled on the device's thread, which never waits, so in the order they
/// were made) and are handed in batches, every ``period`` seconds, to a sink on a thread of the subscription's own:
/// for sinks that write files (the history) or spool messages (the publisher), so that the device's thread never
/// waits for a disk.
final class QueuedSubscription: Sendable {
    /// How often the queue is handed to the sink, in seconds.
    static let period = 0.5

    private let thread = SourceThread()
    private let queue: LockedState<Queue>
    private let subscriptions = LockedState<[ProducerSubscription]>([])
    private let writer = LockedState<Task<Void, Never>?>(nil)
    private let drain: @Sendable ([MotionRecord]) -> Void
    private let name: String
    private let log: @Sendable (String) -> Void

    private struct Queue {
        var records: [MotionRecord] = []
        /// Records dropped since the last report because the sink fell behind by more than the queue's bound.
        var dropped = 0
    }

    /// Subscribes to each kind of `kinds` at its interval (seconds); `drain` gets the queued records every ``period``,
    /// and a last time at ``stop()``, on the subscription's thread. At most `limit` records wait; `name` and `log`
    /// report the dropped ones.
    init(
        manager: MotionManager, kinds: [(kind: MotionRecordKind, interval: Double)], limit: Int, name: String,
        log: @escaping @Sendable (String) -> Void, drain: @escaping @Sendable ([MotionRecord]) -> Void
    ) {
        queue = LockedState(Queue())
        self.drain = drain
        self.name = name
        self.log = log
        let started = kinds.map { kind, interval in
            manager.subscribeOnProducer(
                kind, interval: interval,
                receive: { [queue] record in
                    queue.withLock { queue in
                        if queue.records.count < limit { queue.records.append(record) } else { queue.dropped += 1 }
                    }
                },
                ended: { result in
                    if case .failure(let error) = result { log("\(name): the updates ended: \(error)") }
                })
        }
        subscriptions.withLock { $0 = started }
        let task = Task(executorPreference: thread) { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(Self.period))
                handOver()
            }
        }
        writer.withLock { $0 = task }
    }

    private func handOver() {
        let (records, dropped) = queue.withLock { queue in
            defer { (queue.records, queue.dropped) = ([], 0) }
            return (queue.records, queue.dropped)
        }
        if dropped > 0 { log("\(name): \(dropped) records dropped: the sink did not keep up") }
        drain(records)
    }

    /// Stops the subscriptions, hands over what is queued, and ends the thread.
    func stop() async {
        for subscription in subscriptions.withLock({ $0 }) { subscription.cancel() }
        let task = writer.withLock { $0 }
        task?.cancel()
        await task?.value
        await Task(executorPreference: thread) { [self] in handOver() }.value
        thread.stop()
    }
}
