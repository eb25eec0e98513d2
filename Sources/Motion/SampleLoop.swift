import MotionCore

/// What the consumers of a sample loop need now: what the processor computes, and what the source must read (a
/// device opens these sensors at the rate of the fastest interval).
struct SampleDemand: Equatable, Sendable {
    /// What the processor computes.
    var request: MotionProcessor.Request
    /// The sensors to read.
    var sensors: SensorSet
    /// The smallest update interval asked for, in seconds (0: every sample).
    var fastestInterval: Double

    /// Creates a demand; the sensors are the request's required ones unless given.
    init(request: MotionProcessor.Request, sensors: SensorSet? = nil, fastestInterval: Double = 0) {
        self.request = request
        self.sensors = sensors ?? request.requiredSensors
        self.fastestInterval = fastestInterval
    }

    /// What the source must read.
    var source: SourceDemand { SourceDemand(sensors: sensors, fastestInterval: fastestInterval) }
}

/// What became of one sample's outputs handed to a ``SampleDelivery``.
enum SampleDeliveryResult: Sendable {
    /// Handed over.
    case delivered
    /// Handed over in part: the rest waits for room; the loop awaits ``SampleDelivery/waitForRoom()`` before the
    /// next sample.
    case mustWait
}

/// Where a sample loop's outputs go: subscriptions (`MotionEngine`), or a command's output.
protocol SampleDelivery {
    /// What to compute and read; read again whenever ``demandGeneration`` changes.
    var demand: SampleDemand { get }
    /// Changes whenever ``demand`` does; read once per sample.
    var demandGeneration: Int { get }
    /// Hands over what one sample produced, or (`end`) what the end of the source gave (`MotionProcessor.finish`).
    /// Synchronous: waiting (for a slow consumer) is ``waitForRoom()``'s.
    mutating func deliver(_ outputs: MotionOutputs, end: Bool) throws(MotionError) -> SampleDeliveryResult
    /// Completes a delivery that returned ``SampleDeliveryResult/mustWait``.
    nonisolated(nonsending) mutating func waitForRoom() async throws(MotionError)
}

/// Paces a replay: waits until the sample stamped `timestamp` is due; throws to stop the loop (cancelled).
protocol ReplayWaiter: AnyObject {
    nonisolated(nonsending) func wait(until timestamp: Double) async throws
}

/// How a sample loop ended.
enum SampleLoopEnd: Sendable {
    /// The source ended; the end's outputs were delivered.
    case ended
    /// The source or the delivery failed; the end's outputs were delivered when the source failed.
    case failed(MotionError)
    /// The source stopped (its task was cancelled) or the pacer did: the sample being paced was put back, and
    /// nothing more was delivered (call ``SampleLoop/finish()`` for the end's outputs).
    case stopped
}

/// The one sample loop of swift-motion: each sample from the source, paced when a pacer is given, goes through the
/// `MotionProcessor` (set to the delivery's demand) and its outputs to the delivery: the engine's, for its
/// subscriptions (`MotionEngine.produce`) and for one synchronous consumer (`MotionEngine.run`).
/// Only waiting (for the source, the pacer or room) is asynchronous; a sample at hand is processed and delivered
/// synchronously. Internal: both users are in this module, where each loop is specialised for its source and
/// delivery.
struct SampleLoop<Source: SampleSource, Delivery: SampleDelivery> {
    /// The processing core, set to the delivery's demand.
    var processor: MotionProcessor
    /// Where the samples come from.
    var source: Source
    /// Where the outputs go.
    var delivery: Delivery
    /// Paces a replay, or `nil` for none (a live source, or as fast as possible).
    let pacer: (any ReplayWaiter)?
    var demand: SampleDemand
    var sourceDemand: SourceDemand
    var demandGeneration: Int

    /// Creates a loop; the processor is set to the delivery's demand at once.
    init(processor: MotionProcessor, source: Source, delivery: Delivery, pacer: (any ReplayWaiter)? = nil) {
        self.processor = processor
        self.source = source
        self.delivery = delivery
        self.pacer = pacer
        demand = delivery.demand
        sourceDemand = demand.source
        demandGeneration = delivery.demandGeneration
        self.processor.setRequest(demand.request)
    }

    /// Runs until the source ends or fails, the delivery fails, or the source (task cancelled) or the pacer
    /// stops.
    nonisolated(nonsending) mutating func run() async -> SampleLoopEnd {
        while true {
            refreshDemand()  // a subscription came or went; or the source's output opened at its first batch
            let sample: MotionSample
            do {
                switch try source.next(sourceDemand) {
                case .sample(let next):
                    sample = next
                case .wait:
                    try await source.wait(sourceDemand)
                    continue
                case .ended:
                    do {
                        try await finish()
                    } catch {
                        return .failed(error)
                    }
                    return .ended
                }
            } catch {
                if Task.isCancelled && error.code == .cancelled { return .stopped }
                try? await finish()
                return .failed(error)
            }
            if let pacer {
                do {
                    try await pacer.wait(until: sample.timestamp)
                } catch {
                    source.putBack(sample)  // the replay resumes with it
                    return .stopped
                }
                refreshDemand()
            }
            processor.process(sample)
            do {
                if case .mustWait = try delivery.deliver(processor.outputs, end: false) {
                    try await delivery.waitForRoom()
                }
            } catch {
                return .failed(error)
            }
        }
    }

    /// Reads the delivery's demand when it has changed, and sets the processor to it.
    mutating func refreshDemand() {
        guard delivery.demandGeneration != demandGeneration else { return }
        demandGeneration = delivery.demandGeneration
        demand = delivery.demand
        sourceDemand = demand.source
        processor.setRequest(demand.request)
    }

    /// Ends the source's processing: delivers what `MotionProcessor.finish` gives (a shake in progress cancelled).
    nonisolated(nonsending) mutating func finish() async throws(MotionError) {
        processor.finish()
        if case .mustWait = try delivery.deliver(processor.outputs, end: true) { try await delivery.waitForRoom() }
    }
}
