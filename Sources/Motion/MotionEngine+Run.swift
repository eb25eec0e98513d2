import MotionAlgorithms
import MotionCore

extension MotionEngine {
    static let runningExclusively = MotionError(
        .invalidArgument,
        "the manager's source is being read by MotionManager.run, which takes it alone; subscribe on another manager")

    /// A consumer's own run of the one sample loop (``MotionManager/run(_:sensors:demandInterval:willWait:outputs:)``):
    /// in the calling task, on the reader's preferred executor, paced by the manager's pacer; no subscription
    /// meanwhile.
    func run(
        _ request: MotionProcessor.Request, sensors restriction: SensorSet?, demandInterval: Double,
        willWait: BeforeSleep?, outputs: @escaping (MotionOutputs) throws(MotionError) -> Bool,
        ended: ((MotionProcessor) -> Void)? = nil
    ) async throws(MotionError) -> MotionProcessor {
        let present = reader.availableSensors()  // I/O for a device or the service: asked once
        // Readings of other sensors are removed only when the source has some.
        let restriction = restriction.flatMap { present.isSubset(of: $0) ? nil : $0 }
        let available = restriction.map { present.intersection($0) } ?? present
        let required = request.requiredSensors
        if !available.isEmpty, !available.isSuperset(of: required) {  // empty: not known yet (no device present)
            throw MotionError(
                .unsupported,
                "\(Self.describe(request)) cannot be delivered: the \(source.provider) has no "
                    + "\(required.subtracting(available)) (it has \(available))")
        }
        let (previous, learned) = try state.withLock { state throws(MotionError) in
            if let end = state.end, case .failure(let error) = end { throw error }
            guard state.registrations.isEmpty, !state.isProducing, !state.isRunExclusively else {
                throw Self.runningExclusively
            }
            state.isRunExclusively = true
            return (state.producer, state.calibration)
        }
        defer {
            state.withLock { state in
                state.isRunExclusively = false
                // A run consumes a recording (its last batch is not given back): later subscriptions end at once.
                if !source.isLive { state.end = .success(()) }
            }
        }
        await previous?.value  // a paused producer has released the reader
        var configuration = self.configuration
        if let learned { configuration.calibration = learned }
        let consumer = RunState()
        let pacer = source.pacing.speedFactor.flatMap { factor in source.isLive ? nil : makeWaiter(factor, willWait) }
        let run = RunLoop(
            loop: SampleLoop(
                processor: MotionProcessor(configuration: configuration, request: request),
                source: RunSource(reader: reader, restriction: restriction, willWait: willWait, state: consumer),
                delivery: RunDelivery(
                    demand: SampleDemand(request: request, fastestInterval: demandInterval), outputs: outputs,
                    state: consumer),
                pacer: pacer))
        defer { reader.pause() }
        let end = await withTaskExecutorPreference(reader.preferredExecutor) { await run.run() }
        if let calibration = run.loop.processor.calibration { state.withLock { $0.calibration = calibration } }
        if let failure = consumer.failure ?? pacer?.failure {  // the output failed
            ended?(run.loop.processor)
            throw failure
        }
        switch end {
        case .ended:
            ended?(run.loop.processor)
            return run.loop.processor
        case .stopped:  // the task was cancelled (a signal): the end's outputs still go out
            var loop = run.loop
            defer { ended?(loop.processor) }
            try await loop.finish()
            if let failure = consumer.failure { throw failure }
            return loop.processor
        case .failed(let error):
            ended?(run.loop.processor)
            throw error
        }
    }
}

extension MotionEngine {
    /// What `request` asks for, in the words of a subscription's refusal: "device motion in the arbitrary frame".
    static func describe(_ request: MotionProcessor.Request) -> String {
        var parts: [String] = []
        if !request.sensors.isEmpty { parts.append("samples of \(request.sensors)") }
        for frame in AttitudeReferenceFrame.allCases where request.referenceFrames.contains(frame) {
            parts.append("device motion in the \(frame.shortName) frame")
        }
        if request.shake { parts.append("shake events") }
        if request.orientation { parts.append("orientation changes") }
        if request.steps { parts.append("steps") }
        if request.activity { parts.append("activity updates") }
        return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
    }
}

/// The run's loop, held by reference so that the executor-preference closure can run it in place.
private final class RunLoop<Source: SampleSource, Delivery: SampleDelivery>: @unchecked Sendable {
    var loop: SampleLoop<Source, Delivery>

    init(loop: SampleLoop<Source, Delivery>) { self.loop = loop }

    nonisolated(nonsending) func run() async -> SampleLoopEnd { await loop.run() }
}

/// A run's state shared by its source, delivery and pacer: whether the consumer asked to stop or failed. The
/// closures stay in the structs that call them (a closure loaded from a class is retained and released per call).
private final class RunState {
    /// The consumer asked for no more samples.
    var isDone = false
    /// The consumer's error (its output failed), which ended the run.
    var failure: MotionError?

    /// Runs `willWait`, keeping its error.
    func beforeWait(_ willWait: BeforeSleep) throws(MotionError) {
        do {
            try willWait()
        } catch {
            failure = error
            throw error
        }
    }
}

/// The reader as a run reads it: in batches of up to 64 samples (one call of the reader per batch, which pays for
/// the reader being an existential once per batch), readings of other sensors removed (`restriction`), the end once
/// the consumer is done, `willWait` run before each wait. What it took and did not process is dropped when the run
/// stops: a run consumes its manager's recording.
private struct RunSource: SampleSource {
    static let batchSize = 64
    var reader: any MotionSampleReader
    let restriction: SensorSet?
    let willWait: BeforeSleep?
    let state: RunState
    var batch: [MotionSample] = []
    var index = 0
    /// Why the batch in hand ended: what comes once its samples are taken.
    var batchEnd = SampleBatchEnd.full

    init(reader: any MotionSampleReader, restriction: SensorSet?, willWait: BeforeSleep?, state: RunState) {
        self.reader = reader
        self.restriction = restriction
        self.willWait = willWait
        self.state = state
        batch.reserveCapacity(Self.batchSize)
    }

    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        while true {
            guard !state.isDone else { return .ended }
            if index < batch.count {
                // The sample as it is in the batch (restricted when the batch came in): one path, so that the
                // optimiser passes it on without a copy through the stack that is read back misaligned (a
                // store-forwarding stall measured at some 15 ns a sample).
                defer { index += 1 }
                return .sample(batch[index])
            }
            switch batchEnd {
            case .full:
                if Task.isCancelled { throw MotionError(.cancelled, "the run was cancelled") }
                batch.removeAll(keepingCapacity: true)
                index = 0
                batchEnd = reader.takeSamples(demand, into: &batch, maximumCount: Self.batchSize)
                if let restriction {  // one uniqueness check per batch, not per sample
                    batch.withUnsafeMutableBufferPointer { samples in
                        for position in samples.indices {
                            samples[position] = samples[position].restricted(to: restriction)
                        }
                    }
                }
            case .wait:
                batchEnd = .full  // after the wait, the next batch
                return .wait
            case .ended:
                return .ended
            case .failed(let error):
                throw error
            }
        }
    }

    nonisolated(nonsending) mutating func wait(_ demand: SourceDemand) async throws(MotionError) {
        if let willWait { try state.beforeWait(willWait) }
        if Task.isCancelled { throw MotionError(.cancelled, "the run was cancelled") }
        try await reader.wait(demand)
    }

    /// The sample the pacer stopped on is the batch's last taken one: taken again by a next run of this loop.
    mutating func putBack(_ sample: MotionSample) {
        if index > 0 { index -= 1 }
    }
}

/// Hands each sample's outputs to the consumer; the end's only when they hold something.
private struct RunDelivery: SampleDelivery {
    let demand: SampleDemand
    let demandGeneration = 0
    let outputs: (MotionOutputs) throws(MotionError) -> Bool
    let state: RunState

    mutating func deliver(_ outputs: MotionOutputs, end: Bool) throws(MotionError) -> SampleDeliveryResult {
        guard !end || !outputs.isEmpty else { return .delivered }
        do {
            if try !self.outputs(outputs) { state.isDone = true }
        } catch {
            state.failure = error
            throw error
        }
        return .delivered
    }

    mutating func waitForRoom() async throws(MotionError) {}
}
