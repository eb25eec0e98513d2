package import MotionAlgorithms
package import MotionCore

/// One update handed to a subscriber on the producer's thread
/// (``MotionManager/subscribeOnProducer(_:interval:demandInterval:receive:passEnded:ended:)``).
package enum MotionRecord: Sendable {
    case sample(MotionSample)
    case deviceMotion(DeviceMotion)
    case shake(ShakeEvent)
    case orientation(DeviceOrientationChange)
    case steps(PedometerUpdate)
    case activity(MotionActivity)

    /// The update's time, in seconds on the source's clock (the last step's, for steps).
    package var timestamp: Double {
        switch self {
        case .sample(let sample): sample.timestamp
        case .deviceMotion(let motion): motion.timestamp
        case .shake(let event): event.timestamp
        case .orientation(let change): change.timestamp
        case .steps(let update): update.data.endTime ?? 0
        case .activity(let activity): activity.timestamp
        }
    }
}

/// What a subscriber on the producer's thread receives.
package enum MotionRecordKind: Hashable, Sendable {
    /// The readings of these sensors, one ``MotionRecord/sample(_:)`` per source sample that has one of them.
    case samples(SensorSet)
    /// Device motion in a frame.
    case deviceMotion(AttitudeReferenceFrame)
    /// Shake events.
    case shake
    /// Orientation changes, the current state first when one is known.
    case orientation
    /// The pedometer's updates.
    case steps
    /// Activity changes.
    case activity
}

/// A subscription whose updates are handed over on the producer's thread; ``cancel()`` ends it.
package final class ProducerSubscription: Sendable {
    private let stop: @Sendable () -> Void

    fileprivate init(stop: @escaping @Sendable () -> Void) {
        self.stop = stop
    }

    /// Ends the subscription: once this returns, `receive` and `ended` are not running (unless this is called from
    /// one of them) and never run again. Idempotent.
    package func cancel() {
        stop()
    }
}

extension MotionManager {
    /// Subscribes `receive` to the updates of `kind`, called on the producer's own thread, in order, as each is
    /// routed (outside the engine's lock): for a subscriber whose work per update is short and never blocks,
    /// such as the service's streams (render a line, one non-blocking `send`), which then cost no task switch.
    ///
    /// - Parameters:
    ///   - interval: Seconds between updates, on the engine's grid (0: every sample; events ignore it).
    ///   - demandInterval: The interval whose rate the device is asked for: `interval` unless given (a subscriber
    ///     that thins the updates itself takes every sample and asks for its own rate).
    ///   - passEnded: Runs on the producer's thread once the pass over a sample that gave this subscriber updates
    ///     has handed them to every subscriber: a subscriber that writes to other processes writes then, so that
    ///     the records of one sample go out together after the work of routing them. (Shake and orientation events
    ///     can also come outside a pass: the current orientation at subscription.) It may run once more after
    ///     ``ProducerSubscription/cancel()``, concurrently with it.
    ///   - ended: Runs once when the source ends (`.success`) or fails; not after ``ProducerSubscription/cancel()``.
    package func subscribeOnProducer(
        _ kind: MotionRecordKind, interval: Double, demandInterval: Double? = nil,
        receive: @escaping @Sendable (MotionRecord) -> Void,
        passEnded: (@Sendable () -> Void)? = nil,
        ended: @escaping @Sendable (Result<Void, MotionError>) -> Void
    ) -> ProducerSubscription {
        precondition(interval >= 0 && interval.isFinite, "An update interval is ≥ 0 seconds, got \(interval).")
        switch kind {
        case .samples(let sensors):
            return onProducer(
                .samples(sensors), interval, demandInterval, MotionEngine.Route.samples, passEnded, ended
            ) { receive(.sample($0)) }
        case .deviceMotion(let frame):
            return onProducer(
                .deviceMotion(frame), interval, demandInterval, MotionEngine.Route.deviceMotion, passEnded, ended
            ) { receive(.deviceMotion($0)) }
        case .shake:
            return onProducer(.shake, 0, nil, MotionEngine.Route.shake, passEnded, ended) { receive(.shake($0)) }
        case .orientation:
            return onProducer(.orientation, 0, nil, MotionEngine.Route.orientation, passEnded, ended) {
                receive(.orientation($0))
            }
        case .steps:
            return onProducer(.steps, 0, nil, MotionEngine.Route.steps, passEnded, ended) { receive(.steps($0)) }
        case .activity:
            return onProducer(.activity, 0, nil, MotionEngine.Route.activity, passEnded, ended) {
                receive(.activity($0))
            }
        }
    }

    private func onProducer<Element: Sendable>(
        _ stream: MotionEngine.Stream, _ interval: Double, _ demandInterval: Double?,
        _ route: (DeliveryBuffer<Element>) -> MotionEngine.Route,
        _ passEnded: (@Sendable () -> Void)?,
        _ ended: @escaping @Sendable (Result<Void, MotionError>) -> Void,
        _ receive: @escaping @Sendable (Element) -> Void
    ) -> ProducerSubscription {
        // The drain runs at once, on the thread that sends: the buffer holds an update only while one is being
        // handed over (or the current orientation, queued at subscription).
        let buffer = DeliveryBuffer<Element>(
            policy: .bufferingNewest(64),
            synchronousHandler: { element, error in
                if let element { receive(element) } else if let error { ended(.failure(error)) }
            },
            ended: { ended(.success(())) }, passEnded: passEnded)
        let engine = self.engine
        let id = engine.subscribe(stream, route: route(buffer), interval: interval, demandInterval: demandInterval)
        return ProducerSubscription {
            buffer.stopHandler()
            if let id { engine.unsubscribe(id) }
        }
    }
}

extension MotionManager {
    /// Runs the manager's one sample loop in the calling task for a single consumer that takes every sample's
    /// outputs synchronously, as `motionctl`'s commands do: the source (paced by the manager's pacer when it is a
    /// recording), the processor set to `request`, then `outputs` on the source's thread, with no lock or buffer
    /// per sample. No subscription may be active or made meanwhile (`invalidArgument`).
    ///
    /// Ends when the source ends, `outputs` returns `false` (no more samples: the end's outputs are not asked
    /// for), or the calling task is cancelled (a signal): the end's outputs (a shake in progress cancelled) then
    /// still go to `outputs` when they hold anything. A run consumes a recording: later subscriptions end at once.
    ///
    /// - Parameters:
    ///   - sensors: Readings of other sensors are removed from each sample before processing, or `nil` for none.
    ///   - demandInterval: The interval, in seconds, whose rate a live source is asked for (0: its own rate).
    ///   - willWait: Runs before the loop waits, for the pacer or for the source's next batch (a command flushes
    ///     its output there); its error ends the run.
    ///   - outputs: Gets each sample's outputs; `false` ends the run; its error ends the run.
    ///   - ended: Gets the processor as the run left it, however the run ends (a failed one too), once the loop has
    ///     run; `nil` by default.
    /// - Returns: The processor as the run left it (the pedometer's total, the estimator's counters).
    @discardableResult
    package func run(
        _ request: MotionProcessor.Request, sensors: SensorSet? = nil, demandInterval: Double = 0,
        willWait: (() throws(MotionError) -> Void)? = nil,
        outputs: @escaping (MotionOutputs) throws(MotionError) -> Bool, ended: ((MotionProcessor) -> Void)? = nil
    ) async throws(MotionError) -> MotionProcessor {
        try await engine.run(
            request, sensors: sensors, demandInterval: demandInterval, willWait: willWait, outputs: outputs,
            ended: ended)
    }
}
