import MotionAlgorithms
import MotionCore

/// The one engine behind every façade of a ``MotionManager``: a registry of subscriptions and the latest values
/// under one lock, and a producer task that reads the source, runs the algorithms the subscriptions need and
/// hands each update to each subscription's ``DeliveryBuffer``.
///
/// The producer runs only while at least one subscription is registered (a device's buffer is enabled only
/// then). Algorithms run in the producer, outside the lock; the lock is taken once per sample to record the
/// latest values and pick the deliveries; elements are handed over after it is released.
final class MotionEngine: Sendable {
    /// The computed streams a subscription can ask for.
    enum Stream: Hashable, Sendable {
        case accelerometer
        case gyroscope
        case magnetometer
        case deviceMotion(AttitudeReferenceFrame)
        case shake
        case orientation
        /// The readings of these sensors, together as the source gave them (one `MotionSample` per input sample).
        case samples(SensorSet)
        /// The steps each sample counts (the pedometer).
        case steps
        /// Activity changes.
        case activity
    }

    /// Where a subscription's updates go.
    enum Route: Sendable {
        case accelerometer(DeliveryBuffer<AccelerometerData>)
        case gyroscope(DeliveryBuffer<GyroData>)
        case magnetometer(DeliveryBuffer<MagnetometerData>)
        case deviceMotion(DeliveryBuffer<DeviceMotion>)
        case shake(DeliveryBuffer<ShakeEvent>)
        case orientation(DeliveryBuffer<DeviceOrientationChange>)
        case samples(DeliveryBuffer<MotionSample>)
        case steps(DeliveryBuffer<PedometerUpdate>)
        case activity(DeliveryBuffer<MotionActivity>)
        /// A pull-only subscription: keeps the stream computed (and the latest value fresh), delivers nothing.
        case pull
    }

    struct Registration {
        var stream: Stream
        var route: Route
        var gate: UpdateIntervalGate
        /// The interval whose rate the device is asked for: the gate's, unless the subscriber thins the updates
        /// itself (a service's per-user grid takes every sample, and asks the rate of its own interval).
        var demandInterval: Double
    }

    /// What the registered subscriptions need the producer to compute.
    struct Needs: Equatable, Sendable {
        var sensors: SensorSet = []
        var frames: Set<AttitudeReferenceFrame> = []
        var shake = false
        var orientation = false
        var steps = false
        var activity = false
        /// The smallest update interval asked for, in seconds (0: every sample).
        var fastestInterval = 0.0

        /// What the processor computes: every reading the source gives (for the latest values; each subscription
        /// thins its own), and the frames and events subscribed to.
        var request: MotionProcessor.Request {
            MotionProcessor.Request(
                sensors: .all, referenceFrames: frames, shake: shake, orientation: orientation, steps: steps,
                activity: activity)
        }
    }

    struct Latest: Sendable {
        var accelerometer: AccelerometerData?
        var gyroscope: GyroData?
        var magnetometer: MagnetometerData?
        var deviceMotion: [AttitudeReferenceFrame: DeviceMotion] = [:]
        var orientation: DeviceOrientationChange?
        var shake: ShakeEvent?
        var pedometer: PedometerData?
        var activity: MotionActivity?
    }

    struct State {
        var registrations: [Int: Registration] = [:]
        var nextID = 1
        var needs = Needs()
        var latest = Latest()
        var producer: Task<Void, Never>?
        var isProducing = false
        /// How a recording ended; later subscriptions end the same way at once.
        var end: Result<Void, MotionError>?
        /// What device motion learned about the device, as of the last producer's end.
        var calibration: DeviceMotionFilter.State?
        /// A consumer runs the loop itself (``run(_:)``): subscriptions are refused meanwhile.
        var isRunExclusively = false
    }

    let source: MotionSource
    let configuration: MotionConfiguration
    /// The source's reader: used by one producer task at a time (each waits for the previous one to end).
    nonisolated(unsafe) let reader: any MotionSampleReader
    /// The pacer of a replay at `factor` × real time on the manager's clock, which calls `beforeSleep` (if any)
    /// before each wait that will sleep.
    let makeWaiter: @Sendable (_ factor: Double, _ beforeSleep: BeforeSleep?) -> any FailingReplayWaiter
    let state = LockedState(State())

    init<C: Clock>(source: MotionSource, configuration: MotionConfiguration, clock: C) throws(MotionError)
    where C.Duration == Duration {
        self.source = source
        self.configuration = configuration
        reader = try source.provider.makeReader()
        makeWaiter = { factor, beforeSleep in ClockWaiter(clock: clock, factor: factor, beforeSleep: beforeSleep) }
    }

    /// The sensors the source has: from the trace's header, the samples, the devices present now, the service.
    var availableSensors: SensorSet { reader.availableSensors() }

    // MARK: Subscriptions

    /// Registers a subscription and starts the producer if it is not running. Returns its id, or `nil` when the
    /// recording has already ended (the buffer is then finished the same way).
    ///
    /// With `deferStart`, a lossless replay (``ReplayPacing/asFastAsConsumed``) starts only at the first
    /// ``ensureProducing()`` (an iterator's first `next()`), so subscriptions made together see the same samples.
    func subscribe(
        _ stream: Stream, route: Route, interval: Double, demandInterval: Double? = nil, deferStart: Bool = false
    ) -> Int? {
        let deferStart = deferStart && isLossless
        if let missing = missingSensors(for: stream) {
            route.finish(.failure(missing))
            return nil
        }
        enum Outcome {
            case registered(Int)
            case ended(Result<Void, MotionError>)
        }
        let outcome: Outcome = state.withLock { state in
            if let end = state.end { return .ended(end) }
            if state.isRunExclusively { return .ended(.failure(Self.runningExclusively)) }
            let id = state.nextID
            state.nextID += 1
            state.registrations[id] = Registration(
                stream: stream, route: route, gate: UpdateIntervalGate(interval: interval),
                demandInterval: demandInterval ?? interval)
            state.needs = Self.needs(of: state.registrations, pedometerInterval: self.pedometerDemand)
            if case .orientation(let buffer) = route, var current = state.latest.orientation {
                // The current state first (its `orientationChanged` is false), queued under the lock so that no
                // change the producer routes can overtake it; handed over after the lock (a handler may run at
                // once, on this thread).
                current.previousOrientation = current.orientation
                current.previousTilt = current.tilt
                current.previousIIOSensorProxyOrientation = current.iioSensorProxyOrientation
                buffer.prime(current)
            }
            if !deferStart { startProducer(&state) }
            return .registered(id)
        }
        switch outcome {
        case .registered(let id):
            if case .orientation(let buffer) = route { buffer.deliverPrimed() }
            return id
        case .ended(let end):
            route.finish(end)
            return nil
        }
    }

    /// The error for a subscription that needs a sensor the source lacks, or `nil`. A source that does not know
    /// its sensors yet (no device present, a caller's stream) reports none: its subscriptions wait.
    private func missingSensors(for stream: Stream) -> MotionError? {
        let (required, what): (SensorSet, String) =
            switch stream {
            case .accelerometer: (.accelerometer, "accelerometer updates")
            case .gyroscope: (.gyroscope, "gyroscope updates")
            case .magnetometer: (.magnetometer, "magnetometer updates")
            case .deviceMotion(let frame): (frame.requiredSensors, "device motion in the \(frame.shortName) frame")
            case .samples(let sensors): (sensors, "samples of \(sensors)")
            case .shake: (.accelerometer, "shake events")
            case .orientation: (.accelerometer, "orientation changes")
            case .steps: (.accelerometer, "steps")
            case .activity: (.accelerometer, "activity updates")
            }
        let available = reader.availableSensors()
        // Samples of several sensors carry those the source has (the others' fields are nil): one is enough.
        let enough =
            if case .samples = stream { !available.isDisjoint(with: required) } else {
                available.isSuperset(of: required)
            }
        guard !available.isEmpty, !enough else { return nil }
        return MotionError(
            .unsupported,
            "\(what) cannot be delivered: the \(source.provider) has no \(required.subtracting(available)) "
                + "(it has \(available))")
    }

    /// Starts the producer if subscriptions wait for it.
    func ensureProducing() {
        state.withLock { state in
            if !state.registrations.isEmpty { startProducer(&state) }
        }
    }

    private func startProducer(_ state: inout State) {
        guard !state.isProducing else { return }
        state.isProducing = true
        let previous = state.producer
        state.producer = Task(executorPreference: reader.preferredExecutor) {
            await previous?.value
            await self.produce()
        }
    }

    /// `true` for a replay that waits for its consumers instead of dropping.
    var isLossless: Bool { !source.isLive && source.pacing.speedFactor == nil }

    /// Removes a subscription; the producer stops (and a device's buffer is disabled) when it was the last.
    func unsubscribe(_ id: Int) {
        state.withLock { state in
            guard state.registrations.removeValue(forKey: id) != nil else { return }
            state.needs = Self.needs(of: state.registrations, pedometerInterval: self.pedometerDemand)
            if state.registrations.isEmpty && state.isProducing {
                state.isProducing = false
                state.producer?.cancel()
            }
        }
    }

    /// Changes a subscription's update interval (seconds); the next update is due on the new grid.
    func setInterval(_ interval: Double, of id: Int) {
        state.withLock { state in
            guard state.registrations[id] != nil else { return }
            state.registrations[id]!.gate = UpdateIntervalGate(interval: interval)
            state.registrations[id]!.demandInterval = interval
            state.needs = Self.needs(of: state.registrations, pedometerInterval: self.pedometerDemand)
        }
    }

    func isRegistered(_ id: Int) -> Bool {
        state.withLock { $0.registrations[id] != nil }
    }

    /// Ends every subscription (sequences end normally, handlers get nothing more) and waits until the producer
    /// has stopped and released the source (a device's buffer disabled).
    func shutdown() async {
        let (registrations, producer) = state.withLock { state in
            if state.isProducing { state.producer?.cancel() }
            return (Self.removeAll(&state), state.producer)
        }
        for registration in registrations.values { registration.route.finish(.success(())) }
        await producer?.value
    }

    /// Waits until the producer has stopped (tests; after the last subscription has gone).
    func producerStopped() async {
        let producer = state.withLock { $0.producer }
        await producer?.value
    }

    /// What `registrations` need the producer to compute and read; steps and activity ask `pedometerInterval`.
    static func needs(of registrations: [Int: Registration], pedometerInterval: Double = pedometerInterval) -> Needs {
        var needs = Needs()
        var fastest = Double.infinity
        for registration in registrations.values {
            switch registration.stream {
            case .accelerometer: needs.sensors.insert(.accelerometer)
            case .gyroscope: needs.sensors.insert(.gyroscope)
            case .magnetometer: needs.sensors.insert(.magnetometer)
            case .deviceMotion(let frame):
                needs.frames.insert(frame)
                needs.sensors.formUnion(frame.requiredSensors)
            case .shake:
                needs.shake = true
                needs.sensors.insert(.accelerometer)
            case .orientation:
                needs.orientation = true
                needs.sensors.insert(.accelerometer)
            case .samples(let sensors):
                needs.sensors.formUnion(sensors)
            case .steps:
                needs.steps = true
                needs.sensors.insert(.accelerometer)
            case .activity:
                needs.activity = true
                needs.sensors.insert(.accelerometer)
            }
            switch registration.stream {
            case .accelerometer, .gyroscope, .magnetometer, .deviceMotion, .samples:
                fastest = min(fastest, registration.demandInterval)
            case .steps, .activity:
                // At least the pedometer's rate: a device left at its own rate may run at 10 Hz.
                fastest = min(fastest, pedometerInterval)
            case .shake, .orientation:
                break  // every sample, at the rate the others ask (or the device's own): no demand of their own
            }
        }
        needs.fastestInterval = fastest.isFinite ? fastest : 0
        return needs
    }

    /// The interval whose rate steps and activity ask of the device: 0.02 s (50 Hz). They are validated in
    /// simulation from 25 Hz, but on the real dev walks 25 Hz costs accuracy (`Docs/Pedometer.md`, "Lower sample
    /// rates": 1.12 % MAPE on the walks of certain truth at 25 Hz, 0.99 % at 50 Hz, 0.85 % at the phones' own
    /// rates). A device left at its own rate may run at 10 Hz, too slow for them.
    static let pedometerInterval = 0.02

    /// What steps and activity ask of this engine's source: ``pedometerInterval``, but no faster than everyone may
    /// ask (the service's raw samples: 25 Hz without its high-rate right, `RightLimitedSampleProvider`), so that
    /// they work for every user. (The service's own steps and activity streams count at its device's rate.)
    var pedometerDemand: Double {
        max(Self.pedometerInterval, (source.provider as? any RightLimitedSampleProvider)?.openInterval ?? 0)
    }

    // MARK: Producer

    private func produce() async {
        let waiter = source.pacing.speedFactor.flatMap { source.isLive ? nil : makeWaiter($0, nil) }
        let (needs, learned) = state.withLock { ($0.needs, $0.calibration) }
        var configuration = self.configuration
        if let learned { configuration.calibration = learned }  // a later producer goes on from what was learned
        var loop = SampleLoop(
            processor: MotionProcessor(configuration: configuration, request: .init()), source: ProducerSource(reader: reader),
            delivery: SubscriptionDelivery(engine: self, needs: needs, lossless: isLossless), pacer: waiter)
        defer { reader.pause() }
        let end = await loop.run()
        if let calibration = loop.processor.calibration {
            state.withLock { $0.calibration = calibration }
        }
        switch end {
        case .ended: finishAll(.success(()))
        case .failed(let error): finishAll(.failure(error))
        case .stopped: break  // paused: the next producer resumes the replay, or the device reopens
        }
    }

    /// The sample loop's delivery to the subscriptions: routes each sample's outputs, sends what is due (waiting
    /// for room when lossless) and unsubscribes the closed ones.
    struct SubscriptionDelivery: SampleDelivery {
        let engine: MotionEngine
        /// What the subscriptions need, as of the last routing.
        var needs: Needs
        let lossless: Bool
        var deliveries: [Delivery] = []
        var closed: [Int] = []
        private(set) var demandGeneration = 0

        var demand: SampleDemand {
            SampleDemand(request: needs.request, sensors: needs.sensors, fastestInterval: needs.fastestInterval)
        }

        mutating func deliver(_ outputs: MotionOutputs, end: Bool) throws(MotionError) -> SampleDeliveryResult {
            let routed = engine.route(outputs, into: &deliveries)
            if routed != needs {
                needs = routed
                demandGeneration &+= 1
            }
            if lossless && !deliveries.isEmpty { return .mustWait }  // each waits for room in waitForRoom()
            for delivery in deliveries where !delivery.send() { closed.append(delivery.id) }
            for delivery in deliveries { delivery.endPass() }
            deliveries.removeAll(keepingCapacity: true)
            unsubscribeClosed()
            return .delivered
        }

        nonisolated(nonsending) mutating func waitForRoom() async throws(MotionError) {
            for delivery in deliveries {
                await delivery.waitForRoom()
                if !delivery.send() { closed.append(delivery.id) }
                delivery.endPass()
            }
            deliveries.removeAll(keepingCapacity: true)
            unsubscribeClosed()
        }

        private mutating func unsubscribeClosed() {
            guard !closed.isEmpty else { return }
            closed.forEach(engine.unsubscribe)
            closed.removeAll(keepingCapacity: true)
        }
    }

    /// Records the latest values and picks the deliveries due; returns what to compute for the next sample.
    fileprivate func route(_ outputs: MotionOutputs, into deliveries: inout [Delivery]) -> Needs {
        let accelerometer = outputs.accelerometer
        let gyroscope = outputs.gyroscope
        let magnetometer = outputs.magnetometer
        return state.withLock { state in
            if let value = accelerometer { state.latest.accelerometer = value }
            if let value = gyroscope { state.latest.gyroscope = value }
            if let value = magnetometer { state.latest.magnetometer = value }
            for frame in AttitudeReferenceFrame.allCases {
                if let motion = outputs.deviceMotion(in: frame) { state.latest.deviceMotion[frame] = motion }
            }
            if let value = outputs.orientationChange { state.latest.orientation = value }
            if let value = outputs.shake { state.latest.shake = value }
            if let value = outputs.steps { state.latest.pedometer = value.data }
            if let value = outputs.activity { state.latest.activity = value }
            var index = state.registrations.startIndex
            while index != state.registrations.endIndex {
                let id = state.registrations.keys[index]
                // In place (the values' modify accessor): no copy of the registration per sample.
                Self.pickDue(&state.registrations.values[index], id: id, outputs, into: &deliveries)
                state.registrations.formIndex(after: &index)
            }
            return state.needs
        }
    }

    /// Appends `registration`'s delivery when `outputs` has an update for it that its gate lets through.
    private static func pickDue(
        _ registration: inout Registration, id: Int, _ outputs: MotionOutputs, into deliveries: inout [Delivery]
    ) {
        switch registration.route {
        case .accelerometer(let buffer):
            if let value = outputs.accelerometer, registration.gate.admit(at: value.timestamp) {
                deliveries.append(.accelerometer(id, buffer, value))
            }
        case .gyroscope(let buffer):
            if let value = outputs.gyroscope, registration.gate.admit(at: value.timestamp) {
                deliveries.append(.gyroscope(id, buffer, value))
            }
        case .magnetometer(let buffer):
            if let value = outputs.magnetometer, registration.gate.admit(at: value.timestamp) {
                deliveries.append(.magnetometer(id, buffer, value))
            }
        case .deviceMotion(let buffer):
            if case .deviceMotion(let frame) = registration.stream, let value = outputs.deviceMotion(in: frame),
                registration.gate.admit(at: value.timestamp)
            {
                deliveries.append(.deviceMotion(id, buffer, value))
            }
        case .shake(let buffer):
            if let value = outputs.shake { deliveries.append(.shake(id, buffer, value)) }
        case .orientation(let buffer):
            if let value = outputs.orientationChange { deliveries.append(.orientation(id, buffer, value)) }
        case .steps(let buffer):
            if let value = outputs.steps { deliveries.append(.steps(id, buffer, value)) }
        case .activity(let buffer):
            if let value = outputs.activity { deliveries.append(.activity(id, buffer, value)) }
        case .samples(let buffer):
            if case .samples(let sensors) = registration.stream, let sample = outputs.sample,
                !sample.sensors.isDisjoint(with: sensors), registration.gate.admit(at: sample.timestamp)
            {
                deliveries.append(.samples(id, buffer, sample.restricted(to: sensors)))
            }
        case .pull:
            break
        }
    }

    /// Ends every subscription: at the end of a recording, or with the source's error.
    private func finishAll(_ end: Result<Void, MotionError>) {
        let registrations = state.withLock { state in
            if !source.isLive { state.end = end }
            return Self.removeAll(&state)
        }
        for registration in registrations.values { registration.route.finish(end) }
    }

    /// Empties the registry and marks the producer stopped; the caller finishes the routes outside the lock.
    private static func removeAll(_ state: inout State) -> [Int: Registration] {
        let registrations = state.registrations
        state.registrations = [:]
        state.needs = Needs()
        state.isProducing = false
        return registrations
    }
}

extension MotionEngine.Route {
    func finish(_ end: Result<Void, MotionError>) {
        switch self {
        case .accelerometer(let buffer): buffer.finish(end)
        case .gyroscope(let buffer): buffer.finish(end)
        case .magnetometer(let buffer): buffer.finish(end)
        case .deviceMotion(let buffer): buffer.finish(end)
        case .shake(let buffer): buffer.finish(end)
        case .orientation(let buffer): buffer.finish(end)
        case .samples(let buffer): buffer.finish(end)
        case .steps(let buffer): buffer.finish(end)
        case .activity(let buffer): buffer.finish(end)
        case .pull: break
        }
    }
}

/// One update for one subscription, picked under the lock and handed over after it.
enum Delivery {
    case accelerometer(Int, DeliveryBuffer<AccelerometerData>, AccelerometerData)
    case gyroscope(Int, DeliveryBuffer<GyroData>, GyroData)
    case magnetometer(Int, DeliveryBuffer<MagnetometerData>, MagnetometerData)
    case deviceMotion(Int, DeliveryBuffer<DeviceMotion>, DeviceMotion)
    case shake(Int, DeliveryBuffer<ShakeEvent>, ShakeEvent)
    case orientation(Int, DeliveryBuffer<DeviceOrientationChange>, DeviceOrientationChange)
    case samples(Int, DeliveryBuffer<MotionSample>, MotionSample)
    case steps(Int, DeliveryBuffer<PedometerUpdate>, PedometerUpdate)
    case activity(Int, DeliveryBuffer<MotionActivity>, MotionActivity)

    var id: Int {
        switch self {
        case .accelerometer(let id, _, _), .gyroscope(let id, _, _), .magnetometer(let id, _, _),
            .deviceMotion(let id, _, _), .shake(let id, _, _), .orientation(let id, _, _), .samples(let id, _, _),
            .steps(let id, _, _), .activity(let id, _, _):
            id
        }
    }

    func send() -> Bool {
        switch self {
        case .accelerometer(_, let buffer, let value): buffer.send(value)
        case .gyroscope(_, let buffer, let value): buffer.send(value)
        case .magnetometer(_, let buffer, let value): buffer.send(value)
        case .deviceMotion(_, let buffer, let value): buffer.send(value)
        case .shake(_, let buffer, let value): buffer.send(value)
        case .orientation(_, let buffer, let value): buffer.send(value)
        case .samples(_, let buffer, let value): buffer.send(value)
        case .steps(_, let buffer, let value): buffer.send(value)
        case .activity(_, let buffer, let value): buffer.send(value)
        }
    }

    /// Tells a synchronous consumer that the producer's pass over this sample has ended.
    func endPass() {
        let passEnded: (@Sendable () -> Void)? =
            switch self {
            case .accelerometer(_, let buffer, _): buffer.passEnded
            case .gyroscope(_, let buffer, _): buffer.passEnded
            case .magnetometer(_, let buffer, _): buffer.passEnded
            case .deviceMotion(_, let buffer, _): buffer.passEnded
            case .shake(_, let buffer, _): buffer.passEnded
            case .orientation(_, let buffer, _): buffer.passEnded
            case .samples(_, let buffer, _): buffer.passEnded
            case .steps(_, let buffer, _): buffer.passEnded
            case .activity(_, let buffer, _): buffer.passEnded
            }
        passEnded?()
    }

    func waitForRoom() async {
        switch self {
        case .accelerometer(_, let buffer, _): await buffer.waitForRoom()
        case .gyroscope(_, let buffer, _): await buffer.waitForRoom()
        case .magnetometer(_, let buffer, _): await buffer.waitForRoom()
        case .deviceMotion(_, let buffer, _): await buffer.waitForRoom()
        case .shake(_, let buffer, _): await buffer.waitForRoom()
        case .orientation(_, let buffer, _): await buffer.waitForRoom()
        case .samples(_, let buffer, _): await buffer.waitForRoom()
        case .steps(_, let buffer, _): await buffer.waitForRoom()
        case .activity(_, let buffer, _): await buffer.waitForRoom()
        }
    }
}

/// Called before a pacer sleeps (a command flushes its output, so that what it wrote is visible while it waits);
/// its error stops the loop.
typealias BeforeSleep = () throws(MotionError) -> Void

/// A pacer whose `beforeSleep` may have failed (and so stopped the loop).
protocol FailingReplayWaiter: ReplayWaiter {
    /// The error `beforeSleep` threw, or `nil`.
    var failure: MotionError? { get }
}

/// Paces a replay on a clock: waits until the sample's time, relative to the first sample, has passed. The
/// manager's one pacer: its subscriptions' replays and a command's (``MotionEngine/run(_:)``, on the continuous
/// clock, which a signal interrupts by cancelling the task).
final class ClockWaiter<C: Clock>: FailingReplayWaiter where C.Duration == Duration {
    private let clock: C
    private var schedule: ReplaySchedule
    private var anchor: C.Instant?
    private let beforeSleep: BeforeSleep?
    private(set) var failure: MotionError?

    init(clock: C, factor: Double, beforeSleep: BeforeSleep? = nil) {
        self.clock = clock
        schedule = ReplaySchedule(factor: factor)
        self.beforeSleep = beforeSleep
    }

    nonisolated(nonsending) func wait(until timestamp: Double) async throws {
        guard let anchor, let offset = schedule.offset(of: timestamp) else {
            anchor = clock.now
            _ = schedule.offset(of: timestamp)
            return
        }
        let deadline = anchor.advanced(by: .seconds(offset))
        if let beforeSleep {
            guard deadline > clock.now else { return }  // due: no sleep, no flush
            do {
                try beforeSleep()
            } catch {
                failure = error
                throw error
            }
        }
        try await clock.sleep(until: deadline, tolerance: nil)
    }
}

/// When each sample of a replay is due: the first at once, each later one when as much clock time, divided by
/// the speed factor, has passed since the first as separates their timestamps (never before the first). The rule of
/// the one pacer, `ClockWaiter`, on the manager's clock (its subscriptions' replays and `motionctl`'s, through
/// ``MotionManager/run(_:sensors:demandInterval:willWait:outputs:)``). A pure value: the caller owns the clock.
package struct ReplaySchedule: Sendable {
    /// The factor on real time (2: twice as fast).
    package let factor: Double
    private var firstTimestamp: Double?

    package init(factor: Double) {
        precondition(factor > 0 && factor.isFinite, "The replay speed factor must be > 0, got \(factor).")
        self.factor = factor
    }

    /// Seconds of clock time after the first sample at which the sample stamped `timestamp` (seconds) is due, or
    /// `nil` for the first sample, which is due at once and anchors the schedule.
    package mutating func offset(of timestamp: Double) -> Double? {
        guard let firstTimestamp else {
            firstTimestamp = timestamp
            return nil
        }
        return max(0, timestamp - firstTimestamp) / factor
    }
}
