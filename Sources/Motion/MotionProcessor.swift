public import MotionAlgorithms
public import MotionCore

/// The processing core: the one place where samples become outputs, for ``MotionManager`` and for every
/// `motionctl` command.
///
/// One call of ``process(_:)`` per sample, in timestamp order, runs what the ``Request`` asks for and nothing else:
/// - the sensor readings, each sensor through ``MotionConfiguration/sensorFilter`` and its own
///   `UpdateIntervalGate` (``Request/updateInterval``);
/// - device motion in each requested reference frame (a `DeviceMotionFilter` per frame, fed the unfiltered readings);
/// - shake events (`ShakeDetector`) and orientation changes (`OrientationClassifier`), from the accelerometer;
/// - steps (`Pedometer`) and activity changes (`ActivityClassifier`), from the accelerometer.
///
/// When the source ends, stops or fails, ``finish()`` gives the last outputs: a shake in progress is cancelled as
/// `interrupted` at the last accelerometer reading (the sensor stopped), everywhere the same way.
///
/// A pure value type: no I/O, clock or lock; time comes from the samples' timestamps (seconds). Processing a sample
/// allocates nothing once every requested algorithm has seen a sample.
public struct MotionProcessor: Sendable {
    /// What to compute.
    public struct Request: Hashable, Sendable {
        /// The sensors whose (filtered, thinned) readings ``MotionOutputs/sample`` carries.
        public var sensors: SensorSet
        /// Seconds between readings of each sensor in ``MotionOutputs/sample``, on a fixed grid (0: every reading).
        public var updateInterval: Double
        /// The frames to compute device motion in.
        public var referenceFrames: Set<AttitudeReferenceFrame>
        /// Detect shakes.
        public var shake: Bool
        /// Classify the device's orientation.
        public var orientation: Bool
        /// Count steps (pedometer).
        public var steps: Bool
        /// Classify the activity (stationary, walking, running, unknown).
        public var activity: Bool

        /// Creates a request; by default, nothing is computed.
        public init(
            sensors: SensorSet = [], updateInterval: Double = 0, referenceFrames: Set<AttitudeReferenceFrame> = [],
            shake: Bool = false, orientation: Bool = false, steps: Bool = false, activity: Bool = false
        ) {
            precondition(updateInterval >= 0 && updateInterval.isFinite, "The update interval must be ≥ 0 s.")
            self.sensors = sensors
            self.updateInterval = updateInterval
            self.referenceFrames = referenceFrames
            self.shake = shake
            self.orientation = orientation
            self.steps = steps
            self.activity = activity
        }

        /// The sensors the source must deliver for this request.
        public var requiredSensors: SensorSet {
            var required = sensors
            for frame in referenceFrames { required.formUnion(frame.requiredSensors) }
            if shake || orientation || steps || activity { required.insert(.accelerometer) }
            return required
        }
    }

    /// The algorithms' settings.
    public let configuration: MotionConfiguration
    /// What is computed; change it with ``setRequest(_:)``.
    public private(set) var request: Request

    private var readings: SamplePipeline
    private var filters: [DeviceMotionFilter?] = [nil, nil, nil, nil]
    /// What the last device-motion filters learned when the request dropped them all: kept for ``calibration``
    /// (saved at a service's stop, which drops every request before the processor's end) and for the filters a
    /// later request starts.
    private var learnedCalibration: DeviceMotionFilter.State?
    private var shake: ShakeDetector<Double>?
    private var orientation: OrientationClassifier<Double>?
    private var pedometer: Pedometer<Double>?
    private var activityClassifier: ActivityClassifier<Double>?
    /// What the last call of ``process(_:)`` or ``finish()`` produced.
    public private(set) var outputs = MotionOutputs()
    /// The time of the last accelerometer reading: a shake in progress is cancelled there at the end.
    private var lastAccelerationTime: Double?

    /// Creates a processor.
    /// - Parameters:
    ///   - configuration: The algorithms' settings.
    ///   - request: What to compute.
    public init(configuration: MotionConfiguration = .init(), request: Request) {
        self.configuration = configuration
        self.request = request
        readings = SamplePipeline(
            sensors: request.sensors, updateInterval: request.updateInterval, filter: configuration.sensorFilter)
        setRequest(request, force: true)
    }

    /// Changes what is computed. Algorithms still requested keep their state; those no longer requested are
    /// dropped, and newly requested ones start fresh at the next sample. The readings' filters and gates restart
    /// when the sensors or the interval change.
    public mutating func setRequest(_ newRequest: Request) {
        setRequest(newRequest, force: false)
    }

    private mutating func setRequest(_ newRequest: Request, force: Bool) {
        guard force || newRequest != request else { return }
        if newRequest.sensors != request.sensors || newRequest.updateInterval != request.updateInterval {
            readings = SamplePipeline(
                sensors: newRequest.sensors, updateInterval: newRequest.updateInterval,
                filter: configuration.sensorFilter)
        }
        request = newRequest
        if newRequest.referenceFrames.isEmpty, let learned = liveCalibration { learnedCalibration = learned }
        for frame in AttitudeReferenceFrame.allCases {
            let slot = MotionOutputs.slot(frame)
            if !newRequest.referenceFrames.contains(frame) {
                filters[slot] = nil
                outputs.deviceMotionIsDue &= ~(1 << slot)
            } else if filters[slot] == nil {
                let declination = configuration.magneticDeclination * .pi / 180
                if let saved = calibration ?? configuration.calibration {
                    // What this or a previous session learned about the device: bias and magnetometer calibration.
                    filters[slot] = DeviceMotionFilter(
                        referenceFrame: frame, magneticDeclination: declination,
                        predictionInterval: configuration.predictionInterval, calibratedFrom: saved)
                } else {
                    filters[slot] = DeviceMotionFilter(
                        referenceFrame: frame, magneticDeclination: declination,
                        predictionInterval: configuration.predictionInterval, configuration: configuration.attitude)
                }
            }
        }
        if !newRequest.shake {
            shake = nil
        } else if shake == nil {
            shake = ShakeDetector(configuration: configuration.shake)
        }
        if !newRequest.orientation {
            orientation = nil
        } else if orientation == nil {
            orientation = OrientationClassifier(configuration: configuration.orientation)
        }
        if !newRequest.steps {
            pedometer = nil
        } else if pedometer == nil {
            pedometer = Pedometer(configuration: configuration.steps, stepLength: configuration.stepLength)
        }
        if !newRequest.activity {
            activityClassifier = nil
        } else if activityClassifier == nil {
            var activityConfiguration = configuration.activity
            activityConfiguration.steps = configuration.steps
            activityClassifier = ActivityClassifier(configuration: activityConfiguration)
        }
    }

    /// Processes one sample; ``outputs`` holds what it produced until the next call.
    public mutating func process(_ sample: MotionSample) {
        let t = sample.timestamp
        outputs.timestamp = t
        outputs.sample = request.sensors.isEmpty ? nil : readings.process(sample)
        if !request.referenceFrames.isEmpty {
            // Written in place: a `DeviceMotion?` returned and stored was copied three times (161 bytes each).
            outputs.deviceMotionIsDue = 0
            for slot in 0..<4 where filters[slot] != nil {
                if filters[slot]!.update(sample, into: &outputs.deviceMotionValues[slot]) {
                    outputs.deviceMotionIsDue |= 1 << slot
                }
            }
        }
        outputs.shake = nil
        outputs.orientationChange = nil
        outputs.steps = nil
        outputs.activity = nil
        if let acceleration = sample.acceleration?.vector {
            lastAccelerationTime = t
            if shake != nil { outputs.shake = shake!.update(acceleration, at: t) }
            if orientation != nil { outputs.orientationChange = orientation!.update(acceleration, at: t) }
            if pedometer != nil, pedometer!.update(acceleration, at: t) > 0 {
                outputs.steps = PedometerUpdate(
                    stepTimes: pedometer!.detector.newStepTimes, data: pedometer!.data,
                    stepLength: pedometer!.newStepLength)
            }
            if activityClassifier != nil { outputs.activity = activityClassifier!.update(acceleration, at: t) }
        }
    }

    /// Ends the source (it ended, stopped or failed); ``outputs`` then holds what that gives: a shake in progress,
    /// cancelled as `interrupted` at the last accelerometer reading, and nothing else. Processing can go on
    /// afterwards.
    public mutating func finish() {
        outputs = MotionOutputs(timestamp: lastAccelerationTime ?? outputs.timestamp)
        if shake != nil, let t = lastAccelerationTime { outputs.shake = shake!.cancel(at: t) }
    }

    /// The pedometer's figures so far, when steps are requested: the final total once the source has ended.
    public var pedometerData: PedometerData? { pedometer?.data }

    /// The activity reported last, when activity is requested.
    public var currentActivity: MotionActivity? { activityClassifier?.activity }

    /// What device motion has learned about the device so far, to save (``CalibrationFile``) and give a later
    /// session (``MotionConfiguration/calibration``): the state of the filter that uses the most sensors (a
    /// north frame's, else the corrected frame's, else the arbitrary frame's); when no device motion is computed,
    /// what the filters had learned when the request last dropped them, else the configured calibration.
    public var calibration: DeviceMotionFilter.State? {
        liveCalibration ?? learnedCalibration ?? configuration.calibration
    }

    /// The state of the running filter that uses the most sensors, or `nil` when none runs.
    private var liveCalibration: DeviceMotionFilter.State? {
        for frame in [
            AttitudeReferenceFrame.xMagneticNorthZVertical, .xTrueNorthZVertical, .xArbitraryCorrectedZVertical,
            .xArbitraryZVertical,
        ] {
            if let filter = filters[MotionOutputs.slot(frame)] { return filter.state }
        }
        return nil
    }

    /// The device-motion filter of `frame`, when requested (its estimator's bias, rest state, saturation count,
    /// calibration; its state can be saved).
    public func deviceMotionFilter(for frame: AttitudeReferenceFrame) -> DeviceMotionFilter? {
        filters[MotionOutputs.slot(frame)]
    }
}

/// What one sample produced: the readings due, device motion per frame, a shake event, an orientation change.
public struct MotionOutputs: Sendable {
    /// The sample's time, seconds (the trace's `t`, or `CLOCK_BOOTTIME` for devices).
    public var timestamp: Double
    /// The requested sensors' readings that are due, filtered; `nil` when none is.
    public var sample: MotionSample?
    /// By ``slot(_:)``: the latest device motion of each frame, this sample's where its bit of
    /// `deviceMotionIsDue` is set.
    var deviceMotionValues: [DeviceMotion]
    var deviceMotionIsDue: UInt8 = 0
    /// A shake began, ended or was cancelled.
    public var shake: ShakeEvent?
    /// The device's orientation (or iio-sensor-proxy's orientation or tilt) changed.
    public var orientationChange: DeviceOrientationChange?
    /// Steps were counted: their times and the pedometer's figures after them.
    public var steps: PedometerUpdate?
    /// The activity changed.
    public var activity: MotionActivity?

    init(timestamp: Double = 0) {
        self.timestamp = timestamp
        deviceMotionValues = AttitudeReferenceFrame.allCases.sorted { Self.slot($0) < Self.slot($1) }
            .map(DeviceMotion.placeholder(in:))
    }

    /// `true` when the sample produced nothing: no reading due, no device motion, no event.
    public var isEmpty: Bool {
        sample == nil && shake == nil && orientationChange == nil && steps == nil && activity == nil
            && deviceMotionIsDue == 0
    }

    /// The accelerometer reading due, as Core Motion's `CMAccelerometerData`.
    public var accelerometer: AccelerometerData? {
        sample?.acceleration.map { AccelerometerData(timestamp: timestamp, acceleration: $0) }
    }

    /// The gyroscope reading due.
    public var gyroscope: GyroData? {
        sample?.rotationRate.map { GyroData(timestamp: timestamp, rotationRate: $0) }
    }

    /// The magnetometer reading due.
    public var magnetometer: MagnetometerData? {
        sample?.magneticField.map { MagnetometerData(timestamp: timestamp, magneticField: $0) }
    }

    /// Device motion in `frame`: `nil` when the frame was not requested, or before the filter has both the
    /// gyroscope and the accelerometer.
    public func deviceMotion(in frame: AttitudeReferenceFrame) -> DeviceMotion? {
        let slot = Self.slot(frame)
        return deviceMotionIsDue & (1 << slot) != 0 ? deviceMotionValues[slot] : nil
    }

    static func slot(_ frame: AttitudeReferenceFrame) -> Int {
        switch frame {
        case .xArbitraryZVertical: 0
        case .xArbitraryCorrectedZVertical: 1
        case .xMagneticNorthZVertical: 2
        case .xTrueNorthZVertical: 3
        }
    }
}
