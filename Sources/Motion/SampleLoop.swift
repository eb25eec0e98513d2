package import MotionCore

/// What the consumers of a sample loop need now: what the processor computes, and what the source must read (a
/// device opens these sensors at the rate of the fastest interval).
package struct SampleDemand: Equatable, Sendable {
    /// What the processor computes.
    package var request: MotionProcessor.Request
    /// The sensors to read.
    package var sensors: SensorSet
    /// The smallest update interval asked for, in seconds (0: every sample).
    package var fastestInterval: Double

    package init(request: MotionProcessor.Request, sensors: SensorSet? = nil, fastestInterval: Double = 0) {
        self.request = request
        self.sensors = sensors ?? request.requiredSensors
        self.fastestInterval = fastestInterval
    }
}

/// Where a sample loop's samples come from: a trace, samples in memory, a device, a caller's sequence.
package protocol SampleSource {
    /// The next sample, or `nil` when the source has ended.
    mutating func next(_ demand: SampleDemand) async throws(MotionError) -> MotionSample?
    /// Keeps `sample`, taken but not processed (the loop stopped while pacing it), for the next run.
    mutating func putBack(_ sample: MotionSample)
}

/// Where a sample loop's outputs go: subscriptions (`MotionEngine`), or a command's output.
package protocol SampleDelivery {
    /// What to compute and read for the next sample; read once per sample.
    var demand: SampleDemand { get }
    /// Hands over what one sample produced, or (`end`) what the end of the source gave (`MotionProcessor.finish`).
    mutating func deliver(_ outputs: MotionOutputs, end: Bool) async throws(MotionError)
}

/// Paces a replay: waits until the sample stamped `timestamp` is due; throws to stop the loop (cancelled).
package protocol ReplayWaiter: AnyObject {
    func wait(until timestamp: Double) async throws
}

/// How a sample loop ended.
package enum SampleLoopEnd: Sendable {
    /// The source ended; the end's outputs were delivered.
    case ended
    /// The source or the delivery failed; the end's outputs were delivered when the source failed.
    case failed(MotionError)
    /// The task was cancelled, or the pacer stopped: the sample being paced was put back, and nothing more was
    /// delivered (call ``SampleLoop/finish()`` for the end's outputs).
    case stopped
}

/// The one sample loop of swift-motion: each sample from the source, paced when a pacer is given, goes through the
/// `MotionProcessor` (set to the delivery's demand before each sample) and its outputs to the delivery. The
/// library's engine (`MotionEngine`, deliveries to subscriptions) and every `motionctl` command (deliveries to an
/// output) run it.
package struct SampleLoop<Source: SampleSource, Delivery: SampleDelivery> {
    package var processor: MotionProcessor
    package var source: Source
    package var delivery: Delivery
    package let pacer: (any ReplayWaiter)?
    private var adopted: MotionProcessor.Request?

    package init(processor: MotionProcessor, source: Source, delivery: Delivery, pacer: (any ReplayWaiter)? = nil) {
        self.processor = processor
        self.source = source
        self.delivery = delivery
        self.pacer = pacer
    }

    /// Runs until the source ends or fails, the delivery fails, the task is cancelled or the pacer stops.
    package mutating func run() async -> SampleLoopEnd {
        while !Task.isCancelled {
            let demand = delivery.demand
            let sample: MotionSample
            do {
                guard let next = try await source.next(demand) else {
                    do {
                        try await finish()
                    } catch {
                        return .failed(error)
                    }
                    return .ended
                }
                sample = next
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
            }
            if demand.request != adopted {
                adopted = demand.request
                processor.setRequest(demand.request)
            }
            processor.process(sample)
            do {
                try await delivery.deliver(processor.outputs, end: false)
            } catch {
                return .failed(error)
            }
        }
        return .stopped
    }

    /// Ends the source's processing: delivers what `MotionProcessor.finish` gives (a shake in progress cancelled).
    package mutating func finish() async throws(MotionError) {
        processor.finish()
        try await delivery.deliver(processor.outputs, end: true)
    }
}
