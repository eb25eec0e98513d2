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
        willWait: BeforeSleep?, outputs: @escaping (MotionOutputs) throws(MotionError) -> Bool
    ) async throws(MotionError) -> MotionProcessor {
        var available = reader.availableSensors()
        if let restriction { available.formIntersection(restriction) }
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
        defer { state.withLock { $0.isRunExclusively = false } }
        await previous?.value  // a paused producer has released the reader
        var configuration = self.configuration
        if let learned { configuration.calibration = learned }
        let consumer = RunState()
        let pacer = source.pacing.speedFactor.flatMap { factor in source.isLive ? nil : makeWaiter(factor, willWait) }
        let restriction = restriction.flatMap { $0.isSuperset(of: reader.availableSensors()) ? nil : $0 }
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
        let processor = run.loop.processor
        if let calibration = processor.calibration { state.withLock { $0.calibration = calibration } }
        if let failure = consumer.failure ?? pacer?.failure { throw failure }  // the output failed
        switch end {
        case .ended:
            if !source.isLive { state.withLock { $0.end = .success(()) } }
        case .stopped:  // the task was cancelled (a signal): the end's outputs still go out
            var loop = run.loop
            try await loop.finish()
            if let failure = consumer.failure { throw failure }
        case .failed(let error):
            throw error
        }
        return run.loop.processor
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

/// The reader as a run reads it: readings of other sensors removed (`restriction`), the end once the consumer is
/// done, `willWait` run before each wait.
private struct RunSource: SampleSource {
    var base: ProducerSource
    let restriction: SensorSet?
    let willWait: BeforeSleep?
    let state: RunState

    init(reader: any MotionSampleReader, restriction: SensorSet?, willWait: BeforeSleep?, state: RunState) {
        base = ProducerSource(reader: reader, cancellationCheckInterval: 64)
        self.restriction = restriction
        self.willWait = willWait
        self.state = state
    }

    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        guard !state.isDone else { return .ended }
        let step = try base.next(demand)
        if let restriction, case .sample(let sample) = step { return .sample(sample.restricted(to: restriction)) }
        return step
    }

    nonisolated(nonsending) mutating func wait(_ demand: SourceDemand) async throws(MotionError) {
        if let willWait { try state.beforeWait(willWait) }
        try await base.wait(demand)
    }

    mutating func putBack(_ sample: MotionSample) { base.putBack(sample) }
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
