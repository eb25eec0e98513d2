public import MotionAlgorithms
public import MotionCore

extension MotionManager {
    // MARK: Asynchronous sequences

    /// Subscribes to accelerometer readings, one every `interval` seconds (default
    /// ``accelerometerUpdateInterval``; 0 for every sample). The subscription lasts until the sequence is
    /// cancelled or released, its task is cancelled, or the source ends.
    public func accelerometerUpdates(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault
    ) -> MotionUpdates<AccelerometerData> {
        updates(.accelerometer, interval: interval ?? accelerometerUpdateInterval, policy: bufferingPolicy,
                route: MotionEngine.Route.accelerometer)
    }

    /// Subscribes to gyroscope readings, one every `interval` seconds (default ``gyroUpdateInterval``).
    public func gyroUpdates(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault
    ) -> MotionUpdates<GyroData> {
        updates(.gyroscope, interval: interval ?? gyroUpdateInterval, policy: bufferingPolicy,
                route: MotionEngine.Route.gyroscope)
    }

    /// Subscribes to magnetometer readings, one every `interval` seconds (default ``magnetometerUpdateInterval``).
    public func magnetometerUpdates(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault
    ) -> MotionUpdates<MagnetometerData> {
        updates(.magnetometer, interval: interval ?? magnetometerUpdateInterval, policy: bufferingPolicy,
                route: MotionEngine.Route.magnetometer)
    }

    /// Subscribes to device motion in `frame` (default: the configuration's ``MotionConfiguration/referenceFrame``),
    /// one every `interval` seconds (default ``deviceMotionUpdateInterval``). Subscriptions in the same frame share
    /// one fusion filter.
    public func deviceMotionUpdates(
        using frame: AttitudeReferenceFrame? = nil, interval: Double? = nil,
        bufferingPolicy: MotionBufferingPolicy = .stateDefault
    ) -> MotionUpdates<DeviceMotion> {
        updates(
            .deviceMotion(frame ?? engine.configuration.referenceFrame),
            interval: interval ?? deviceMotionUpdateInterval, policy: bufferingPolicy,
            route: MotionEngine.Route.deviceMotion)
    }

    /// Subscribes to shake events (`began`, then `ended` or `cancelled`).
    public func shakeEvents(bufferingPolicy: MotionBufferingPolicy = .eventsDefault) -> MotionUpdates<ShakeEvent> {
        updates(.shake, interval: 0, policy: bufferingPolicy, route: MotionEngine.Route.shake)
    }

    /// Subscribes to orientation changes; the first element is the current state when one is known (its
    /// `orientationChanged` is `false`).
    public func deviceOrientationChanges(
        bufferingPolicy: MotionBufferingPolicy = .eventsDefault
    ) -> MotionUpdates<DeviceOrientationChange> {
        updates(.orientation, interval: 0, policy: bufferingPolicy, route: MotionEngine.Route.orientation)
    }

    /// Subscribes to the pedometer: one update for each sample that counts steps (one step, or the whole run of
    /// steps that confirmed a walk), with the step times and the figures after them (`PedometerData`: steps,
    /// distance in metres, cadence in steps/s, pace in s/m) counted since the manager's pedometer started, which
    /// is when the first of its pedometer subscriptions started; it starts again from zero once none is left.
    /// The device is asked for at least 50 Hz (the motion service for 25 Hz, which everyone may ask;
    /// `Docs/Pedometer.md`).
    public func pedometerUpdates(bufferingPolicy: MotionBufferingPolicy = .eventsDefault) -> MotionUpdates<PedometerUpdate> {
        updates(.steps, interval: 0, policy: bufferingPolicy, route: MotionEngine.Route.steps)
    }

    /// Subscribes to activity changes (stationary, walking, running or unknown, with a confidence): one update
    /// each time the activity reported changes (`Docs/Pedometer.md`). The device is asked for at least 50 Hz (the
    /// motion service for 25 Hz).
    public func activityUpdates(bufferingPolicy: MotionBufferingPolicy = .eventsDefault) -> MotionUpdates<MotionActivity> {
        updates(.activity, interval: 0, policy: bufferingPolicy, route: MotionEngine.Route.activity)
    }

    /// Subscribes to the readings of `sensors` together, one `MotionSample` per sample of the source that has a
    /// reading of one of them (the other sensors' fields `nil`), filtered by ``MotionConfiguration/sensorFilter``:
    /// the raw stream a recording is made of. `interval` thins the samples on a fixed grid (0, the default: every
    /// one).
    public func sampleUpdates(
        sensors: SensorSet = .all, interval: Double = 0, bufferingPolicy: MotionBufferingPolicy = .samplesDefault
    ) -> MotionUpdates<MotionSample> {
        updates(.samples(sensors), interval: interval, policy: bufferingPolicy, route: MotionEngine.Route.samples)
    }

    /// Every sample of `sensors`, while the device is asked for the rate of `demandInterval` seconds (as a
    /// subscription at that interval would ask it): for a subscriber that thins the samples itself, such as the
    /// service's per-user grid, which must see every sample to keep its streams on one grid.
    package func sampleUpdates(
        sensors: SensorSet, everySampleAskingRateOf demandInterval: Double, bufferingPolicy: MotionBufferingPolicy
    ) -> MotionUpdates<MotionSample> {
        updates(
            .samples(sensors), interval: 0, demandInterval: demandInterval, policy: bufferingPolicy,
            route: MotionEngine.Route.samples)
    }

    /// Device motion in `frame` for every sample, while the device is asked for the rate of `demandInterval`
    /// seconds (see ``sampleUpdates(sensors:everySampleAskingRateOf:bufferingPolicy:)``).
    package func deviceMotionUpdates(
        using frame: AttitudeReferenceFrame, everySampleAskingRateOf demandInterval: Double,
        bufferingPolicy: MotionBufferingPolicy
    ) -> MotionUpdates<DeviceMotion> {
        updates(
            .deviceMotion(frame), interval: 0, demandInterval: demandInterval, policy: bufferingPolicy,
            route: MotionEngine.Route.deviceMotion)
    }

    // MARK: Scoped subscriptions

    /// Runs `body` with accelerometer updates; the subscription ends when `body` returns or throws.
    public func withAccelerometerUpdates<Result>(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        _ body: (MotionUpdates<AccelerometerData>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(accelerometerUpdates(interval: interval, bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with gyroscope updates; the subscription ends when `body` returns or throws.
    public func withGyroUpdates<Result>(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        _ body: (MotionUpdates<GyroData>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(gyroUpdates(interval: interval, bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with magnetometer updates; the subscription ends when `body` returns or throws.
    public func withMagnetometerUpdates<Result>(
        interval: Double? = nil, bufferingPolicy: MotionBufferingPolicy = .samplesDefault,
        _ body: (MotionUpdates<MagnetometerData>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(magnetometerUpdates(interval: interval, bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with device-motion updates in `frame`; the subscription ends when `body` returns or throws.
    public func withDeviceMotionUpdates<Result>(
        using frame: AttitudeReferenceFrame? = nil, interval: Double? = nil,
        bufferingPolicy: MotionBufferingPolicy = .stateDefault,
        _ body: (MotionUpdates<DeviceMotion>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(deviceMotionUpdates(using: frame, interval: interval, bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with shake events; the subscription ends when `body` returns or throws.
    public func withShakeEvents<Result>(
        bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        _ body: (MotionUpdates<ShakeEvent>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(shakeEvents(bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with orientation changes; the subscription ends when `body` returns or throws.
    public func withDeviceOrientationChanges<Result>(
        bufferingPolicy: MotionBufferingPolicy = .eventsDefault,
        _ body: (MotionUpdates<DeviceOrientationChange>) async throws -> Result
    ) async rethrows -> Result {
        try await scoped(deviceOrientationChanges(bufferingPolicy: bufferingPolicy), body)
    }

    /// Runs `body` with `updates` and cancels the subscription when `body` returns or throws.
    private func scoped<Element, Result>(
        _ updates: MotionUpdates<Element>, _ body: (MotionUpdates<Element>) async throws -> Result
    ) async rethrows -> Result {
        defer { updates.cancel() }
        return try await body(updates)
    }

    private func updates<Element: Sendable>(
        _ stream: MotionEngine.Stream, interval: Double, demandInterval: Double? = nil, policy: MotionBufferingPolicy,
        route: (DeliveryBuffer<Element>) -> MotionEngine.Route
    ) -> MotionUpdates<Element> {
        precondition(interval >= 0 && interval.isFinite, "An update interval is ≥ 0 seconds, got \(interval).")
        let buffer = DeliveryBuffer<Element>(policy: policy)
        let id = engine.subscribe(
            stream, route: route(buffer), interval: interval, demandInterval: demandInterval, deferStart: true) ?? 0
        return MotionUpdates(subscription: Subscription(id: id, buffer: buffer, engine: engine))
    }
}
