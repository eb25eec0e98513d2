public import MotionCore
public import RealModule

/// Settings of an ``AttitudeEstimator``. Every duration is in seconds and every rate in rad/s.
public struct AttitudeEstimatorConfiguration: Hashable, Sendable, Codable {
    /// Time constant of the low-pass filter applied to the accelerometer in the almost-inertial frame, in s.
    /// Larger values trust the gyroscope longer and reject translational acceleration better.
    public var accelerometerTimeConstant: Double = 3
    /// Time constant of the magnetometer heading correction, in s.
    public var magnetometerTimeConstant: Double = 9
    /// Interval between magnetometer corrections, in s (0 corrects on every reading). The readings, turned into the
    /// 6D earth frame, are averaged over it; the heading correction and the disturbance detection then run once
    /// with their gains for the whole interval, so their time constants in seconds stay as configured. The
    /// interval must be short against the fastest of them: the disturbance detection's low-pass
    /// (``magneticCurrentTimeConstant``, 0.05 s; cutoff 4.5 Hz). At that time constant the average (a boxcar,
    /// −3 dB at 0.44/interval = 8.9 Hz) passes that cutoff, and the low-pass, run at 1/interval = 20 Hz, is still
    /// sampled above twice its cutoff: the detection responds as when it ran on every reading, and the heading's
    /// 9 s and the reference's 20 s are 180 and 400 intervals. An interval of at most this time constant therefore
    /// leaves the magnetometer path's bandwidth unchanged while it runs 5 times less often at 100 Hz (14 times at
    /// 285.7 Hz).
    @usableFromInline package var magnetometerUpdateInterval: Double = 0.05
    /// Estimates the gyroscope bias from the inclination corrections while the device moves.
    public var estimatesBiasInMotion = true
    /// Estimates the gyroscope bias from the mean rotation rate while the device rests.
    public var estimatesBiasAtRest = true
    /// Detects magnetic disturbances (field strength or dip angle off the reference) and stops following the
    /// magnetometer while they last.
    public var rejectsMagneticDisturbances = true

    /// Standard deviation of the bias at start, in rad/s (0.5 °/s).
    @usableFromInline package var initialBiasUncertainty: Double = 0.5 * .pi / 180
    /// Time over which the bias uncertainty grows back to 0.1 °/s without measurements, in s.
    @usableFromInline package var biasForgettingTime: Double = 100
    /// The largest bias the estimator accepts, per axis, in rad/s (2 °/s).
    @usableFromInline package var biasLimit: Double = 2 * .pi / 180
    /// Standard deviation of bias measurements in motion, in rad/s (0.1 °/s).
    @usableFromInline package var biasUncertaintyInMotion: Double = 0.1 * .pi / 180
    /// How much less the vertical bias component is trusted in motion (it is poorly observable), a factor.
    @usableFromInline package var verticalBiasForgettingFactor: Double = 1e-4
    /// Standard deviation of bias measurements at rest, in rad/s (0.03 °/s).
    @usableFromInline package var biasUncertaintyAtRest: Double = 0.03 * .pi / 180
    /// Interval between bias updates, in s: inclination corrections are averaged over it (0 updates on every
    /// accelerometer sample). The bias changes over minutes and its filters' time constant is
    /// ``accelerometerTimeConstant`` (3 s, cutoff 0.075 Hz), which 10 updates a second sample 130 times faster than
    /// its cutoff. On broad-dev every interval from 0.01 s to 0.1 s scores the same to 0.0003° (6D), and 0.05 s and
    /// 0.1 s give the same 9D mean over eight draws (Docs/Attitude.md); updating 10 times a second instead of on
    /// every sample takes about half off the 6D time per sample at 100 Hz.
    @usableFromInline package var biasUpdateInterval: Double = 0.1

    /// Minimum time the device must be still before rest is detected, in s.
    @usableFromInline package var restMinimumDuration: Double = 1.5
    /// Time constant of the low-pass filters of rest detection, in s.
    @usableFromInline package var restFilterTimeConstant: Double = 0.5
    /// Largest deviation of the rotation rate from its low-pass at rest, in rad/s (2 °/s).
    @usableFromInline package var restRotationRateThreshold: Double = 2 * .pi / 180
    /// Largest deviation of the acceleration from its low-pass at rest, in g (0.5 m/s²).
    @usableFromInline package var restAccelerationThreshold: Double = 0.5 / Acceleration.standardGravity

    /// Time constant of the low-pass of the field's strength and dip angle used for disturbance detection, in s.
    @usableFromInline package var magneticCurrentTimeConstant: Double = 0.05
    /// Time constant with which the reference strength and dip follow an undisturbed field, in s.
    @usableFromInline package var magneticReferenceTimeConstant: Double = 20
    /// Relative deviation of the field strength from the reference that counts as a disturbance (0.1 = 10 %).
    @usableFromInline package var magneticStrengthThreshold: Double = 0.1
    /// Deviation of the dip angle from the reference that counts as a disturbance, in rad (10°).
    @usableFromInline package var magneticDipThreshold: Double = 10 * .pi / 180
    /// Time a new, steady field must be seen while moving before it becomes the reference, in s.
    @usableFromInline package var magneticNewFieldTime: Double = 20
    /// As `magneticNewFieldTime` for the first reference, in s.
    @usableFromInline package var magneticNewFieldFirstTime: Double = 5
    /// Rotation rate above which a candidate field counts as seen while moving, in rad/s (20 °/s).
    @usableFromInline package var magneticNewFieldMinimumRotationRate: Double = 20 * .pi / 180
    /// Time the field must agree with the reference before a disturbance is over, in s.
    @usableFromInline package var magneticMinimumUndisturbedTime: Double = 0.5
    /// Longest time the magnetometer is ignored during a disturbance, in s; after it, it is followed slowly.
    @usableFromInline package var magneticMaximumRejectionTime: Double = 60
    /// How much slower the heading follows the magnetometer after a long disturbance, a factor.
    @usableFromInline package var magneticRejectionFactor: Double = 2

    /// Detects gyroscope saturation (readings clipped at the sensor's full-scale range) and recovers from it.
    public var detectsGyroscopeSaturation = true
    /// The gyroscope's full-scale range, in rad/s (±2000 °/s = 34.9, ±1000 °/s = 17.5, ±250 °/s = 4.36): a
    /// reading with an axis at or beyond `(1 − saturationRangeTolerance) ×` this is saturated. `nil` or infinity:
    /// unknown; then an axis pinned at the same magnitude (within `saturationPinnedTolerance`), at least
    /// `saturationMinimumRate` and the largest magnitude seen so far on any axis, on `saturationMinimumSamples`
    /// readings in a row is saturated, from the last of them on. Both tests apply to the device-frame readings.
    public var gyroscopeRange: Double? = nil
    /// Relative margin below ``gyroscopeRange`` that counts as saturated (0.001 = 0.1 %).
    @usableFromInline package var saturationRangeTolerance: Double = 1e-3
    /// Unknown range: relative difference of magnitudes that counts as pinned at the same value (10⁻⁶).
    @usableFromInline package var saturationPinnedTolerance: Double = 1e-6
    /// Unknown range: the smallest magnitude counted as pinned, in rad/s (229 °/s; the smallest common range is
    /// ±250 °/s = 4.36 rad/s).
    @usableFromInline package var saturationMinimumRate: Double = 4
    /// Unknown range: readings in a row pinned at the same magnitude that mean saturation (at least 2). Quantised
    /// readings repeat by chance at the peak of a rotation: broad-dev has runs of 4 at 4.5–5.2 rad/s.
    @usableFromInline package var saturationMinimumSamples: Int = 5
    /// Time after saturation ends during which the accelerometer and magnetometer use the shorter time constants
    /// below, in s.
    @usableFromInline package var saturationRecoveryTime: Double = 2
    /// ``accelerometerTimeConstant`` during the recovery, in s.
    @usableFromInline package var saturationRecoveryAccelerometerTimeConstant: Double = 0.4
    /// ``magnetometerTimeConstant`` during the recovery, in s (the heading follows at least this fast).
    @usableFromInline package var saturationRecoveryMagnetometerTimeConstant: Double = 1

    /// The defaults, documented with each property.
    public init() {}
}

/// Attitude, gyroscope bias and gravity from a gyroscope, an accelerometer and optionally a magnetometer.
///
/// A pure value-type state machine: feed each sample with its timestamp; it reads no clock, does no I/O and
/// allocates nothing. Generic over `Float` and `Double`. Units: rotation rate in rad/s, acceleration in g with
/// Core Motion's sign (as `Acceleration`), magnetic field in any unit (µT by convention), time in s.
///
/// The method (see `Docs/Attitude.md`): the gyroscope is integrated (strapdown) into an almost-inertial frame;
/// the accelerometer, turned into that frame, is low-pass filtered there, which averages out translational
/// acceleration while keeping gravity; the inclination is corrected towards that filtered vertical every sample.
/// The gyroscope bias is estimated by a Kalman filter from the inclination corrections in motion and from the
/// mean rate at rest (rest detection). The magnetometer corrects only the heading, slowly, and is ignored while
/// its strength or dip angle says it is disturbed.
/// Gyroscope readings clipped at the sensor's full-scale range are detected (``isGyroscopeSaturated``); after them
/// the accelerometer and magnetometer are followed faster for a while and the bias is not estimated.
public struct AttitudeEstimator<Scalar: MotionScalar>: Sendable, Codable {
    public typealias Vector = SIMD3<Scalar>

    /// The settings.
    public let configuration: AttitudeEstimatorConfiguration

    // Strapdown integration of the bias-corrected gyroscope: device → almost-inertial frame.
    @usableFromInline var gyroscopeQuaternion = Quaternion<Scalar>.identity
    // Inclination correction: almost-inertial frame → 6D earth frame (z up, x arbitrary).
    @usableFromInline var inclinationQuaternion = Quaternion<Scalar>.identity
    // Heading of the 9D frame (x magnetic north, y west, z up) relative to the 6D frame, rad.
    @usableFromInline var headingOffset: Scalar = 0
    // (cos, sin) of `headingOffset / 2`, computed when the heading is corrected rather than on every output.
    @usableFromInline var headingTurn = SIMD2<Scalar>(1, 0)
    // `attitude6D(inclinationQuaternion, gyroscopeQuaternion)` when `isAttitude6DCurrent`: the accelerometer
    // update computes it while both factors are still in registers, and hands it to the bias and magnetometer
    // updates and to its caller as an argument (read back from memory right after these stores, in other widths, it
    // waited for them to complete); ``quaternion6D`` reuses it.
    @usableFromInline var attitude6D = Quaternion<Scalar>.identity
    @usableFromInline var isAttitude6DCurrent = true

    @usableFromInline var lastTimestamp: Double?
    @usableFromInline var lastAccelerometerTimestamp: Double?
    @usableFromInline var lastMagnetometerTimestamp: Double?

    @usableFromInline var accelerationCoefficients: ButterworthCoefficients<Scalar>
    @usableFromInline var inertialAcceleration = ButterworthLowPass<Vector>()

    // Bias estimation (Kalman filter in rad/s).
    @usableFromInline var bias: Vector = .zero
    @usableFromInline var biasCovariance: SymmetricMatrix3<Scalar>
    // Low-passes of the rotation matrix's columns, each with one component of the earth-frame bias (x, y, 0) as
    // fourth lane.
    @usableFromInline var rotationLowPass0 = ButterworthLowPass<SIMD4<Scalar>>()
    @usableFromInline var rotationLowPass1 = ButterworthLowPass<SIMD4<Scalar>>()
    @usableFromInline var rotationLowPass2 = ButterworthLowPass<SIMD4<Scalar>>()
    @usableFromInline var biasCoefficients: ButterworthCoefficients<Scalar>
    // Inclination corrections (rad, about earth x and y) and time (s) since the last bias update.
    @usableFromInline var pendingCorrection: SIMD2<Scalar> = .zero
    @usableFromInline var pendingTime: Double = 0

    // Rest detection.
    @usableFromInline var restCoefficients: ButterworthCoefficients<Scalar>
    @usableFromInline var restRotationRate = ButterworthLowPass<Vector>()
    @usableFromInline var restAcceleration = ButterworthLowPass<Vector>()
    @usableFromInline var restTime: Double = 0
    @usableFromInline var isRestingState = false

    // Magnetometer.
    @usableFromInline var magneticCoefficients: ButterworthCoefficients<Scalar>
    @usableFromInline var magneticStrengthAndDip = ButterworthLowPass<SIMD2<Scalar>>()
    @usableFromInline var magneticReference: SIMD2<Scalar> = .zero
    @usableFromInline var magneticCandidate: SIMD2<Scalar> = .zero
    @usableFromInline var magneticCandidateTime: Double = 0
    @usableFromInline var magneticUndisturbedTime: Double = 0
    @usableFromInline var magneticRejectionTime: Double = 0
    @usableFromInline var isMagneticallyDisturbedState = false
    @usableFromInline var magneticInitialGain: Scalar = 1
    @usableFromInline var hasMagneticHeading = false
    // The gains `1 − exp(−dt/τ)` of the reference (x) and heading (y) filters for the interval
    // `magneticGainInterval` (s), reused as the filters' coefficients are (`ButterworthCoefficients.differs`).
    @usableFromInline var magneticGains: SIMD2<Scalar> = .zero
    @usableFromInline var magneticGainInterval: Double = -1
    // Magnetometer readings in the 6D earth frame since the last correction: their sum, number and time (s).
    @usableFromInline var magneticSum: Vector = .zero
    @usableFromInline var magneticSumCount: Scalar = 0
    @usableFromInline var magneticSumTime: Double = 0

    // Gyroscope saturation. The level (rad/s) at which a known range saturates, infinity when unknown.
    @usableFromInline let saturationLevel: Scalar
    // Unknown range: the previous reading's magnitudes, and how many readings in a row each axis repeated them.
    @usableFromInline var previousRateMagnitude: Vector = .zero
    @usableFromInline var pinnedReadings: Vector = .zero
    @usableFromInline var largestRateMagnitude: Scalar = 0
    @usableFromInline var isGyroscopeSaturatedState = false
    @usableFromInline var ignoredReadings = 0
    @usableFromInline var saturatedReadings = 0
    // Time left of the fast recovery, and of the bias freeze, in s.
    @usableFromInline var recoveryTimeLeft: Double = 0
    @usableFromInline var biasFreezeTimeLeft: Double = 0
    @usableFromInline var recoveryCoefficients: ButterworthCoefficients<Scalar>
    // The latest output of the accelerometer's filter (inertial frame), to restart it without a jump.
    @usableFromInline var filteredSpecificForce: Vector = .zero

    /// Creates an estimator at the identity attitude with zero bias.
    public init(configuration: AttitudeEstimatorConfiguration = .init()) {
        self.configuration = configuration
        accelerationCoefficients = ButterworthCoefficients(tau: configuration.accelerometerTimeConstant)
        biasCoefficients = ButterworthCoefficients(tau: configuration.accelerometerTimeConstant)
        restCoefficients = ButterworthCoefficients(tau: configuration.restFilterTimeConstant)
        magneticCoefficients = ButterworthCoefficients(tau: configuration.magneticCurrentTimeConstant)
        recoveryCoefficients = ButterworthCoefficients(tau: configuration.saturationRecoveryAccelerometerTimeConstant)
        let range = configuration.gyroscopeRange ?? .infinity
        saturationLevel = range.isFinite && range > 0
            ? Scalar(range * (1 - configuration.saturationRangeTolerance)) : .infinity
        biasCovariance = SymmetricMatrix3(
            diagonal: Scalar(configuration.initialBiasUncertainty * configuration.initialBiasUncertainty))
    }

    /// Takes `other`'s gyroscope bias and its covariance (what a previous session learned about the device); the
    /// attitude, rest detection and magnetic reference stay as they are.
    public mutating func continueCalibration(of other: AttitudeEstimator) {
        bias = other.bias
        biasCovariance = other.biasCovariance
    }

    // MARK: Outputs
    // Always inlined: the estimator is a large value, and a call on it can copy it whole.

    /// Device → 6D earth frame (z up, x arbitrary but fixed): the `xArbitraryZVertical` attitude.
    @inlinable @inline(__always)
    public var quaternion6D: Quaternion<Scalar> { quaternion6D(gyroscope: gyroscopeQuaternion) }

    /// Device → north–west–up frame (x magnetic north): the `xMagneticNorthZVertical` attitude. Equal to the 6D
    /// attitude turned about the vertical by ``headingCorrection``.
    @inlinable @inline(__always)
    public var quaternion9D: Quaternion<Scalar> { quaternion9D(turnedBy: SIMD2(1, 0)) }

    /// ``quaternion9D`` turned further about the vertical by the turn `(cos, sin)` of half its angle (unit length).
    @inlinable @inline(__always)
    func quaternion9D(turnedBy turn: SIMD2<Scalar>) -> Quaternion<Scalar> {
        quaternion9D(of: quaternion6D, turnedBy: turn)
    }

    /// ``quaternion9D(turnedBy:)`` given ``quaternion6D``, `q`.
    @inlinable @inline(__always)
    func quaternion9D(of q: Quaternion<Scalar>, turnedBy turn: SIMD2<Scalar>) -> Quaternion<Scalar> {
        // Turns about the same axis compose as complex numbers: (cos, sin) of the half angles multiply. A turn
        // (c, 0, 0, s) times q: both factors are of unit length to rounding, so the product is too, and it is not
        // scaled again (a Newton step here changed the output by rounding only).
        let (c, s) = (headingTurn.x, headingTurn.y)
        let (tc, ts) = (c * turn.x - s * turn.y, c * turn.y + s * turn.x)
        return Quaternion(
            w: tc * q.w - ts * q.z, x: tc * q.x - ts * q.y, y: tc * q.y + ts * q.x, z: tc * q.z + ts * q.w)
    }

    /// The rotation about the vertical from the 6D frame to the magnetic-north frame, in rad.
    @inlinable @inline(__always)
    public var headingCorrection: Scalar { headingOffset }

    /// The estimated gyroscope bias in the device frame, in rad/s.
    @inlinable @inline(__always)
    public var gyroscopeBias: Vector { bias }

    /// The standard deviation of the bias estimate (largest over the axes), in rad/s.
    @inlinable @inline(__always)
    public var gyroscopeBiasUncertainty: Scalar {
        biasCovariance.largestDiagonal.squareRoot()
    }

    /// `true` while the device is detected at rest.
    @inlinable @inline(__always)
    public var isResting: Bool { isRestingState }

    /// `true` while the magnetic field is judged disturbed (and the magnetometer is not followed).
    @inlinable @inline(__always)
    public var isMagneticallyDisturbed: Bool { isMagneticallyDisturbedState }

    /// `true` once the magnetometer has set the heading.
    @inlinable @inline(__always)
    public var hasHeading: Bool { hasMagneticHeading }

    /// `true` while the latest gyroscope reading is saturated (clipped at the full-scale range; see
    /// ``AttitudeEstimatorConfiguration/gyroscopeRange``). The bias is not estimated meanwhile.
    @inlinable @inline(__always)
    public var isGyroscopeSaturated: Bool { isGyroscopeSaturatedState }

    /// The number of readings ignored so far: NaN or infinite components, zero acceleration or field, non-finite
    /// timestamps.
    @inlinable @inline(__always)
    public var ignoredReadingCount: Int { ignoredReadings }

    /// The number of saturated gyroscope readings so far.
    @inlinable @inline(__always)
    public var gyroscopeSaturationCount: Int { saturatedReadings }

    /// `true` during the recovery after saturation: the inclination and heading follow the accelerometer and
    /// magnetometer with the shorter time constants of the configuration, and the bias is not estimated.
    @inlinable @inline(__always)
    public var isRecoveringFromSaturation: Bool { recoveryTimeLeft > 0 }

    // MARK: Update

    /// Processes one instant.
    /// - Parameters:
    ///   - rotationRate: The gyroscope reading in rad/s (device frame), or `nil` when the gyroscope did not sample.
    ///   - acceleration: The accelerometer reading in g with Core Motion's sign, or `nil`.
    ///   - magneticField: The magnetometer reading (µT), or `nil`.
    ///   - timestamp: Seconds; the gyroscope is integrated over the interval since the previous gyroscope
    ///     sample (intervals over 1 s are taken as 1 s; a first or non-positive interval integrates nothing).
    ///
    /// A reading with a NaN or infinite component, a zero acceleration or field, or a non-finite timestamp is
    /// ignored, as if the sensor had not sampled (counted in ``ignoredReadingCount``): one bad reading never
    /// poisons the state.
    ///
    /// Always inlined: it only hands the readings to the sensors' updates, which are calls, and a call to it, with
    /// three optional vectors, cost more than its body (about 80 instructions a sample in device motion).
    @inlinable @inline(__always)
    public mutating func update(
        rotationRate: Vector?, acceleration: Vector?, magneticField: Vector? = nil, at timestamp: Double
    ) {
        _ = attitude6DAfterUpdate(
            rotationRate: rotationRate, acceleration: acceleration, magneticField: magneticField, at: timestamp)
    }

    /// ``update(rotationRate:acceleration:magneticField:at:)``, returning ``quaternion6D`` after it when the update
    /// computed it (an accelerometer or magnetometer reading), else `nil`: for a caller that reads the attitude next.
    /// Read back from memory right after its store, it waited for the store to complete.
    ///
    /// The readings may be in another precision, `Input`, and are converted once unwrapped: a converted optional
    /// `SIMD3<Float>` went through general-purpose registers (about 3 ns a sample in device motion).
    @inlinable @inline(__always)
    package mutating func attitude6DAfterUpdate<Input: MotionScalar>(
        rotationRate: SIMD3<Input>?, acceleration: SIMD3<Input>?, magneticField: SIMD3<Input>?, at timestamp: Double
    ) -> Quaternion<Scalar>? {
        guard timestamp.isFinite else {
            ignoredReadings += (rotationRate == nil ? 0 : 1) + (acceleration == nil ? 0 : 1) + (magneticField == nil ? 0 : 1)
            return nil
        }
        // The gyroscope update's attitude goes to the accelerometer update in registers: read back from memory right
        // after its store (made in other widths), it waited for the store to complete.
        var integrated: Quaternion<Scalar>?
        if let input = rotationRate {
            let rotationRate = Vector(input)
            if (rotationRate * rotationRate).sum().isFinite {
                integrated = updateGyroscope(rotationRate, at: timestamp)
            } else {
                ignoredReadings += 1
            }
        }
        // Likewise the 6D attitude to the magnetometer update.
        let attitude = acceleration.map {
            updateAccelerometer(Vector($0), at: timestamp, gyroscope: integrated ?? gyroscopeQuaternion)
        }
        guard let magneticField else { return attitude }
        let current = attitude ?? currentAttitude6D()
        updateMagnetometer(Vector(magneticField), at: timestamp, attitude6D: current)
        return current
    }

    /// ``quaternion6D``, kept for the outputs read after this update (device motion reads it in every frame).
    @inlinable @inline(__always)
    mutating func currentAttitude6D() -> Quaternion<Scalar> {
        let attitude = quaternion6D
        attitude6D = attitude
        isAttitude6DCurrent = true
        return attitude
    }

    /// Integrates `omega`; returns ``gyroscopeQuaternion`` after it.
    @inlinable @discardableResult
    mutating func updateGyroscope(_ omega: Vector, at timestamp: Double) -> Quaternion<Scalar> {
        let dt = Self.interval(since: lastTimestamp, to: timestamp)
        lastTimestamp = timestamp
        if configuration.detectsGyroscopeSaturation { detectSaturation(omega) }
        guard dt > 0 else { return gyroscopeQuaternion }

        if configuration.estimatesBiasAtRest {
            restCoefficients.update(interval: dt)
            let mean = restRotationRate.update(omega, interval: dt, coefficients: restCoefficients)
            let deviation = omega - mean
            let threshold = Scalar(configuration.restRotationRateThreshold)
            let limit = Scalar(configuration.biasLimit)
            // The mean beyond the bias limit on any axis: max(−min, max) > limit, without SIMD's NaN-aware min and max.
            if (deviation * deviation).sum() >= threshold * threshold
                || mean.x.magnitude > limit || mean.y.magnitude > limit || mean.z.magnitude > limit {
                restTime = 0
                isRestingState = false
            }
        }

        let step = Self.exponential((omega - bias) * Scalar(dt))
        let integrated = Self.renormalized(gyroscopeQuaternion * step)
        gyroscopeQuaternion = integrated
        isAttitude6DCurrent = false
        return integrated
    }

    /// Marks saturated readings; when saturation ends, starts the recovery. The common case (no axis near either
    /// limit) is inlined into the gyroscope update; the rest is not.
    @inlinable @inline(__always)
    mutating func detectSaturation(_ omega: Vector) {
        let magnitude = Vector(omega.x.magnitude, omega.y.magnitude, omega.z.magnitude)
        let top = Swift.max(magnitude.x, magnitude.y, magnitude.z)
        guard top < saturationLevel && top < Scalar(configuration.saturationMinimumRate) else {
            detectSaturation(magnitude: magnitude, top: top)
            return
        }
        // No axis near either limit, so nothing is pinned (the general check gives the same state) and the
        // reading is not saturated.
        if top > largestRateMagnitude { largestRateMagnitude = top }
        previousRateMagnitude = magnitude
        pinnedReadings = .zero
        if isGyroscopeSaturatedState { endSaturation() }
    }

    /// ``detectSaturation(_:)`` for a reading with an axis at or above the known range's level or the smallest
    /// rate counted as pinned, given its per-axis magnitudes and their largest.
    @inlinable @inline(never)
    mutating func detectSaturation(magnitude: Vector, top: Scalar) {
        let saturated: Bool
        if saturationLevel.isFinite {
            saturated = magnitude.x >= saturationLevel || magnitude.y >= saturationLevel
                || magnitude.z >= saturationLevel
        } else {
            // Axis by axis in scalars: SIMD3's comparison masks and reductions compile to slow code on Linux, and
            // this runs on every reading above `saturationMinimumRate` (much of a fast turn).
            let minimum = Scalar(configuration.saturationMinimumRate)
            let relativeTolerance = Scalar(configuration.saturationPinnedTolerance)
            let needed = Scalar(configuration.saturationMinimumSamples - 1)
            let largest = largestRateMagnitude
            // The axis's run of pinned readings after this one, and whether it is saturated.
            @inline(__always) func pinnedRun(_ magnitude: Scalar, previous: Scalar, run: Scalar) -> (Scalar, Bool) {
                let tolerance = magnitude * relativeTolerance
                let difference = magnitude - previous
                let pinned = magnitude >= minimum && magnitude >= largest - tolerance
                    && difference <= tolerance && difference >= -tolerance
                let count = pinned ? Swift.min(run + 1, needed) : 0
                return (count, pinned && count >= needed)
            }
            let (x, saturatedX) = pinnedRun(magnitude.x, previous: previousRateMagnitude.x, run: pinnedReadings.x)
            let (y, saturatedY) = pinnedRun(magnitude.y, previous: previousRateMagnitude.y, run: pinnedReadings.y)
            let (z, saturatedZ) = pinnedRun(magnitude.z, previous: previousRateMagnitude.z, run: pinnedReadings.z)
            if top > largestRateMagnitude { largestRateMagnitude = top }
            pinnedReadings = Vector(x, y, z)
            previousRateMagnitude = magnitude
            saturated = saturatedX || saturatedY || saturatedZ
        }
        if saturated {
            isGyroscopeSaturatedState = true
            saturatedReadings += 1
            recoveryTimeLeft = 0
            biasFreezeTimeLeft = configuration.saturationRecoveryTime + configuration.accelerometerTimeConstant
        } else if isGyroscopeSaturatedState {
            endSaturation()
        }
    }

    /// The first unsaturated reading after saturated ones: starts the recovery (shorter time constants, the
    /// accelerometer's filter restarted at its latest output).
    @inlinable @inline(never)
    mutating func endSaturation() {
        isGyroscopeSaturatedState = false
        recoveryTimeLeft = configuration.saturationRecoveryTime
        if recoveryTimeLeft > 0, accelerationCoefficients.interval > 0 {
            recoveryCoefficients.update(interval: accelerationCoefficients.interval)
            inertialAcceleration.restart(at: filteredSpecificForce, coefficients: recoveryCoefficients)
        }
    }

    /// The unit quaternion of the rotation vector `v` (radians): `exp(v/2)`. Below 0.3 rad (30 rad/s at 100 Hz) the
    /// series `cos(θ/2) = 1 − θ²/8 + θ⁴/384 − θ⁶/46 080 + θ⁸/10 321 920` and `sin(θ/2)/θ = 1/2 − θ²/48 + θ⁴/3 840 −
    /// θ⁶/645 120 + θ⁸/185 794 560` are exact to 2·10⁻¹⁵, with no sin, cos or square root: a fast turn sampled at
    /// 100 Hz stays on this path (a branch that a turn crosses back and forth is mispredicted, and the C library's
    /// sine and cosine cost more than the series).
    @inlinable @inline(__always)
    static func exponential(_ v: Vector) -> Quaternion<Scalar> {
        let u = (v * v).sum()
        if u < Scalar(0.09) {
            // Products by the reciprocals: a division by a constant that is not a power of two stays a division.
            let u2 = u * u
            let w = 1 - u * Scalar(0.125) + u2 * (Scalar(1.0 / 384) - u * Scalar(1.0 / 46_080)
                + u2 * Scalar(1.0 / 10_321_920))
            let s = Scalar(0.5) - u * Scalar(1.0 / 48) + u2 * (Scalar(1.0 / 3_840) - u * Scalar(1.0 / 645_120)
                + u2 * Scalar(1.0 / 185_794_560))
            return Quaternion(w: w, x: v.x * s, y: v.y * s, z: v.z * s)
        }
        return Quaternion(rotationVector: v)
    }

    /// `q` scaled back to unit length; `q` must be close to unit length already (as after one small rotation),
    /// so one Newton step `q·(3 − |q|²)/2` does, with no square root. Falls back to exact normalisation otherwise.
    @inlinable @inline(__always)
    static func renormalized(_ q: Quaternion<Scalar>) -> Quaternion<Scalar> {
        let n2 = q.lengthSquared
        guard abs(n2 - 1) < Scalar(1e-3) else { return q.normalized }
        let k = (3 - n2) / 2
        return Quaternion(w: q.w * k, x: q.x * k, y: q.y * k, z: q.z * k)
    }

    /// `gyroscope`: ``gyroscopeQuaternion`` as the caller has it. Returns ``quaternion6D`` after the update.
    @inlinable @discardableResult
    mutating func updateAccelerometer(
        _ acceleration: Vector, at timestamp: Double, gyroscope: Quaternion<Scalar>
    ) -> Quaternion<Scalar> {
        let specificForce = -acceleration
        let squaredNorm = (specificForce * specificForce).sum()
        guard squaredNorm > 0 && squaredNorm.isFinite else {
            ignoredReadings += 1
            return quaternion6D(gyroscope: gyroscope)
        }
        let first = lastAccelerometerTimestamp == nil
        let dt = first ? 0 : Self.interval(since: lastAccelerometerTimestamp, to: timestamp)
        lastAccelerometerTimestamp = timestamp
        if first {
            // Start level: align the vertical with the first reading.
            inclinationQuaternion = Self.correction(towardsUp: gyroscope.act(on: specificForce).normalizedOrZ)
            isAttitude6DCurrent = false
            return quaternion6D(gyroscope: gyroscope)
        }
        guard dt > 0 else { return quaternion6D(gyroscope: gyroscope) }

        if configuration.estimatesBiasAtRest {
            restCoefficients.update(interval: dt)
            let mean = restAcceleration.filter(specificForce, interval: dt, coefficients: restCoefficients)
            let deviation = specificForce - mean
            let threshold = Scalar(configuration.restAccelerationThreshold)
            if (deviation * deviation).sum() >= threshold * threshold {
                restTime = 0
                isRestingState = false
            } else {
                restTime += dt
                if restTime >= configuration.restMinimumDuration { isRestingState = true }
            }
        }

        let inertial = gyroscope.act(on: specificForce)
        let filtered: Vector
        if recoveryTimeLeft > 0 {
            // Recovering from gyroscope saturation: the shorter time constant, then back without a jump.
            recoveryCoefficients.update(interval: dt)
            filtered = inertialAcceleration.filter(inertial, interval: dt, coefficients: recoveryCoefficients)
            recoveryTimeLeft -= dt
            if recoveryTimeLeft <= 0 {
                accelerationCoefficients.update(interval: dt)
                inertialAcceleration.restart(at: filtered, coefficients: accelerationCoefficients)
            }
        } else {
            accelerationCoefficients.update(interval: dt)
            filtered = inertialAcceleration.filter(inertial, interval: dt, coefficients: accelerationCoefficients)
        }
        filteredSpecificForce = filtered
        if biasFreezeTimeLeft > 0 && !isGyroscopeSaturatedState { biasFreezeTimeLeft -= dt }
        let up = inclinationQuaternion.act(on: filtered)
        // One length for the correction and for the direction the bias estimate takes.
        let length = (up * up).sum().squareRoot()
        let earth = up.normalizedOrZ(length: length)
        inclinationQuaternion = Self.corrected(inclinationQuaternion, towardsUp: up, length: length)
        let attitude = Self.attitude6D(inclinationQuaternion, gyroscope)
        attitude6D = attitude
        isAttitude6DCurrent = true

        if configuration.estimatesBiasInMotion || configuration.estimatesBiasAtRest {
            pendingCorrection += SIMD2(-earth.y, earth.x)
            pendingTime += dt
            if pendingTime >= configuration.biasUpdateInterval * (1 - 1e-6) {
                updateBias(correction: pendingCorrection, interval: pendingTime, attitude6D: attitude)
                pendingCorrection = .zero
                pendingTime = 0
            }
        }
        return attitude
    }

    /// The 6D attitude from the inclination and gyroscope quaternions: their product, renormalised in `Double`. In
    /// `Float` it is left as it is, of unit length to Float's rounding (the product of two unit quaternions): the
    /// device-motion filter scales its output to unit length in `Double`, and a step here as well only lengthened the
    /// chain of operations from each reading to the output (about 5 ns a sample).
    @inlinable @inline(__always)
    static func attitude6D(_ inclination: Quaternion<Scalar>, _ gyroscope: Quaternion<Scalar>) -> Quaternion<Scalar> {
        let product = inclination * gyroscope
        return Scalar.significandBitCount >= Double.significandBitCount ? renormalized(product) : product
    }

    /// ``quaternion6D``, given ``gyroscopeQuaternion`` as the caller has it.
    @inlinable @inline(__always)
    func quaternion6D(gyroscope: Quaternion<Scalar>) -> Quaternion<Scalar> {
        isAttitude6DCurrent ? attitude6D : Self.attitude6D(inclinationQuaternion, gyroscope)
    }

    /// The smallest rotation that turns the unit vector `v` to (0, 0, 1).
    @inlinable
    static func correction(towardsUp v: Vector) -> Quaternion<Scalar> {
        let w = ((v.z + 1) / 2).squareRoot()
        guard w > Scalar(1e-6) else { return Quaternion(w: 0, x: 1, y: 0, z: 0) }
        return Quaternion(w: w, x: v.y / (2 * w), y: -v.x / (2 * w), z: 0)
    }

    /// `correction(towardsUp: u/|u|) * q`, normalized, for any non-zero `u` of length `n`, with fewer square roots
    /// and divisions on the path from `q` to the result (the inclination update runs on every sample): the correction
    /// is `(|u| + u.z, u.y, −u.x, 0)` unscaled, and the product is scaled once by `1/(|correction|·|q|)`, its length
    /// from its factors' lengths. The products by the zero z component are left out.
    @inlinable @inline(__always)
    static func corrected(_ q: Quaternion<Scalar>, towardsUp u: Vector, length n: Scalar) -> Quaternion<Scalar> {
        guard n > 0 else { return renormalized(q) }  // no direction: no correction
        let w = n + u.z
        // As in `correction(towardsUp:)`: when √((1 + u.z/|u|)/2) ≤ 10⁻⁶ (u within about 2·10⁻⁶ rad of straight
        // down), the half turn about x.
        guard w > 2e-12 * n else { return (Quaternion(w: 0, x: 1, y: 0, z: 0) * q).normalized }
        let (x, y) = (u.y, -u.x)
        // |a·b| = |a|·|b|: the product's length from its factors', computed beside the product, not after it.
        let squaredLength = (w * w + x * x + y * y) * q.lengthSquared
        // Beyond about 6.7·10¹⁵³ (in Float 9.2·10¹⁸) the squares overflow: the correction scaled by 1/|u| first.
        guard squaredLength.isFinite else { return (Quaternion(w: w / n, x: x / n, y: y / n, z: 0) * q).normalized }
        let scale = 1 / squaredLength.squareRoot()
        return Quaternion(
            w: (w * q.w - x * q.x - y * q.y) * scale,
            x: (w * q.x + x * q.w + y * q.z) * scale,
            y: (w * q.y - x * q.z + y * q.w) * scale,
            z: (w * q.z + x * q.y - y * q.x) * scale)
    }

    /// One Kalman update of the bias from the inclination corrections applied over the last `dt` seconds, at the
    /// 6D attitude `attitude`.
    @inlinable
    mutating func updateBias(correction: SIMD2<Scalar>, interval dt: Double, attitude6D attitude: Quaternion<Scalar>) {
        biasCoefficients.update(interval: dt)
        let limit = Scalar(configuration.biasLimit)
        let m = attitude.rotationMatrix
        // Low-pass the rotation matrix and the earth-frame bias (x, y) with the accelerometer's filter, so that
        // the bias model sees the same delay as the inclination corrections. Column-wise: column j of the matrix
        // with the j-th component of R·bias.
        let r0 = SIMD3(m.m11, m.m21, m.m31), r1 = SIMD3(m.m12, m.m22, m.m32), r2 = SIMD3(m.m13, m.m23, m.m33)
        let earthBias = r0 * bias.x + r1 * bias.y + r2 * bias.z
        let f0 = rotationLowPass0.filter(SIMD4(r0, earthBias.x), interval: dt, coefficients: biasCoefficients)
        let f1 = rotationLowPass1.filter(SIMD4(r1, earthBias.y), interval: dt, coefficients: biasCoefficients)
        let f2 = rotationLowPass2.filter(SIMD4(r2, 0), interval: dt, coefficients: biasCoefficients)

        // Process noise: the variance grows back to (0.1 °/s)² over the forgetting time.
        let v = Scalar((0.1 * Double.pi / 180) * (0.1 * Double.pi / 180) * dt / configuration.biasForgettingTime)
        let p0 = Scalar(configuration.initialBiasUncertainty * configuration.initialBiasUncertainty)
        if biasCovariance.xx < p0 {
            biasCovariance.addDiagonal(v)
        }
        // No bias measurements during and shortly after gyroscope saturation: the corrections then come from the
        // clipped rotation, not from the bias.
        guard biasFreezeTimeLeft <= 0 else { return }

        // The measurement matrix H by columns.
        let h0: Vector, h1: Vector, h2: Vector
        var e: Vector
        var w: Vector
        if isRestingState && configuration.estimatesBiasAtRest {
            e = restRotationRate.output - bias
            (h0, h1, h2) = (Vector(1, 0, 0), Vector(0, 1, 0), Vector(0, 0, 1))
            let p = Scalar(configuration.biasUncertaintyAtRest * configuration.biasUncertaintyAtRest)
            w = Vector(repeating: p * p / v + p)
        } else if configuration.estimatesBiasInMotion {
            let rate = Scalar(1 / dt)
            (h0, h1, h2) = (Vector(f0.x, f0.y, f0.z), Vector(f1.x, f1.y, f1.z), Vector(f2.x, f2.y, f2.z))
            let predicted = h0 * bias.x + h1 * bias.y + h2 * bias.z
            e = Vector(
                correction.x * rate + f0.w - predicted.x,
                correction.y * rate + f1.w - predicted.y,
                -predicted.z)
            let p = Scalar(configuration.biasUncertaintyInMotion * configuration.biasUncertaintyInMotion)
            let horizontal = p * p / v + p
            w = Vector(horizontal, horizontal, horizontal / Scalar(max(configuration.verticalBiasForgettingFactor, 1e-10)))
        } else {
            return
        }
        e = Self.clamped(e, limit: limit)
        guard let change = biasCovariance.kalmanUpdate(columns: h0, h1, h2, innovation: e, noise: w) else { return }
        bias += change
        bias = Self.clamped(bias, limit: limit)
    }

    /// `attitude`: ``quaternion6D`` as the caller has it.
    @inlinable
    mutating func updateMagnetometer(_ field: Vector, at timestamp: Double, attitude6D attitude: Quaternion<Scalar>) {
        let squaredNorm = (field * field).sum()
        guard squaredNorm > 0 && squaredNorm.isFinite else {
            ignoredReadings += 1
            return
        }
        let first = lastMagnetometerTimestamp == nil
        let dt = first ? 0 : Self.interval(since: lastMagnetometerTimestamp, to: timestamp)
        lastMagnetometerTimestamp = timestamp
        guard first || dt > 0 else { return }
        let reading = attitude.act(on: field)
        if first {
            correctHeading(towards: reading, interval: 0, first: true)
            return
        }
        // Averaged over `magnetometerUpdateInterval`, then one correction for the whole interval.
        magneticSum += reading
        magneticSumCount += 1
        magneticSumTime += dt
        guard magneticSumTime >= configuration.magnetometerUpdateInterval * (1 - 1e-6) else { return }
        let earth = magneticSum / magneticSumCount
        let interval = magneticSumTime
        magneticSum = .zero
        magneticSumCount = 0
        magneticSumTime = 0
        correctHeading(towards: earth, interval: interval, first: false)
    }

    /// The disturbance detection and the heading correction from `earth`, the field (or its mean over `dt`
    /// seconds) in the 6D earth frame. Not inlined: it runs once per interval, not on every reading.
    @inlinable @inline(never)
    mutating func correctHeading(towards earth: Vector, interval dt: Double, first: Bool) {
        if !first && ButterworthCoefficients<Scalar>.differs(dt, from: magneticGainInterval) {
            magneticGainInterval = dt
            magneticGains = SIMD2(
                Scalar(-Double.expMinusOne(-dt / configuration.magneticReferenceTimeConstant)),
                Scalar(-Double.expMinusOne(-dt / configuration.magnetometerTimeConstant)))
        }

        if configuration.rejectsMagneticDisturbances && !first {
            let strength = (earth * earth).sum().squareRoot()
            let dip = -PolynomialTrigonometry<Scalar>.arcsine(earth.z / strength)
            magneticCoefficients.update(interval: dt)
            let current = magneticStrengthAndDip.update(SIMD2(strength, dip), interval: dt, coefficients: magneticCoefficients)
            let referenceGain = magneticGains.x
            let strengthThreshold = Scalar(configuration.magneticStrengthThreshold)
            let dipThreshold = Scalar(configuration.magneticDipThreshold)

            func agrees(_ a: SIMD2<Scalar>, _ reference: SIMD2<Scalar>) -> Bool {
                abs(a.x - reference.x) < strengthThreshold * reference.x && abs(a.y - reference.y) < dipThreshold
            }

            if agrees(current, magneticReference) {
                magneticUndisturbedTime += dt
                if magneticUndisturbedTime >= configuration.magneticMinimumUndisturbedTime {
                    isMagneticallyDisturbedState = false
                    magneticReference += referenceGain * (current - magneticReference)
                }
            } else {
                magneticUndisturbedTime = 0
                isMagneticallyDisturbedState = true
            }

            // Accept a new, steady field as the reference after enough time in motion.
            if agrees(current, magneticCandidate) {
                let rate = restRotationRate.output
                let minimum = Scalar(configuration.magneticNewFieldMinimumRotationRate)
                if (rate * rate).sum() >= minimum * minimum {
                    magneticCandidateTime += dt
                }
                magneticCandidate += referenceGain * (current - magneticCandidate)
                let needed = magneticReference.x == 0 ? configuration.magneticNewFieldFirstTime : configuration.magneticNewFieldTime
                if isMagneticallyDisturbedState && magneticCandidateTime >= needed {
                    magneticReference = magneticCandidate
                    isMagneticallyDisturbedState = false
                    magneticUndisturbedTime = configuration.magneticMinimumUndisturbedTime
                }
            } else {
                magneticCandidateTime = 0
                magneticCandidate = current
            }
        }

        // Heading disagreement: the angle of the horizontal field in the 9D frame (0 when it points along x).
        var disagreement = PolynomialTrigonometry<Scalar>.arctangent(y: earth.y, x: earth.x) + headingOffset
        disagreement = Self.wrapped(disagreement)
        var gain = first ? 1 : magneticGains.y
        if recoveryTimeLeft > 0 && !first {
            gain = max(gain, Scalar(-Double.expMinusOne(-dt / configuration.saturationRecoveryMagnetometerTimeConstant)))
        }
        if configuration.rejectsMagneticDisturbances && !first {
            if isMagneticallyDisturbedState {
                if magneticRejectionTime <= configuration.magneticMaximumRejectionTime {
                    magneticRejectionTime += dt
                    gain = 0
                } else {
                    gain /= Scalar(configuration.magneticRejectionFactor)
                }
            } else {
                magneticRejectionTime = max(magneticRejectionTime - configuration.magneticRejectionFactor * dt, 0)
            }
        }
        // Converge fast at start: the gain is at least 1/n for the n-th correction (a running mean of the readings
        // averaged so far) until it falls below the filter's own gain.
        if magneticInitialGain > 0 {
            gain = max(gain, magneticInitialGain)
            magneticInitialGain = magneticInitialGain / (magneticInitialGain + 1)
            if magneticInitialGain * Scalar(configuration.magnetometerTimeConstant) < Scalar(dt) { magneticInitialGain = 0 }
        }
        headingOffset = Self.wrapped(headingOffset - gain * disagreement)
        let (c, s) = PolynomialTrigonometry<Scalar>.cosineSine(headingOffset / 2)
        headingTurn = SIMD2(c, s)
        hasMagneticHeading = true
    }

    /// `v` with each component limited to [−limit, limit].
    @inlinable @inline(__always)
    static func clamped(_ v: Vector, limit: Scalar) -> Vector {
        Vector(min(max(v.x, -limit), limit), min(max(v.y, -limit), limit), min(max(v.z, -limit), limit))
    }

    @inlinable
    static func wrapped(_ angle: Scalar) -> Scalar {
        var a = angle
        if a > .pi { a -= 2 * .pi } else if a < -.pi { a += 2 * .pi }
        return a
    }

    @inlinable
    static func interval(since last: Double?, to timestamp: Double) -> Double {
        guard let last else { return 0 }
        return min(timestamp - last, 1)
    }
}

extension SIMD3 where Scalar: MotionScalar {
    /// The unit vector in this direction, or (0, 0, 1) for the zero vector.
    @inlinable
    var normalizedOrZ: SIMD3<Scalar> { normalizedOrZ(length: (self * self).sum().squareRoot()) }

    /// ``normalizedOrZ`` given this vector's length `n`, for a caller that needs the length too.
    @inlinable @inline(__always)
    func normalizedOrZ(length n: Scalar) -> SIMD3<Scalar> { n > 0 ? self / n : SIMD3(0, 0, 1) }
}
