public import MotionCore
import RealModule

/// Turns motion samples into `DeviceMotion` in a chosen reference frame: Core Motion's processed
/// device motion, as a pure value-type state machine over an ``AttitudeEstimator``.
///
/// Frames (`AttitudeReferenceFrame`):
/// - `xArbitraryZVertical`: gyroscope and accelerometer only; the magnetometer is ignored. x is the device's
///   initial heading, and yaw drifts slowly.
/// - `xArbitraryCorrectedZVertical`: the magnetometer stops yaw drift, but x stays the initial heading: the
///   attitude is the north-referenced one turned by the heading the device had when the magnetometer first
///   reported.
/// - `xMagneticNorthZVertical`: x magnetic north, y west, z up.
/// - `xTrueNorthZVertical`: x true north, using the magnetic declination given at creation.
///
/// Without a magnetometer reading yet, the north frames report the 6D attitude and a heading of −1.
///
/// In the frames that use the magnetometer, each reading first goes through a ``MagnetometerCalibrator``:
/// `DeviceMotion.magneticField` is the reading with the estimated hard-iron offset removed, with its accuracy, and
/// the attitude is fused from that calibrated reading (the raw one while no fit has earned the calibrator's trust:
/// accuracy `uncalibrated`, offset zero). A change of calibration changes the field the estimator sees; its disturbance
/// rejection treats a large change as a disturbance and takes the changed field as its reference once it has
/// stayed steady while the device moved (``AttitudeEstimatorConfiguration/magneticNewFieldTime``).
public struct DeviceMotionFilter: Sendable {
    /// The frame of the attitudes produced.
    public let referenceFrame: AttitudeReferenceFrame
    /// Magnetic declination in radians, positive when magnetic north is east of true north.
    public let magneticDeclination: Double
    /// How far ahead the reported attitude is predicted, in seconds, from the latest bias-corrected rotation rate:
    /// latency compensation for a sensor whose readings arrive late (digital-filter group delay, transport). 0, the
    /// default, reports the attitude at the sample's own timestamp.
    public let predictionInterval: Double
    /// The underlying estimator (read its bias, rest and disturbance states here).
    public private(set) var estimator: AttitudeEstimator<Double>
    /// The magnetometer's calibration (hard-iron offset and accuracy), fed in the frames that use the magnetometer.
    public private(set) var calibrator: MagnetometerCalibrator

    var correctedFrameOffset: Double?
    var hasAccelerometer = false
    var hasGyroscope = false
    var lastAcceleration = SIMD3<Double>(0, 0, -1)
    var lastRotationRate = SIMD3<Double>.zero
    var lastMagneticField: CalibratedMagneticField?

    /// Creates a filter.
    /// - Parameters:
    ///   - referenceFrame: The frame the attitude is relative to.
    ///   - magneticDeclination: Radians, east positive; used by `xTrueNorthZVertical` only.
    ///   - predictionInterval: Seconds to predict the attitude ahead (latency compensation); 0 for none.
    ///   - configuration: The estimator's settings.
    ///   - calibration: The magnetometer calibrator's settings.
    public init(
        referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical, magneticDeclination: Double = 0,
        predictionInterval: Double = 0, configuration: AttitudeEstimatorConfiguration = .init(),
        calibration: MagnetometerCalibratorConfiguration = .init()
    ) {
        precondition(predictionInterval >= 0 && predictionInterval.isFinite, "The prediction interval must be ≥ 0 s.")
        self.referenceFrame = referenceFrame
        self.magneticDeclination = magneticDeclination
        self.predictionInterval = predictionInterval
        estimator = AttitudeEstimator(configuration: configuration)
        calibrator = MagnetometerCalibrator(configuration: calibration)
    }

    /// `true` when the frame uses the magnetometer.
    @inline(__always)
    public var usesMagnetometer: Bool { referenceFrame != .xArbitraryZVertical }

    /// Processes one sample and returns the device motion at its timestamp, or `nil` until both the gyroscope
    /// and the accelerometer have reported, and for a sample with a non-finite timestamp. Readings with a NaN or
    /// infinite component are ignored (``AttitudeEstimator/ignoredReadingCount`` counts them).
    public mutating func update(_ sample: MotionSample) -> DeviceMotion? {
        @inline(__always) func isFinite(_ v: SIMD3<Double>) -> Bool { (v * v).sum().isFinite }
        // The magnetometer reading as the estimator gets it: calibrated when finite, else as it is (to be counted
        // and ignored there).
        var field = usesMagnetometer ? sample.magneticField?.vector : nil
        if let raw = field, isFinite(raw), sample.timestamp.isFinite {
            let calibrated = calibrator.update(raw, at: sample.timestamp)
            lastMagneticField = calibrated
            field = calibrated.field.vector
        }
        estimator.update(
            rotationRate: sample.rotationRate?.vector, acceleration: sample.acceleration?.vector,
            magneticField: field, at: sample.timestamp)
        guard sample.timestamp.isFinite else { return nil }
        if let a = sample.acceleration?.vector, isFinite(a) {
            lastAcceleration = a
            hasAccelerometer = true
        }
        if let g = sample.rotationRate?.vector, isFinite(g) {
            lastRotationRate = g
            hasGyroscope = true
        }
        guard hasAccelerometer && hasGyroscope else { return nil }
        return deviceMotion(at: sample.timestamp)
    }

    /// The attitude quaternion (device → reference) in ``referenceFrame`` now, predicted ahead by
    /// ``predictionInterval``.
    @inline(__always)
    public var quaternion: Quaternion<Double> {
        guard predictionInterval > 0 else { return unpredictedQuaternion }
        // The device keeps turning at its body rate: v_ref = q · exp(ω·δ) · v_device.
        let rate = lastRotationRate - estimator.gyroscopeBias
        return (unpredictedQuaternion * Quaternion(rotationVector: rate * predictionInterval)).normalized
    }

    @inline(__always)
    private var unpredictedQuaternion: Quaternion<Double> {
        switch referenceFrame {
        case .xArbitraryZVertical:
            return estimator.quaternion6D
        case .xArbitraryCorrectedZVertical:
            guard estimator.hasHeading else { return estimator.quaternion6D }
            return Quaternion(angle: estimator.headingCorrection - (correctedFrameOffsetValue), axis: SIMD3(0, 0, 1))
                * estimator.quaternion6D
        case .xMagneticNorthZVertical:
            return estimator.quaternion9D
        case .xTrueNorthZVertical:
            // A vector towards magnetic north lies `declination` east (clockwise) of true north.
            return Quaternion(angle: -magneticDeclination, axis: SIMD3(0, 0, 1)) * estimator.quaternion9D
        }
    }

    @inline(__always)
    private var correctedFrameOffsetValue: Double { correctedFrameOffset ?? estimator.headingCorrection }

    private mutating func deviceMotion(at timestamp: Double) -> DeviceMotion {
        if referenceFrame == .xArbitraryCorrectedZVertical, correctedFrameOffset == nil, estimator.hasHeading {
            correctedFrameOffset = estimator.headingCorrection
        }
        let attitude = Attitude(quaternion: quaternion)
        let gravity = attitude.gravity
        let hasNorth = referenceFrame == .xMagneticNorthZVertical || referenceFrame == .xTrueNorthZVertical
        return DeviceMotion(
            timestamp: timestamp,
            attitude: attitude,
            referenceFrame: referenceFrame,
            rotationRate: RotationRate(lastRotationRate - estimator.gyroscopeBias),
            gravity: gravity,
            userAcceleration: Acceleration(lastAcceleration - gravity.vector),
            magneticField: lastMagneticField,
            heading: hasNorth && estimator.hasHeading ? Self.heading(of: attitude) : -1)
    }

    /// The azimuth of the device's top (+y), clockwise from reference x, in degrees in [0, 360). When the top
    /// points nearly straight up or down (less than about 6° from vertical), the azimuth of the back (−z) is
    /// used instead, as a compass held upright does.
    public static func heading(of attitude: Attitude) -> Double {
        let q = attitude.quaternion
        var axis = q.act(on: SIMD3(0, 1, 0))
        if axis.x * axis.x + axis.y * axis.y < 0.01 { axis = q.act(on: SIMD3(0, 0, -1)) }
        // Clockwise from x seen from above (z up) is towards −y.
        var degrees = PolynomialTrigonometry<Double>.arctangent(y: -axis.y, x: axis.x) * 180 / .pi
        if degrees < 0 { degrees += 360 }
        return degrees >= 360 ? 0 : degrees
    }
}

extension DeviceMotionFilter {
    /// Everything a ``DeviceMotionFilter`` knows, as a `Codable` value: save it (when a service stops, say) and
    /// restore it with ``init(restoring:)`` to continue exactly where it stopped (the same outputs, bit for bit, as
    /// an uninterrupted run on the same clock), or start a new session that keeps only what outlives it (the
    /// gyroscope bias with its uncertainty and the magnetometer calibration) with
    /// ``init(referenceFrame:magneticDeclination:predictionInterval:calibratedFrom:)``.
    ///
    /// It holds infinities and NaNs (times not yet seen, fits not yet made): encode it with a format that keeps
    /// them, e.g. `JSONEncoder` with `nonConformingFloatEncodingStrategy = .convertToString(…)`.
    public struct State: Codable, Sendable {
        /// The frame of the attitudes produced.
        public var referenceFrame: AttitudeReferenceFrame
        /// Magnetic declination in radians, east positive.
        public var magneticDeclination: Double
        /// How far ahead the attitude is predicted, in seconds.
        public var predictionInterval: Double
        /// The estimator: attitude, gyroscope bias and its covariance, rest detection, magnetic reference.
        public var estimator: AttitudeEstimator<Double>
        /// The magnetometer calibration: the fit in use, the candidate, its points and the trust window.
        public var calibrator: MagnetometerCalibrator
        var correctedFrameOffset: Double?
        var hasAccelerometer: Bool
        var hasGyroscope: Bool
        var lastAcceleration: SIMD3<Double>
        var lastRotationRate: SIMD3<Double>
        var lastMagneticField: SIMD3<Double>?
        var lastMagneticFieldAccuracy: MagneticFieldCalibrationAccuracy

        /// The gyroscope bias, in rad/s (device frame).
        public var gyroscopeBias: SIMD3<Double> { estimator.gyroscopeBias }
        /// The standard deviation of the gyroscope bias estimate (largest over the axes), in rad/s.
        public var gyroscopeBiasUncertainty: Double { estimator.gyroscopeBiasUncertainty }
        /// `true` when the device was at rest.
        public var isResting: Bool { estimator.isResting }
        /// The magnetometer's hard-iron offset in use, in µT (zero while none has earned trust).
        public var magnetometerBias: SIMD3<Double> { calibrator.bias }
        /// The accuracy of the magnetometer calibration in use.
        public var magnetometerAccuracy: MagneticFieldCalibrationAccuracy { calibrator.accuracy }
    }

    /// The filter's state now, to save.
    public var state: State {
        State(
            referenceFrame: referenceFrame, magneticDeclination: magneticDeclination,
            predictionInterval: predictionInterval, estimator: estimator, calibrator: calibrator,
            correctedFrameOffset: correctedFrameOffset, hasAccelerometer: hasAccelerometer, hasGyroscope: hasGyroscope,
            lastAcceleration: lastAcceleration, lastRotationRate: lastRotationRate,
            lastMagneticField: lastMagneticField?.field.vector,
            lastMagneticFieldAccuracy: lastMagneticField?.accuracy ?? .uncalibrated)
    }

    /// A filter that continues exactly where the one whose ``state`` was saved stopped: fed the samples that one
    /// would have been fed next (same clock), it gives the same outputs, bit for bit.
    public init(restoring state: State) {
        precondition(
            state.predictionInterval >= 0 && state.predictionInterval.isFinite,
            "The prediction interval must be ≥ 0 s.")
        referenceFrame = state.referenceFrame
        magneticDeclination = state.magneticDeclination
        predictionInterval = state.predictionInterval
        estimator = state.estimator
        calibrator = state.calibrator
        correctedFrameOffset = state.correctedFrameOffset
        hasAccelerometer = state.hasAccelerometer
        hasGyroscope = state.hasGyroscope
        lastAcceleration = state.lastAcceleration
        lastRotationRate = state.lastRotationRate
        lastMagneticField = state.lastMagneticField.map {
            CalibratedMagneticField(field: MagneticField($0), accuracy: state.lastMagneticFieldAccuracy)
        }
    }

    /// A new filter for a new session (any clock) that starts from what `state` learned about the device: the
    /// gyroscope bias with its covariance, and the magnetometer calibration (fit in use, candidate, points and
    /// trust window). The attitude, rest detection and magnetic reference start afresh; so do the estimator's
    /// and the calibrator's settings, which come from `state`.
    public init(
        referenceFrame: AttitudeReferenceFrame = .xArbitraryZVertical, magneticDeclination: Double = 0,
        predictionInterval: Double = 0, calibratedFrom state: State
    ) {
        self.init(
            referenceFrame: referenceFrame, magneticDeclination: magneticDeclination,
            predictionInterval: predictionInterval, configuration: state.estimator.configuration,
            calibration: state.calibrator.configuration)
        estimator.continueCalibration(of: state.estimator)
        calibrator = state.calibrator
        calibrator.forgetTime()
    }
}
