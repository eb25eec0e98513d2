public import Dispatch
public import Foundation
public import MotionAlgorithms
public import MotionCore


/// Core Motion's `CMMotionManager` for Linux: accelerometer, gyroscope, magnetometer and device-motion updates,
/// shake events and device-orientation notifications, from a live IIO device or a recording, delivered by pull
/// (read the latest value), push (a handler on a queue) or as asynchronous sequences.
///
/// ```swift
/// let motion = try MotionManager(source: .device())
/// motion.deviceMotionUpdateInterval = 0.01  // seconds
/// motion.startDeviceMotionUpdates(using: .xArbitraryZVertical, to: OperationQueue()) { motion, error in
///     guard let motion else { return print(error!) }
///     print(motion.attitude.roll, motion.attitude.pitch, motion.attitude.yaw)  // radians
/// }
/// ```
///
/// ## One engine, several façades
/// Every style of delivery subscribes to the same engine: the source runs only while at least one
/// subscription is active, at the fastest rate any of them asks for, and each subscription is delivered on its
/// own interval grid (`UpdateIntervalGate`) from its own bounded buffer (``MotionBufferingPolicy``). Create one
/// manager per source and process (as Core Motion asks), and subscribe as often as needed.
///
/// ## Delivery guarantees
/// - Pull: `start…Updates()` without a handler, then read ``accelerometerData`` (and so on): the latest value,
///   or `nil` before the first. Reading takes a lock briefly and never waits for the source.
/// - Push: `start…Updates(to:withHandler:)` runs the handler on the given `OperationQueue` or `DispatchQueue`,
///   serially and in order, never under the manager's locks. Starting again replaces the previous handler.
///   After `stop…Updates()` returns, the handler is not running and never runs again — unless `stop` is called
///   from inside the handler, in which case the current call finishes and no further call starts.
/// - Async: ``accelerometerUpdates(interval:bufferingPolicy:)`` and the scoped
///   ``withAccelerometerUpdates(interval:bufferingPolicy:_:)`` (and so on) return ``MotionUpdates`` sequences.
/// - Errors (a device lost, permission denied, a bad trace row) reach each handler as `(nil, error)` and end
///   each sequence with the error; the updates concerned then stop (`is…Active` becomes `false`).
///
/// Units and frames: accelerations in g with Core Motion's sign, rotation rates in rad/s, magnetic fields in
/// µT, intervals and timestamps in seconds; vectors in the device frame (`Docs/Conventions.md`).
public final class MotionManager: Sendable {
    /// The services a manager offers, for ``droppedUpdateCount(_:)``.
    public enum Service: Hashable, Sendable, CaseIterable {
        case accelerometer, gyroscope, magnetometer, deviceMotion, shake, deviceOrientation, pedometer, activity
    }

    struct Slot {
        var interval = 0.01
        var id: Int?
        var stop: (@Sendable () -> Void)?
        var dropped: (@Sendable () -> Int)?
        /// The frame device-motion updates were started in; `nil` before the first start.
        var frame: AttitudeReferenceFrame?
    }

    struct Slots {
        var services: [Service: Slot] = [:]
        /// Nesting depth of `beginGeneratingDeviceOrientationNotifications()`.
        var orientationGenerators = 0
        var orientationPullID: Int?
    }

    let engine: MotionEngine
    private let slots = LockedState(Slots())

    /// The source the manager reads.
    public var source: MotionSource { engine.source }

    /// The algorithms' settings the manager was made with (the service's streams: the step length).
    package var configuration: MotionConfiguration { engine.configuration }

    /// What device motion has learned about the device (gyroscope bias and its uncertainty, magnetometer
    /// calibration), as of the last time all its updates stopped (``stopAllUpdates()``, the end of a recording);
    /// else the configured ``MotionConfiguration/calibration``. Save it with ``CalibrationFile`` and give it to
    /// the next session's configuration, as a service does across restarts. Updates started again go on from it.
    public var calibration: DeviceMotionFilter.State? {
        engine.state.withLock { $0.calibration } ?? engine.configuration.calibration
    }

    /// Creates a manager on a source, pacing recordings on the continuous clock.
    ///
    /// - Parameters:
    ///   - source: Live devices (`.device()`, with `import MotionIIO`), the motion service (`.service()`, with
    ///     `import MotionClient`), a trace (`.trace(path)`, with `import MotionTrace`), samples in memory, or a
    ///     provider of your own. Only the backends imported are linked.
    ///   - configuration: The algorithms' settings.
    /// - Throws: `MotionError` when a trace cannot be opened or its header is malformed (naming the file and
    ///   line). Devices are opened when the first subscription starts; their errors reach the subscriptions.
    public convenience init(source: MotionSource, configuration: MotionConfiguration = .init())
        throws(MotionError)
    {
        try self.init(source: source, configuration: configuration, clock: ContinuousClock())
    }

    /// Creates a manager whose recordings are paced on `clock` (a test's manual clock, for instance).
    public init<C: Clock>(source: MotionSource, configuration: MotionConfiguration = .init(), clock: C)
        throws(MotionError) where C.Duration == Duration
    {
        engine = try MotionEngine(source: source, configuration: configuration, clock: clock)
    }

    // MARK: Availability

    /// The sensors the source has: a trace's columns, the devices present now, or the motion service's.
    public var availableSensors: SensorSet { engine.availableSensors }
    /// `true` when the source has an accelerometer.
    public var isAccelerometerAvailable: Bool { engine.availableSensors.contains(.accelerometer) }
    /// `true` when the source has a gyroscope.
    public var isGyroAvailable: Bool { engine.availableSensors.contains(.gyroscope) }
    /// `true` when the source has a magnetometer.
    public var isMagnetometerAvailable: Bool { engine.availableSensors.contains(.magnetometer) }
    /// `true` when device motion is available in at least one frame (an accelerometer and a gyroscope).
    public var isDeviceMotionAvailable: Bool { !availableAttitudeReferenceFrames.isEmpty }

    /// The reference frames the source's sensors allow.
    public var availableAttitudeReferenceFrames: [AttitudeReferenceFrame] {
        let sensors = engine.availableSensors
        return AttitudeReferenceFrame.allCases.filter { sensors.isSuperset(of: $0.requiredSensors) }
    }

    // MARK: Pull

    /// The latest accelerometer reading, or `nil` before the first.
    public var accelerometerData: AccelerometerData? { engine.state.withLock { $0.latest.accelerometer } }
    /// The latest gyroscope reading, or `nil` before the first.
    public var gyroData: GyroData? { engine.state.withLock { $0.latest.gyroscope } }
    /// The latest magnetometer reading, or `nil` before the first.
    public var magnetometerData: MagnetometerData? { engine.state.withLock { $0.latest.magnetometer } }
    /// The latest device motion in the frame of the running device-motion updates (or the last frame used), or
    /// `nil` before the first.
    public var deviceMotion: DeviceMotion? {
        let frame = attitudeReferenceFrame
        return engine.state.withLock { $0.latest.deviceMotion[frame] }
    }
    /// The frame of the device-motion updates started with `startDeviceMotionUpdates`, or the default frame
    /// (``MotionConfiguration/referenceFrame``).
    public var attitudeReferenceFrame: AttitudeReferenceFrame {
        slots.withLock { $0.services[.deviceMotion]?.frame } ?? engine.configuration.referenceFrame
    }
    /// The latest shake event, or `nil` before the first.
    public var latestShakeEvent: ShakeEvent? { engine.state.withLock { $0.latest.shake } }
    /// The pedometer's figures after the latest counted steps, or `nil` before the first.
    public var pedometerData: PedometerData? { engine.state.withLock { $0.latest.pedometer } }
    /// The latest activity reported, or `nil` before the first.
    public var activity: MotionActivity? { engine.state.withLock { $0.latest.activity } }

    // MARK: Update intervals (seconds)

    /// Seconds between accelerometer updates (default 0.01); 0 delivers every sample. Applies to the handler and
    /// to the device's rate; changing it while updates run moves them to the new interval.
    public var accelerometerUpdateInterval: Double {
        get { interval(of: .accelerometer) }
        set { setInterval(newValue, of: .accelerometer) }
    }
    /// Seconds between gyroscope updates (default 0.01); 0 delivers every sample.
    public var gyroUpdateInterval: Double {
        get { interval(of: .gyroscope) }
        set { setInterval(newValue, of: .gyroscope) }
    }
    /// Seconds between magnetometer updates (default 0.01); 0 delivers every sample.
    public var magnetometerUpdateInterval: Double {
        get { interval(of: .magnetometer) }
        set { setInterval(newValue, of: .magnetometer) }
    }
    /// Seconds between device-motion updates (default 0.01); 0 delivers every sample.
    public var deviceMotionUpdateInterval: Double {
        get { interval(of: .deviceMotion) }
        set { setInterval(newValue, of: .deviceMotion) }
    }

    // MARK: Active

    /// `true` while accelerometer updates run (started and neither stopped nor ended by the source).
    public var isAccelerometerActive: Bool { isActive(.accelerometer) }
    /// `true` while gyroscope updates run.
    public var isGyroActive: Bool { isActive(.gyroscope) }
    /// `true` while magnetometer updates run.
    public var isMagnetometerActive: Bool { isActive(.magnetometer) }
    /// `true` while device-motion updates run.
    public var isDeviceMotionActive: Bool { isActive(.deviceMotion) }
    /// `true` while shake updates run.
    public var isShakeActive: Bool { isActive(.shake) }
    /// `true` while pedometer updates run.
    public var isPedometerActive: Bool { isActive(.pedometer) }
    /// `true` while activity updates run.
    public var isActivityActive: Bool { isActive(.activity) }

    /// The number of updates dropped so far for the handler of `service`, because it was behind by its
    /// buffering policy's limit (counted from its last start).
    public func droppedUpdateCount(_ service: Service) -> Int {
        slots.withLock { $0.services[service]?.dropped }?() ?? 0
    }

    // MARK: Start and stop

    /// Starts accelerometer updates for pull: read ``accelerometerData``.
    public func startAccelerometerUpdates() {
        startPull(.accelerometer, stream: .accelerometer)
    }

    /// Starts accelerometer updates: `handler` runs on `queue` every ``accelerometerUpdateInterval``.
    /// - Parameters:
    ///   - queue: Where the handler runs, one call at a time.
    ///   - bufferingPolicy: What to keep when the handler falls behind (default: the oldest 1024).
    ///   - handler: Called with each reading, or once with the error that ended the updates.
    public func startAccelerometerUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (AccelerometerData?, MotionError?) -> Void
    ) {
        startPush(
            .accelerometer, stream: .accelerometer, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.accelerometer)
    }

    /// Starts accelerometer updates: `handler` runs on `queue` every ``accelerometerUpdateInterval``.
    public func startAccelerometerUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (AccelerometerData?, MotionError?) -> Void
    ) {
        startPush(
            .accelerometer, stream: .accelerometer, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.accelerometer)
    }

    /// Stops accelerometer updates (pull or push).
    public func stopAccelerometerUpdates() { stop(.accelerometer) }

    /// Starts gyroscope updates for pull: read ``gyroData``.
    public func startGyroUpdates() {
        startPull(.gyroscope, stream: .gyroscope)
    }

    /// Starts gyroscope updates: `handler` runs on `queue` every ``gyroUpdateInterval``.
    public func startGyroUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (GyroData?, MotionError?) -> Void
    ) {
        startPush(
            .gyroscope, stream: .gyroscope, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.gyroscope)
    }

    /// Starts gyroscope updates: `handler` runs on `queue` every ``gyroUpdateInterval``.
    public func startGyroUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (GyroData?, MotionError?) -> Void
    ) {
        startPush(
            .gyroscope, stream: .gyroscope, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.gyroscope)
    }

    /// Stops gyroscope updates (pull or push).
    public func stopGyroUpdates() { stop(.gyroscope) }

    /// Starts magnetometer updates for pull: read ``magnetometerData``.
    public func startMagnetometerUpdates() {
        startPull(.magnetometer, stream: .magnetometer)
    }

    /// Starts magnetometer updates: `handler` runs on `queue` every ``magnetometerUpdateInterval``.
    public func startMagnetometerUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (MagnetometerData?, MotionError?) -> Void
    ) {
        startPush(
            .magnetometer, stream: .magnetometer, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.magnetometer)
    }

    /// Starts magnetometer updates: `handler` runs on `queue` every ``magnetometerUpdateInterval``.
    public func startMagnetometerUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        withHandler handler: @escaping @Sendable (MagnetometerData?, MotionError?) -> Void
    ) {
        startPush(
            .magnetometer, stream: .magnetometer, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.magnetometer)
    }

    /// Stops magnetometer updates (pull or push).
    public func stopMagnetometerUpdates() { stop(.magnetometer) }

    /// Starts device-motion updates in `frame` (default: the configuration's ``MotionConfiguration/referenceFrame``)
    /// for pull: read ``deviceMotion``.
    public func startDeviceMotionUpdates(using frame: AttitudeReferenceFrame? = nil) {
        let frame = setFrame(frame)
        startPull(.deviceMotion, stream: .deviceMotion(frame))
    }

    /// Starts device-motion updates in `frame`: `handler` runs on `queue` every ``deviceMotionUpdateInterval``.
    /// - Parameters:
    ///   - frame: The reference frame of the attitudes (default: the configuration's
    ///     ``MotionConfiguration/referenceFrame``).
    ///   - queue: Where the handler runs, one call at a time.
    ///   - bufferingPolicy: What to keep when the handler falls behind (default: the newest one).
    ///   - handler: Called with each update, or once with the error that ended the updates.
    public func startDeviceMotionUpdates(
        using frame: AttitudeReferenceFrame? = nil, to queue: OperationQueue,
        bufferingPolicy: MotionBufferingPolicy = .stateDefault,
        withHandler handler: @escaping @Sendable (DeviceMotion?, MotionError?) -> Void
    ) {
        let frame = setFrame(frame)
        startPush(
            .deviceMotion, stream: .deviceMotion(frame), policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.deviceMotion)
    }

    /// Starts device-motion updates in `frame`: `handler` runs on `queue` every ``deviceMotionUpdateInterval``.
    public func startDeviceMotionUpdates(
        using frame: AttitudeReferenceFrame? = nil, to queue: DispatchQueue,
        bufferingPolicy: MotionBufferingPolicy = .stateDefault,
        withHandler handler: @escaping @Sendable (DeviceMotion?, MotionError?) -> Void
    ) {
        let frame = setFrame(frame)
        startPush(
            .deviceMotion, stream: .deviceMotion(frame), policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.deviceMotion)
    }

    /// Stops device-motion updates (pull or push).
    public func stopDeviceMotionUpdates() { stop(.deviceMotion) }

    /// Starts shake detection: `handler` runs on `queue` for each `began`, `ended` and `cancelled` event.
    public func startShakeUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (ShakeEvent?, MotionError?) -> Void
    ) {
        startPush(
            .shake, stream: .shake, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.shake)
    }

    /// Starts shake detection: `handler` runs on `queue` for each `began`, `ended` and `cancelled` event.
    public func startShakeUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (ShakeEvent?, MotionError?) -> Void
    ) {
        startPush(
            .shake, stream: .shake, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.shake)
    }

    /// Stops shake detection.
    public func stopShakeUpdates() { stop(.shake) }

    // MARK: Pedometer and activity (CMPedometer, CMMotionActivityManager)

    /// Starts the pedometer: `handler` runs on `queue` for each sample that counts steps, with their times and
    /// the figures after them (see ``pedometerUpdates(bufferingPolicy:)``).
    public func startPedometerUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (PedometerUpdate?, MotionError?) -> Void
    ) {
        startPush(
            .pedometer, stream: .steps, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.steps)
    }

    /// Starts the pedometer: `handler` runs on `queue` for each sample that counts steps.
    public func startPedometerUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (PedometerUpdate?, MotionError?) -> Void
    ) {
        startPush(
            .pedometer, stream: .steps, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.steps)
    }

    /// Stops the pedometer's updates.
    public func stopPedometerUpdates() { stop(.pedometer) }

    /// Starts activity classification: `handler` runs on `queue` each time the activity reported changes.
    public func startActivityUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (MotionActivity?, MotionError?) -> Void
    ) {
        startPush(
            .activity, stream: .activity, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.activity)
    }

    /// Starts activity classification: `handler` runs on `queue` each time the activity reported changes.
    public func startActivityUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (MotionActivity?, MotionError?) -> Void
    ) {
        startPush(
            .activity, stream: .activity, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.activity)
    }

    /// Stops activity updates.
    public func stopActivityUpdates() { stop(.activity) }

    // MARK: Device orientation (UIDevice)

    /// Starts orientation tracking, as `UIDevice.beginGeneratingDeviceOrientationNotifications()`: calls nest
    /// and must be balanced by ``endGeneratingDeviceOrientationNotifications()``; the accelerometer runs while
    /// the count is above zero.
    public func beginGeneratingDeviceOrientationNotifications() {
        let start = slots.withLock { slots -> Bool in
            slots.orientationGenerators += 1
            return slots.orientationGenerators == 1
        }
        guard start else { return }
        let id = engine.subscribe(.orientation, route: .pull, interval: 0)
        let stale = slots.withLock { slots -> Int? in
            if slots.orientationGenerators > 0 && slots.orientationPullID == nil {
                slots.orientationPullID = id
                return nil
            }
            return id  // ended meanwhile
        }
        if let stale { engine.unsubscribe(stale) }
    }

    /// Balances one ``beginGeneratingDeviceOrientationNotifications()``; the last one stops the tracking and
    /// ``deviceOrientation`` reads `unknown` again. Extra calls are ignored.
    public func endGeneratingDeviceOrientationNotifications() {
        let id = slots.withLock { slots -> Int? in
            guard slots.orientationGenerators > 0 else { return nil }
            slots.orientationGenerators -= 1
            guard slots.orientationGenerators == 0 else { return nil }
            defer { slots.orientationPullID = nil }
            return slots.orientationPullID
        }
        if let id { engine.unsubscribe(id) }
    }

    /// `true` between balanced begin and end calls.
    public var isGeneratingDeviceOrientationNotifications: Bool {
        slots.withLock { $0.orientationGenerators > 0 }
    }

    /// The settled device orientation; `unknown` unless orientation notifications are being generated (as
    /// `UIDevice.orientation`) or an orientation subscription is active, and until the first orientation settles.
    public var deviceOrientation: DeviceOrientation {
        let tracking = slots.withLock { $0.orientationGenerators > 0 || $0.services[.deviceOrientation]?.id != nil }
        guard tracking else { return .unknown }
        return engine.state.withLock { $0.latest.orientation?.orientation } ?? .unknown
    }

    /// Runs `handler` on `queue` for each orientation change (first with the current state when one is known),
    /// as `UIDevice.orientationDidChangeNotification`. Independent of the begin/end count.
    public func startDeviceOrientationUpdates(
        to queue: OperationQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (DeviceOrientationChange?, MotionError?) -> Void
    ) {
        startPush(
            .deviceOrientation, stream: .orientation, policy: bufferingPolicy, on: .operationQueue(queue), handler,
            route: MotionEngine.Route.orientation)
    }

    /// Runs `handler` on `queue` for each orientation change (first with the current state when one is known).
    public func startDeviceOrientationUpdates(
        to queue: DispatchQueue, bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        withHandler handler: @escaping @Sendable (DeviceOrientationChange?, MotionError?) -> Void
    ) {
        startPush(
            .deviceOrientation, stream: .orientation, policy: bufferingPolicy, on: .dispatchQueue(queue), handler,
            route: MotionEngine.Route.orientation)
    }

    /// Stops the orientation handler.
    public func stopDeviceOrientationUpdates() { stop(.deviceOrientation) }

    // MARK: Shutting down

    /// Stops every service and subscription of this manager and returns once the source is released: a
    /// device's buffer is disabled (`buffer/enable` = 0), a replay is paused. Asynchronous sequences end
    /// normally; handlers are not called again (as after `stop…Updates()`); orientation notifications end.
    /// Call it before a process exits, so the device is left off.
    public func stopAllUpdates() async {
        Service.allCases.forEach(stop)
        slots.withLock { slots in
            slots.orientationGenerators = 0
            slots.orientationPullID = nil  // removed with every other registration below
        }
        await engine.shutdown()
    }

    // MARK: Implementation

    enum HandlerQueue {
        case operationQueue(OperationQueue)
        case dispatchQueue(DispatchQueue)

        var scheduler: @Sendable (@escaping @Sendable () -> Void) -> Void {
            switch self {
            case .operationQueue(let queue):
                return { work in queue.addOperation(work) }
            case .dispatchQueue(let queue):
                return { work in queue.async(execute: work) }
            }
        }
    }

    private func interval(of service: Service) -> Double {
        slots.withLock { $0.services[service]?.interval ?? Slot().interval }
    }

    private func setInterval(_ interval: Double, of service: Service) {
        precondition(interval >= 0 && interval.isFinite, "An update interval is ≥ 0 seconds, got \(interval).")
        let id = slots.withLock { slots -> Int? in
            slots.services[service, default: Slot()].interval = interval
            return slots.services[service]?.id
        }
        if let id { engine.setInterval(interval, of: id) }
    }

    /// Records the frame of the device-motion service (the configuration's when `nil`) and returns it.
    private func setFrame(_ frame: AttitudeReferenceFrame?) -> AttitudeReferenceFrame {
        let frame = frame ?? engine.configuration.referenceFrame
        slots.withLock { $0.services[.deviceMotion, default: Slot()].frame = frame }
        return frame
    }

    private func isActive(_ service: Service) -> Bool {
        guard let id = slots.withLock({ $0.services[service]?.id }) else { return false }
        return engine.isRegistered(id)
    }

    private func startPull(_ service: Service, stream: MotionEngine.Stream) {
        stop(service)
        let interval = interval(of: service)
        guard let id = engine.subscribe(stream, route: .pull, interval: interval) else { return }
        let engine = self.engine
        install(service, id: id, stop: { engine.unsubscribe(id) }, dropped: nil)
    }

    private func startPush<Element: Sendable>(
        _ service: Service, stream: MotionEngine.Stream, policy: MotionBufferingPolicy, on queue: HandlerQueue,
        _ handler: @escaping @Sendable (Element?, MotionError?) -> Void,
        route: (DeliveryBuffer<Element>) -> MotionEngine.Route
    ) {
        stop(service)
        let buffer = DeliveryBuffer(policy: policy, scheduler: queue.scheduler, handler: handler)
        // Events (shake, orientation) ignore the interval: the engine passes every event on.
        guard let id = engine.subscribe(stream, route: route(buffer), interval: interval(of: service)) else { return }
        let engine = self.engine
        install(
            service, id: id,
            stop: {
                buffer.stopHandler()
                engine.unsubscribe(id)
            }, dropped: { buffer.droppedCount })
    }

    private func install(
        _ service: Service, id: Int, stop: @escaping @Sendable () -> Void, dropped: (@Sendable () -> Int)?
    ) {
        let previous = slots.withLock { slots -> (@Sendable () -> Void)? in
            let previous = slots.services[service]?.stop
            slots.services[service, default: Slot()].id = id
            slots.services[service]!.stop = stop
            slots.services[service]!.dropped = dropped
            return previous
        }
        previous?()  // a concurrent start won the slot first
    }

    private func stop(_ service: Service) {
        let stop = slots.withLock { slots -> (@Sendable () -> Void)? in
            let stop = slots.services[service]?.stop
            slots.services[service]?.stop = nil
            slots.services[service]?.id = nil
            return stop
        }
        stop?()
    }
}
