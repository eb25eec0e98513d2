public import MotionAlgorithms
public import MotionCore

/// The settings of the algorithms a ``MotionManager`` (its ``MotionProcessor``) runs: sensor filters, fusion, shake
/// detection, orientation, the pedometer and the activity classifier.
public struct MotionConfiguration: Sendable {
    /// The attitude estimator's settings (`Docs/Attitude.md`).
    public var attitude: AttitudeEstimatorConfiguration
    /// The frame of device motion when a subscription names none (the setting `deviceMotion.referenceFrame`).
    public var referenceFrame: AttitudeReferenceFrame
    /// The magnetic declination in degrees, east positive, for `AttitudeReferenceFrame.xTrueNorthZVertical`.
    public var magneticDeclination: Double
    /// How far ahead device motion is predicted, in seconds (latency compensation); 0 for none.
    public var predictionInterval: Double
    /// The shake detector's settings (`Docs/MotionEvents.md`).
    public var shake: ShakeDetector<Double>.Configuration
    /// The orientation classifier's settings (`Docs/MotionEvents.md`).
    public var orientation: OrientationClassifier<Double>.Configuration
    /// The step detector's settings (`Docs/Pedometer.md`), used by the pedometer and the activity classifier.
    public var steps: StepDetector<Double>.Configuration
    /// The pedometer's step-length model: distance and pace (`Docs/Pedometer.md`).
    public var stepLength: StepLengthModel
    /// The activity classifier's settings, apart from its step detector's, which are ``steps``
    /// (`Docs/Pedometer.md`).
    public var activity: ActivityClassifier<Double>.Configuration
    /// The filter applied to every accelerometer, gyroscope and magnetometer reading delivered (the iPhone guide's
    /// low-pass or high-pass), each sensor with its own state; `nil` (the default) delivers them as read. Device
    /// motion, shakes and orientation always use the unfiltered readings (`Docs/Filters.md`).
    public var sensorFilter: VectorFilter?
    /// What a previous session learned about the device (``MotionManager/calibration``, saved with
    /// ``CalibrationFile``): device motion starts from its gyroscope bias (with its uncertainty) and its
    /// magnetometer calibration instead of from zero; the attitude starts afresh. `nil` (the default) starts from
    /// zero.
    public var calibration: DeviceMotionFilter.State?

    /// Creates a configuration; every parameter has the documented default.
    public init(
        attitude: AttitudeEstimatorConfiguration = .init(),
        referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical, magneticDeclination: Double = 0,
        predictionInterval: Double = 0, shake: ShakeDetector<Double>.Configuration = .init(),
        orientation: OrientationClassifier<Double>.Configuration = .init(), sensorFilter: VectorFilter? = nil,
        steps: StepDetector<Double>.Configuration = .init(), stepLength: StepLengthModel = .default,
        activity: ActivityClassifier<Double>.Configuration = .init()
    ) {
        self.steps = steps
        self.stepLength = stepLength
        self.activity = activity
        self.attitude = attitude
        self.referenceFrame = referenceFrame
        self.magneticDeclination = magneticDeclination
        self.predictionInterval = predictionInterval
        self.shake = shake
        self.orientation = orientation
        self.sensorFilter = sensorFilter
    }
}

/// An orientation change, as `OrientationClassifier` reports it.
public typealias DeviceOrientationChange = OrientationClassifier<Double>.Change
