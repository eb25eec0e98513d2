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
/// stayed steady while the device moved (`AttitudeEstimatorConfiguration.magneticNewFieldTime`).
///
/// `Scalar` is the estimator's precision (``AttitudeEstimator``); the calibration and the `DeviceMotion` values are
/// in `Double` either way. ``DeviceMotionFilter`` is the `Double` filter.
public struct DeviceMotionFilterOf<Scalar: MotionScalar>: Sendable {
    /// The frame of the attitudes produced.
    public let referenceFrame: AttitudeReferenceFrame
    /// Magnetic declination in radians, positive when magnetic north is east of true north.
    public let magneticDeclination: Double
    /// How far ahead the reported attitude is predicted, in seconds, from the latest bias-corrected rotation rate:
    /// latency compensation for a sensor whose readings arrive late (digital-filter group delay, transport). 0, the
    /// default, reports the attitude at the sample's own timestamp.
    public let predictionInterval: Double
    /// The underlying estimator (read its bias, rest and disturbance states here).
    @inlinable @inline(__always)
    public var estimator: AttitudeEstimator<Scalar> { attitudeEstimator }
    /// The magnetometer's calibration (hard-iron offset and accuracy), fed in the frames that use the magnetometer.
    @inlinable @inline(__always)
    public var calibrator: MagnetometerCalibrator { magnetometerCalibrator }

    @usableFromInline var attitudeEstimator: AttitudeEstimator<Scalar>
    @usableFromInline var magnetometerCalibrator: MagnetometerCalibrator

    @usableFromInline var correctedFrameOffset: Scalar?
    @usableFromInline var hasAccelerometer = false
    @usableFromInline var hasGyroscope = false
    @usableFromInline var lastAcceleration = SIMD3<Double>(0, 0, -1)
    @usableFromInline var lastRotationRate = SIMD3<Double>.zero
    @usableFromInline var lastMagneticField: CalibratedMagneticField?
    // The turn about the vertical from the magnetic-north frame to this one, as (cos, sin) of half its angle:
    // −declination in the true-north frame, −(the heading correction when the heading was first known) in the
    // arbitrary corrected one, none otherwise. Constant, so its cosine and sine are computed once.
    @usableFromInline var frameTurn = SIMD2<Scalar>(1, 0)

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
        attitudeEstimator = AttitudeEstimator(configuration: configuration)
        magnetometerCalibrator = MagnetometerCalibrator(configuration: calibration)
        frameTurn = Self.frame(referenceFrame, declination: magneticDeclination, offset: nil)
    }

    /// ``frameTurn`` for `frame`.
    @usableFromInline
    static func frame(_ frame: AttitudeReferenceFrame, declination: Double, offset: Scalar?) -> SIMD2<Scalar> {
        // A vector towards magnetic north lies `declination` east (clockwise) of true north.
        let angle = switch frame {
        case .xTrueNorthZVertical: -Scalar(declination)
        case .xArbitraryCorrectedZVertical: -(offset ?? 0)
        case .xArbitraryZVertical, .xMagneticNorthZVertical: Scalar(0)
        }
        return SIMD2(Scalar.cos(angle / 2), Scalar.sin(angle / 2))
    }

    /// `true` when the frame uses the magnetometer.
    @inlinable @inline(__always)
    public var usesMagnetometer: Bool { referenceFrame != .xArbitraryZVertical }

    /// Processes one sample and returns the device motion at its timestamp, or `nil` until both the gyroscope
    /// and the accelerometer have reported, and for a sample with a non-finite timestamp. Readings with a NaN or
    /// infinite component are ignored (``AttitudeEstimator/ignoredReadingCount`` counts them).
    ///
    /// Inlined into the caller, around ``update(_:into:)``: a `DeviceMotion?` (161 bytes) returned from a function
    /// is built in a temporary and copied twice on its way out (about 15 % of the time of the arbitrary frame); a
    /// value written in place is not.
    @inlinable @inline(__always)
    public mutating func update(_ sample: MotionSample) -> DeviceMotion? {
        var motion = DeviceMotion.placeholder(in: referenceFrame)
        return update(sample, into: &motion) ? motion : nil
    }

    /// As ``update(_:)``, writing the device motion into `motion` and returning `true`; `false`, with `motion` left
    /// as it is, when there is none.
    ///
    /// Inlinable, so that callers get it specialised for their `Scalar`; never inlined, as it is large (and so the
    /// whole value is built whatever the caller reads of it).
    @inlinable @inline(never)
    public mutating func update(_ sample: MotionSample, into motion: inout DeviceMotion) -> Bool {
        let (isDue, attitude6D) = fuse(sample)
        guard isDue else { return false }
        write(into: &motion, at: sample.timestamp, attitude6D: attitude6D ?? attitudeEstimator.quaternion6D)
        return true
    }

    /// Feeds `sample` to the calibrator and the estimator; `isDue` when a device motion is due, with the estimator's
    /// 6D attitude when its update computed it.
    @inlinable @inline(__always)
    mutating func fuse(_ sample: MotionSample) -> (isDue: Bool, attitude6D: Quaternion<Scalar>?) {
        @inline(__always) func isFinite(_ v: SIMD3<Double>) -> Bool { (v * v).sum().isFinite }
        // The magnetometer reading as the estimator gets it: calibrated when finite, else as it is (to be counted
        // and ignored there).
        var field = usesMagnetometer ? sample.magneticField?.vector : nil
        if let raw = field, isFinite(raw), sample.timestamp.isFinite {
            let calibrated = magnetometerCalibrator.update(raw, at: sample.timestamp)
            lastMagneticField = calibrated
            field = calibrated.field.vector
        }
        let attitude6D = attitudeEstimator.attitude6DAfterUpdate(
            rotationRate: sample.rotationRate?.vector, acceleration: sample.acceleration?.vector, magneticField: field,
            at: sample.timestamp)
        guard sample.timestamp.isFinite else { return (false, nil) }
        if let a = sample.acceleration?.vector, isFinite(a) {
            lastAcceleration = a
            hasAccelerometer = true
        }
        if let g = sample.rotationRate?.vector, isFinite(g) {
            lastRotationRate = g
            hasGyroscope = true
        }
        return (hasAccelerometer && hasGyroscope, attitude6D)
    }

    /// The attitude quaternion (device → reference) in ``referenceFrame`` now, predicted ahead by
    /// ``predictionInterval``.
    @inlinable @inline(__always)
    public var quaternion: Quaternion<Double> { quaternion(attitude6D: attitudeEstimator.quaternion6D) }

    /// ``quaternion``, given the estimator's 6D attitude.
    @inlinable @inline(__always)
    func quaternion(attitude6D: Quaternion<Scalar>) -> Quaternion<Double> {
        let unpredicted = unpredictedQuaternion(attitude6D: attitude6D)
        guard predictionInterval > 0 else { return unpredicted }
        // The device keeps turning at its body rate: v_ref = q · exp(ω·δ) · v_device.
        let rate = lastRotationRate - SIMD3<Double>(attitudeEstimator.gyroscopeBias)
        return (unpredicted * Quaternion(rotationVector: rate * predictionInterval)).normalized
    }

    /// The attitude in ``referenceFrame`` at the latest sample, of unit length, given the estimator's 6D attitude:
    /// that attitude, or the 9D one turned by ``frameTurn`` (the frames that use the magnetometer, once it has set the
    /// heading).
    @inlinable @inline(__always)
    func unpredictedQuaternion(attitude6D: Quaternion<Scalar>) -> Quaternion<Double> {
        let turned = switch referenceFrame {
        case .xArbitraryZVertical: false
        case .xArbitraryCorrectedZVertical: attitudeEstimator.hasHeading && correctedFrameOffset != nil
        case .xMagneticNorthZVertical, .xTrueNorthZVertical: true
        }
        let q = turned ? attitudeEstimator.quaternion9D(of: attitude6D, turnedBy: frameTurn) : attitude6D
        // Unit length to rounding already in Double; from Float, scaled to unit length again in Double.
        return Scalar.significandBitCount >= Double.significandBitCount
            ? Quaternion<Double>(q) : Self.unitLength(Quaternion<Double>(q))
    }

    /// `q` scaled to unit length to Double's rounding, for `q` within 10⁻⁵ of it (a Float unit quaternion, which
    /// is within about 10⁻⁶): `1/√(1 + δ) = 1 − δ/2 + 3δ²/8 + O(δ³)` with `δ = |q|² − 1`, whose remainder (below
    /// 3.2·10⁻¹⁶ at δ = 10⁻⁵) is under rounding. No square root or division on the path to the output (they take
    /// longer); farther from unit length, exact normalisation.
    @inlinable @inline(__always)
    static func unitLength(_ q: Quaternion<Double>) -> Quaternion<Double> {
        let delta = q.lengthSquared - 1
        guard abs(delta) < 1e-5 else { return q.normalized }
        let k = 1 + delta * (-0.5 + 0.375 * delta)
        return Quaternion(w: q.w * k, x: q.x * k, y: q.y * k, z: q.z * k)
    }

    /// Writes the device motion at `timestamp`, given the estimator's 6D attitude, into `motion`: in place, also
    /// where the compiler does not inline this (a `DeviceMotion` returned instead is built in a temporary and copied).
    @inlinable @inline(__always)
    mutating func write(into motion: inout DeviceMotion, at timestamp: Double, attitude6D: Quaternion<Scalar>) {
        if referenceFrame == .xArbitraryCorrectedZVertical, correctedFrameOffset == nil, attitudeEstimator.hasHeading {
            correctedFrameOffset = attitudeEstimator.headingCorrection
            frameTurn = Self.frame(referenceFrame, declination: magneticDeclination, offset: correctedFrameOffset)
        }
        let q = quaternion(attitude6D: attitude6D)
        // Gravity in the device frame: minus the third row of q's rotation matrix (device → reference).
        let gravity = SIMD3(2 * (q.w * q.y - q.x * q.z), -2 * (q.y * q.z + q.w * q.x), 2 * (q.x * q.x + q.y * q.y) - 1)
        let hasNorth = referenceFrame == .xMagneticNorthZVertical || referenceFrame == .xTrueNorthZVertical
        motion = DeviceMotion(
            timestamp: timestamp,
            attitude: Attitude(unitQuaternion: q),
            referenceFrame: referenceFrame,
            rotationRate: RotationRate(lastRotationRate - SIMD3<Double>(attitudeEstimator.gyroscopeBias)),
            gravity: Acceleration(gravity),
            userAcceleration: Acceleration(lastAcceleration - gravity),
            magneticField: lastMagneticField,
            headingFromAttitude: hasNorth && attitudeEstimator.hasHeading)
    }

    /// The azimuth of the device's top (+y), clockwise from reference x, in degrees in [0, 360):
    /// `DeviceMotion.heading(of:)`.
    public static func heading(of attitude: Attitude) -> Double {
        DeviceMotion.heading(of: attitude)
    }
}

/// The device-motion filter in `Double`, as `MotionManager` and `motionctl` run it.
public typealias DeviceMotionFilter = DeviceMotionFilterOf<Double>

extension DeviceMotionFilterOf {
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
        public var estimator: AttitudeEstimator<Scalar>
        /// The magnetometer calibration: the fit in use, the candidate, its points and the trust window.
        public var calibrator: MagnetometerCalibrator
        var correctedFrameOffset: Scalar?
        var hasAccelerometer: Bool
        var hasGyroscope: Bool
        var lastAcceleration: SIMD3<Double>
        var lastRotationRate: SIMD3<Double>
        var lastMagneticField: SIMD3<Double>?
        var lastMagneticFieldAccuracy: MagneticFieldCalibrationAccuracy

        /// The gyroscope bias, in rad/s (device frame).
        public var gyroscopeBias: SIMD3<Scalar> { estimator.gyroscopeBias }
        /// The standard deviation of the gyroscope bias estimate (largest over the axes), in rad/s.
        public var gyroscopeBiasUncertainty: Scalar { estimator.gyroscopeBiasUncertainty }
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
        attitudeEstimator = state.estimator
        magnetometerCalibrator = state.calibrator
        correctedFrameOffset = state.correctedFrameOffset
        frameTurn = Self.frame(referenceFrame, declination: magneticDeclination, offset: correctedFrameOffset)
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
        attitudeEstimator.continueCalibration(of: state.estimator)
        magnetometerCalibrator = state.calibrator
        magnetometerCalibrator.forgetTime()
    }
}
