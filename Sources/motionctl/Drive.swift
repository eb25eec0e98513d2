import Motion
import MotionCore
import MotionTrace

/// Every command's one path (`stream`, `attitude`, `shake`, `orientation`, `steps`, `activity`, `plot`, on a
/// trace, a device or the service): `source` through a `MotionManager`'s one sample loop (`MotionManager.run`:
/// the library's processor, and for a trace its pacer), each sample's outputs to `write` on the source's thread.
/// Ends when the source ends, `write` returns `false`, or SIGINT/SIGTERM arrives (then the end's outputs, a shake
/// in progress cancelled as `interrupted`, still go to `write` when they hold anything). `flush` makes what is
/// written visible before each wait (the pacer's, or a live source's next batch) and at the end.
/// - Parameters:
///   - sensors: Readings of other sensors are removed before processing (`attitude --sensors`), or `nil`.
///   - demandInterval: The interval, in seconds, whose rate a live source is asked for (0: a device's own rate).
/// - Returns: The processor as the run left it (the pedometer's total, the estimator's counters).
@discardableResult
func drive(
    _ source: MotionSource, configuration: MotionConfiguration = .init(), request: MotionProcessor.Request,
    sensors: SensorSet? = nil, demandInterval: Double = 0, flush: @escaping () throws(MotionError) -> Void,
    ended: ((MotionProcessor) -> Void)? = nil, write: @escaping (MotionOutputs) throws(MotionError) -> Bool
) async throws(MotionError) -> MotionProcessor {
    try await drive(
        try MotionManager(source: source, configuration: configuration), request: request, sensors: sensors,
        demandInterval: demandInterval, flush: flush, ended: ended, write: write)
}

/// ``drive(_:configuration:request:sensors:demandInterval:flush:write:)`` with a manager already made (a command
/// that asks it which sensors its source has first).
@discardableResult
func drive(
    _ manager: MotionManager, request: MotionProcessor.Request, sensors: SensorSet? = nil,
    demandInterval: Double = 0, flush: @escaping () throws(MotionError) -> Void,
    ended: ((MotionProcessor) -> Void)? = nil, write: @escaping (MotionOutputs) throws(MotionError) -> Bool
) async throws(MotionError) -> MotionProcessor {
    let run = CommandRun(
        manager: manager, request: request, sensors: sensors, demandInterval: demandInterval, flush: flush,
        ended: ended, write: write)
    let processor = try await SignalCancellation.value { try await run.run() }
    try flush()
    return processor
}

/// A command's run, handed to the task that `SignalCancellation` cancels at a signal. That task is awaited by its
/// creator, so the closures (which hold the command's non-`Sendable` output) are never used concurrently.
private final class CommandRun: @unchecked Sendable {
    let manager: MotionManager
    let request: MotionProcessor.Request
    let sensors: SensorSet?
    let demandInterval: Double
    let flush: () throws(MotionError) -> Void
    let ended: ((MotionProcessor) -> Void)?
    let write: (MotionOutputs) throws(MotionError) -> Bool

    init(
        manager: MotionManager, request: MotionProcessor.Request, sensors: SensorSet?, demandInterval: Double,
        flush: @escaping () throws(MotionError) -> Void, ended: ((MotionProcessor) -> Void)?,
        write: @escaping (MotionOutputs) throws(MotionError) -> Bool
    ) {
        self.manager = manager
        self.request = request
        self.sensors = sensors
        self.demandInterval = demandInterval
        self.flush = flush
        self.ended = ended
        self.write = write
    }

    func run() async throws(MotionError) -> MotionProcessor {
        try await manager.run(
            request, sensors: sensors, demandInterval: demandInterval, willWait: flush, outputs: write, ended: ended)
    }
}

/// `stream --duration` and `--count`: the samples from the first one's time until `duration` seconds later
/// (excluded), and at most `count` output rows.
final class OutputLimit {
    /// Seconds of samples, from the first sample's timestamp, or `nil`.
    let duration: Double?
    /// Output rows, or `nil`.
    let count: Int?
    private var first: Double?
    /// The rows written so far.
    private(set) var written = 0

    init(duration: Double?, count: Int?) {
        self.duration = duration
        self.count = count
    }

    /// `nil` when neither limit is given.
    static func make(duration: Double?, count: Int?) -> OutputLimit? {
        duration == nil && count == nil ? nil : OutputLimit(duration: duration, count: count)
    }

    /// `false` for a sample at or after `duration` seconds from the first sample (which it then remembers).
    func admits(_ timestamp: Double) -> Bool {
        let first = self.first ?? timestamp
        self.first = first
        return duration.map { timestamp - first < $0 } ?? true
    }

    /// Counts a row written.
    func didWrite() { written += 1 }

    /// `true` once `count` rows are written.
    var isReached: Bool { count.map { written >= $0 } ?? false }
}
