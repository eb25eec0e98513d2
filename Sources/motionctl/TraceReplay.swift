import Motion
import MotionCore
import MotionTrace

/// The trace commands (`stream`, `attitude`, `shake`, `orientation` on `--trace`) on the one sample loop
/// (`SampleLoop`, which `MotionManager`'s engine runs too): the trace's rows as the source, paced by `Pacer` at the
/// replay speed, through the command's `MotionProcessor`, to the command's output. When the trace ends or
/// SIGINT/SIGTERM arrives, the end's outputs (a shake in progress cancelled as `interrupted`) go to the output too
/// when they hold anything.
struct TraceReplay {
    let reader: TraceReader
    /// The factor on real time, or `nil` for as fast as possible.
    let speed: Double?
    /// Readings of other sensors are removed from each row before processing (`--sensors`), or `nil` for none.
    var inputSensors: SensorSet?
    /// When to stop before the trace ends (`stream --duration`, `--count`), or `nil`.
    var limit: OutputLimit?

    /// Runs the replay. `flush` makes what is written visible before each wait; `write` gets each sample's outputs.
    func run(
        _ processor: inout MotionProcessor, flush: @escaping () throws(MotionError) -> Void,
        write: @escaping (MotionOutputs) throws(MotionError) -> Void
    ) async throws(MotionError) {
        let pacer = speed.map { OutputPacer(speed: $0, flush: flush) }
        var loop = SampleLoop(
            processor: processor,
            source: TraceRows(
                reader: reader, restriction: inputSensors.flatMap { $0 == reader.sensors ? nil : $0 }, limit: limit),
            delivery: OutputDelivery(demand: SampleDemand(request: processor.request), write: write), pacer: pacer)
        defer { processor = loop.processor }
        switch await loop.run() {
        case .ended:
            break
        case .failed(let error):
            throw error
        case .stopped:  // interrupted, or the pacer's flush failed
            if let failure = pacer?.failure { throw failure }
            try await loop.finish()  // interrupted: the end's outputs still go out
        }
        try flush()
    }
}

/// A trace's rows, read as they come (a row that arrived on a pipe is processed before the next is waited for),
/// until the trace ends, the limit is reached or SIGINT/SIGTERM arrives.
private struct TraceRows: SampleSource {
    let reader: TraceReader
    let restriction: SensorSet?
    let limit: OutputLimit?

    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        guard !Interruption.isRequested, limit?.isReached != true, var sample = try reader.next() else { return .ended }
        if let limit, !limit.admits(sample.timestamp) { return .ended }
        if let restriction { sample = sample.restricted(to: restriction) }
        return .sample(sample)
    }

    mutating func wait(_ demand: SourceDemand) async throws(MotionError) {}  // reads block instead: never asked
    mutating func putBack(_ sample: MotionSample) {}  // an interrupted replay is not resumed
}

/// Hands each sample's outputs to the command's output; the end's only when they hold something.
private struct OutputDelivery: SampleDelivery {
    let demand: SampleDemand
    let demandGeneration = 0
    let write: (MotionOutputs) throws(MotionError) -> Void

    mutating func deliver(_ outputs: MotionOutputs, end: Bool) throws(MotionError) -> SampleDeliveryResult {
        if !end || !outputs.isEmpty { try write(outputs) }
        return .delivered
    }

    mutating func waitForRoom() async throws(MotionError) {}
}

/// `Pacer` as the loop's pacer: flushes the output before each wait (so what is written is visible while it
/// waits), sleeps on `CLOCK_MONOTONIC`, and stops the loop when SIGINT/SIGTERM ends the sleep.
private final class OutputPacer: ReplayWaiter {
    private var pacer: Pacer
    private let flush: () throws(MotionError) -> Void
    /// The flush's error, which stopped the loop.
    private(set) var failure: MotionError?

    init(speed: Double, flush: @escaping () throws(MotionError) -> Void) {
        pacer = Pacer(speed: speed)
        self.flush = flush
    }

    nonisolated(nonsending) func wait(until timestamp: Double) async throws {
        guard let deadline = pacer.deadline(for: timestamp) else { return }
        do {
            try flush()
        } catch {
            failure = error
            throw error
        }
        Pacer.sleep(until: deadline)
        if Interruption.isRequested { throw MotionError(.cancelled, "interrupted") }
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
