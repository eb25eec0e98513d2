import Motion
import MotionCore
import MotionTrace

/// The trace commands' driver (`stream`, `attitude`, `shake`, `orientation`, `steps`, `activity`, `plot` on
/// `--trace`): the trace as a `MotionSource`, paced by `pacing`, through a `MotionManager`'s one sample loop
/// (`MotionManager.run`: the library's processor and pacer), each sample's outputs to `write` on the trace's
/// thread. Ends when the trace ends, `write` returns `false`, or SIGINT/SIGTERM arrives (then the end's outputs,
/// a shake in progress cancelled as `interrupted`, still go to `write` when they hold anything). `flush` makes what
/// is written visible before each wait and at the end.
/// - Returns: The processor as the replay left it (the pedometer's total, the estimator's counters).
@discardableResult
func replay(
    _ reader: TraceReader, pacing: ReplayPacing, configuration: MotionConfiguration = .init(),
    request: MotionProcessor.Request, sensors: SensorSet? = nil, flush: @escaping () throws(MotionError) -> Void,
    write: @escaping (MotionOutputs) throws(MotionError) -> Bool
) async throws(MotionError) -> MotionProcessor {
    let manager = try MotionManager(source: .trace(reader, pacing: pacing), configuration: configuration)
    let run = ReplayRun(manager: manager, request: request, sensors: sensors, flush: flush, write: write)
    let processor = try await SignalCancellation.value { try await run.run() }
    try flush()
    return processor
}

/// A replay's run, handed to the task that `SignalCancellation` cancels at a signal. That task is awaited by its
/// creator, so the closures (which hold the command's non-`Sendable` output) are never used concurrently.
private final class ReplayRun: @unchecked Sendable {
    let manager: MotionManager
    let request: MotionProcessor.Request
    let sensors: SensorSet?
    let flush: () throws(MotionError) -> Void
    let write: (MotionOutputs) throws(MotionError) -> Bool

    init(
        manager: MotionManager, request: MotionProcessor.Request, sensors: SensorSet?,
        flush: @escaping () throws(MotionError) -> Void, write: @escaping (MotionOutputs) throws(MotionError) -> Bool
    ) {
        self.manager = manager
        self.request = request
        self.sensors = sensors
        self.flush = flush
        self.write = write
    }

    func run() async throws(MotionError) -> MotionProcessor {
        try await manager.run(request, sensors: sensors, willWait: flush, outputs: write)
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
