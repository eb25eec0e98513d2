import MotionCore

/// A value of a ``DeviceMotionFilterOf/State`` that no filter can hold: its field (a path such as
/// `estimator.bias.x`), the value, and the rule it breaks.
package struct StateProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package var field: String
    package var value: String
    package var rule: String

    package var description: String { "\(field) is \(value): \(rule)" }
}

extension DeviceMotionFilterOf.State {
    /// Checks every field of the state by its meaning, as a state read from a file (another process wrote it) must
    /// be before a filter takes it: finite numbers, in their ranges, quaternions of unit length, counts and indices
    /// within their arrays. Array lengths are checked by the decoder (a `SIMD3` takes exactly three numbers).
    ///
    /// Infinities and NaNs are allowed only where the filter itself puts them, each meaning "not yet" or "none":
    /// - `estimator.saturationLevel`, `estimator.configuration.gyroscopeRange`: +∞, the range is unknown;
    /// - `calibrator.fittedResidual`: +∞ before the first fit; `calibrator.undisturbedTime`: +∞ after a restart;
    /// - `calibrator.lastFitTimestamp`, `calibrator.lastCheckTimestamp`: −∞, never;
    /// - `calibrator.lastKept`: +∞ on every axis, no reading kept yet;
    /// - `calibrator.lastRawSpread`, `calibrator.lastAppliedSpread`: NaN before the first trust check, +∞ for a window
    ///   of zero median strength (they are reported, never computed with).
    ///
    /// Every state a filter produces from any samples passes (the filter ignores non-finite readings and clamps
    /// the bias); a state that fails was damaged or forged.
    /// - Throws: the first ``StateProblem`` found.
    package func validate() throws(StateProblem) {
        var check = StateCheck()
        check.finite("magneticDeclination", magneticDeclination)
        check.finite("predictionInterval", predictionInterval, atLeast: 0)
        if let offset = correctedFrameOffset { check.finite("correctedFrameOffset", Double(offset)) }
        check.finite("lastAcceleration", lastAcceleration)
        check.finite("lastRotationRate", lastRotationRate)
        if let field = lastMagneticField { check.finite("lastMagneticField", field) }
        if let problem = check.problem { throw problem }
        try estimator.validate(check, prefix: "estimator.")
        try calibrator.validate(check, prefix: "calibrator.")
    }
}

extension AttitudeEstimator {
    func validate(_ check: StateCheck, prefix: String) throws(StateProblem) {
        var check = check
        let c = configuration
        check.prefix = prefix + "configuration."
        check.finite("accelerometerTimeConstant", c.accelerometerTimeConstant, above: 0)
        check.finite("magnetometerTimeConstant", c.magnetometerTimeConstant, above: 0)
        check.finite("magnetometerUpdateInterval", c.magnetometerUpdateInterval, atLeast: 0)
        check.finite("initialBiasUncertainty", c.initialBiasUncertainty, atLeast: 0)
        check.finite("biasForgettingTime", c.biasForgettingTime, above: 0)
        check.finite("biasLimit", c.biasLimit, atLeast: 0)
        check.finite("biasUncertaintyInMotion", c.biasUncertaintyInMotion, atLeast: 0)
        check.finite("verticalBiasForgettingFactor", c.verticalBiasForgettingFactor, atLeast: 0)
        check.finite("biasUncertaintyAtRest", c.biasUncertaintyAtRest, atLeast: 0)
        check.finite("biasUpdateInterval", c.biasUpdateInterval, atLeast: 0)
        check.finite("restMinimumDuration", c.restMinimumDuration, atLeast: 0)
        check.finite("restFilterTimeConstant", c.restFilterTimeConstant, above: 0)
        check.finite("restRotationRateThreshold", c.restRotationRateThreshold, atLeast: 0)
        check.finite("restAccelerationThreshold", c.restAccelerationThreshold, atLeast: 0)
        check.finite("magneticCurrentTimeConstant", c.magneticCurrentTimeConstant, above: 0)
        check.finite("magneticReferenceTimeConstant", c.magneticReferenceTimeConstant, above: 0)
        check.finite("magneticStrengthThreshold", c.magneticStrengthThreshold, atLeast: 0)
        check.finite("magneticDipThreshold", c.magneticDipThreshold, atLeast: 0)
        check.finite("magneticNewFieldTime", c.magneticNewFieldTime, atLeast: 0)
        check.finite("magneticNewFieldFirstTime", c.magneticNewFieldFirstTime, atLeast: 0)
        check.finite("magneticNewFieldMinimumRotationRate", c.magneticNewFieldMinimumRotationRate, atLeast: 0)
        check.finite("magneticMinimumUndisturbedTime", c.magneticMinimumUndisturbedTime, atLeast: 0)
        check.finite("magneticMaximumRejectionTime", c.magneticMaximumRejectionTime, atLeast: 0)
        check.finite("magneticRejectionFactor", c.magneticRejectionFactor, atLeast: 0)
        if let range = c.gyroscopeRange {
            check.rule("gyroscopeRange", range, range > 0, "must be > 0 rad/s, or infinity (unknown)")
        }
        check.finite("saturationRangeTolerance", c.saturationRangeTolerance, atLeast: 0, atMost: 1)
        check.finite("saturationPinnedTolerance", c.saturationPinnedTolerance, atLeast: 0)
        check.finite("saturationMinimumRate", c.saturationMinimumRate, atLeast: 0)
        check.count("saturationMinimumSamples", c.saturationMinimumSamples, in: 1...1_000_000)
        check.finite("saturationRecoveryTime", c.saturationRecoveryTime, atLeast: 0)
        check.finite("saturationRecoveryAccelerometerTimeConstant", c.saturationRecoveryAccelerometerTimeConstant, above: 0)
        check.finite("saturationRecoveryMagnetometerTimeConstant", c.saturationRecoveryMagnetometerTimeConstant, above: 0)

        check.prefix = prefix
        check.unit("gyroscopeQuaternion", gyroscopeQuaternion)
        check.unit("inclinationQuaternion", inclinationQuaternion)
        check.unit("attitude6D", attitude6D)
        check.finite("headingOffset", Double(headingOffset))
        check.unit("headingTurn", SIMD2<Double>(Double(headingTurn.x), Double(headingTurn.y)))
        if let t = lastTimestamp { check.finite("lastTimestamp", t) }
        if let t = lastAccelerometerTimestamp { check.finite("lastAccelerometerTimestamp", t) }
        if let t = lastMagnetometerTimestamp { check.finite("lastMagnetometerTimestamp", t) }
        check.coefficients("accelerationCoefficients", accelerationCoefficients)
        check.coefficients("biasCoefficients", biasCoefficients)
        check.coefficients("restCoefficients", restCoefficients)
        check.coefficients("magneticCoefficients", magneticCoefficients)
        check.coefficients("recoveryCoefficients", recoveryCoefficients)
        check.lowPass("inertialAcceleration", inertialAcceleration)
        check.lowPass("rotationLowPass0", rotationLowPass0)
        check.lowPass("rotationLowPass1", rotationLowPass1)
        check.lowPass("rotationLowPass2", rotationLowPass2)
        check.lowPass("restRotationRate", restRotationRate)
        check.lowPass("restAcceleration", restAcceleration)
        check.lowPass("magneticStrengthAndDip", magneticStrengthAndDip)

        // The bias is clamped to ±biasLimit on every axis; its covariance has a non-negative diagonal.
        for i in 0..<3 {
            check.finite("bias.\(StateCheck.axis(i))", Double(bias[i]), atLeast: -c.biasLimit, atMost: c.biasLimit)
        }
        check.finite("biasCovariance.c0", biasCovariance.c0)
        check.finite("biasCovariance.c1", biasCovariance.c1)
        check.finite("biasCovariance.c2", biasCovariance.c2)
        check.finite("biasCovariance.c0.x", Double(biasCovariance.c0.x), atLeast: 0)
        check.finite("biasCovariance.c1.y", Double(biasCovariance.c1.y), atLeast: 0)
        check.finite("biasCovariance.c2.z", Double(biasCovariance.c2.z), atLeast: 0)
        check.finite("pendingCorrection", pendingCorrection)
        check.finite("pendingTime", pendingTime, atLeast: 0)
        check.finite("restTime", restTime, atLeast: 0)
        check.finite("magneticReference", magneticReference)
        check.finite("magneticCandidate", magneticCandidate)
        check.finite("magneticCandidateTime", magneticCandidateTime, atLeast: 0)
        check.finite("magneticUndisturbedTime", magneticUndisturbedTime, atLeast: 0)
        check.finite("magneticRejectionTime", magneticRejectionTime, atLeast: 0)
        check.finite("magneticInitialGain", Double(magneticInitialGain), atLeast: 0, atMost: 1)
        check.finite("magneticGains.x", Double(magneticGains.x), atLeast: 0, atMost: 1)
        check.finite("magneticGains.y", Double(magneticGains.y), atLeast: 0, atMost: 1)
        check.finite("magneticGainInterval", magneticGainInterval, atLeast: -1)  // −1: none computed yet
        check.finite("magneticSum", magneticSum)
        check.finite("magneticSumCount", Double(magneticSumCount), atLeast: 0)
        check.finite("magneticSumTime", magneticSumTime, atLeast: 0)
        check.rule(
            "saturationLevel", Double(saturationLevel), saturationLevel > 0,
            "must be > 0 rad/s, or infinity (unknown range)")
        for i in 0..<3 {
            check.finite("previousRateMagnitude.\(StateCheck.axis(i))", Double(previousRateMagnitude[i]), atLeast: 0)
            check.finite("pinnedReadings.\(StateCheck.axis(i))", Double(pinnedReadings[i]), atLeast: 0)
        }
        check.finite("largestRateMagnitude", Double(largestRateMagnitude), atLeast: 0)
        check.count("ignoredReadings", ignoredReadings, in: 0...Int.max)
        check.count("saturatedReadings", saturatedReadings, in: 0...Int.max)
        check.finite("recoveryTimeLeft", recoveryTimeLeft)
        check.finite("biasFreezeTimeLeft", biasFreezeTimeLeft)
        check.finite("filteredSpecificForce", filteredSpecificForce)
        if let problem = check.problem { throw problem }
    }
}

extension MagnetometerCalibrator {
    func validate(_ check: StateCheck, prefix: String) throws(StateProblem) {
        var check = check
        let c = configuration
        check.prefix = prefix + "configuration."
        check.finite("averagingAngle", c.averagingAngle, atLeast: 0, atMost: .pi)
        check.finite("maximumAveragedReadings", c.maximumAveragedReadings, atLeast: 1)
        check.finite("rebinningDistance", c.rebinningDistance, atLeast: 0)
        check.finite("initialSpacing", c.initialSpacing, atLeast: 0)
        check.finite("fitInterval", c.fitInterval, atLeast: 0)
        check.finite("disturbanceThreshold", c.disturbanceThreshold, atLeast: 0)
        check.finite("minimumUndisturbedTime", c.minimumUndisturbedTime, atLeast: 0)
        check.finite("recalibrationTime", c.recalibrationTime, atLeast: 0)
        for i in 0..<3 {
            check.count("minimumBins[\(i)]", c.minimumBins[i], in: 0...27)
            check.finite("minimumSpread[\(i)]", c.minimumSpread[i])
            check.finite("maximumResidual[\(i)]", c.maximumResidual[i], atLeast: 0)
        }
        check.finite("trustSpacing", c.trustSpacing, atLeast: 0)
        check.count("minimumTrustReadings", c.minimumTrustReadings, in: 0...32)
        check.finite("trustRatio", c.trustRatio, atLeast: 0)
        check.finite("consistentSpread", c.consistentSpread, atLeast: 0)
        check.finite("trustInterval", c.trustInterval, atLeast: 0)
        check.finite("minimumTrustRotation", c.minimumTrustRotation, atLeast: 0)

        check.prefix = prefix
        for i in 0..<32 {
            check.finite("pointX[\(i)]", pointX[i])
            check.finite("pointY[\(i)]", pointY[i])
            check.finite("pointZ[\(i)]", pointZ[i])
            // A count of readings averaged into the bin's point, at most the configured largest.
            check.finite("pointCount[\(i)]", pointCount[i], atLeast: 0, atMost: c.maximumAveragedReadings)
            check.finite("windowX[\(i)]", windowX[i])
            check.finite("windowY[\(i)]", windowY[i])
            check.finite("windowZ[\(i)]", windowZ[i])
        }
        check.finite("binningCentre", binningCentre)
        check.finite("offset", offset)
        check.finite("fittedRadius", fittedRadius, atLeast: 0)
        check.rule("fittedResidual", fittedResidual, fittedResidual >= 0, "must be ≥ 0 µT, or infinity (no fit yet)")
        check.finite("fittedSpread", fittedSpread)
        check.count("occupiedBins", occupiedBins, in: 0...27)
        check.finite("disturbedTime", disturbedTime, atLeast: 0)
        check.rule(
            "undisturbedTime", undisturbedTime, undisturbedTime >= 0, "must be ≥ 0 s, or infinity (after a restart)")
        if let t = lastTimestamp { check.finite("lastTimestamp", t) }
        check.rule(
            "lastFitTimestamp", lastFitTimestamp, lastFitTimestamp.isFinite || lastFitTimestamp == -.infinity,
            "must be a finite time, or -infinity (never)")
        check.finite("averagingCosine", averagingCosine, atLeast: -1, atMost: 1)
        // The trust window is a ring of 32 slots: its count and next slot index it (out of range, they would read and
        // write outside it).
        check.count("windowCount", windowCount, in: 0...32)
        check.count("windowNext", windowNext, in: 0...31)
        check.count("windowKeptSinceCheck", windowKeptSinceCheck, in: 0...Int.max)
        let keptNone = lastKept == SIMD3(repeating: .infinity)
        if !keptNone { check.finite("lastKept", lastKept) }
        check.rule(
            "lastCheckTimestamp", lastCheckTimestamp, lastCheckTimestamp.isFinite || lastCheckTimestamp == -.infinity,
            "must be a finite time, or -infinity (never)")
        check.finite("applied", applied)
        if let previous { check.finite("previous", previous) }
        check.rule(
            "lastRawSpread", lastRawSpread, lastRawSpread.isNaN || lastRawSpread >= 0,
            "must be ≥ 0, infinity or NaN (no check yet)")
        check.rule(
            "lastAppliedSpread", lastAppliedSpread, lastAppliedSpread.isNaN || lastAppliedSpread >= 0,
            "must be ≥ 0, infinity or NaN (no check yet)")
        if let problem = check.problem { throw problem }
    }
}

/// The checks of ``DeviceMotionFilterOf/State/validate()``: keeps the first problem, with the field's full path.
struct StateCheck {
    var prefix = ""
    var problem: StateProblem?

    static func axis(_ i: Int) -> String { ["x", "y", "z", "w"][i] }

    mutating func rule(_ field: String, _ value: Double, _ holds: Bool, _ rule: String) {
        guard problem == nil, !holds else { return }
        problem = StateProblem(field: prefix + field, value: "\(value)", rule: rule)
    }

    mutating func finite(_ field: String, _ value: Double, atLeast low: Double = -.infinity, atMost high: Double = .infinity) {
        guard problem == nil else { return }
        if !value.isFinite {
            rule(field, value, false, "must be a finite number")
        } else if !(value >= low && value <= high) {
            let range = high == .infinity ? "≥ \(low)" : low == -.infinity ? "≤ \(high)" : "within [\(low), \(high)]"
            rule(field, value, false, "must be \(range)")
        }
    }

    mutating func finite(_ field: String, _ value: Double, above low: Double) {
        guard problem == nil else { return }
        if !value.isFinite {
            rule(field, value, false, "must be a finite number")
        } else {
            rule(field, value, value > low, "must be > \(low)")
        }
    }

    mutating func finite<V: SIMD>(_ field: String, _ vector: V) where V.Scalar: BinaryFloatingPoint {
        for i in vector.indices {
            let name = vector.scalarCount <= 4 ? Self.axis(i) : "[\(i)]"
            finite("\(field).\(name)", Double(vector[i]))
        }
    }

    mutating func count(_ field: String, _ value: Int, in range: ClosedRange<Int>) {
        guard problem == nil, !range.contains(value) else { return }
        let bounds = range.upperBound == .max ? "≥ \(range.lowerBound)" : "within \(range.lowerBound)...\(range.upperBound)"
        problem = StateProblem(field: prefix + field, value: "\(value)", rule: "must be \(bounds)")
    }

    /// A rotation: finite, of unit length to the estimator's renormalisation tolerance (10⁻³ on the squared length).
    mutating func unit<Scalar: MotionScalar>(_ field: String, _ q: Quaternion<Scalar>) {
        finite("\(field).w", Double(q.w))
        finite("\(field).x", Double(q.x))
        finite("\(field).y", Double(q.y))
        finite("\(field).z", Double(q.z))
        let n2 = Double(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z)
        rule(field, n2, abs(n2 - 1) <= 1e-3, "must be a unit quaternion (squared length 1)")
    }

    /// A turn (cos, sin): finite, of unit length.
    mutating func unit(_ field: String, _ turn: SIMD2<Double>) {
        finite(field, turn)
        let n2 = (turn * turn).sum()
        rule(field, n2, abs(n2 - 1) <= 1e-3, "must be of unit length (cos, sin)")
    }

    mutating func coefficients<Scalar: MotionScalar>(_ field: String, _ k: ButterworthCoefficients<Scalar>) {
        finite("\(field).b0", Double(k.b0))
        finite("\(field).a1", Double(k.a1))
        finite("\(field).a2", Double(k.a2))
        finite("\(field).interval", k.interval, atLeast: 0)
        finite("\(field).tau", k.tau, above: 0)
    }

    mutating func lowPass<Vector: SIMD & Sendable>(_ field: String, _ filter: ButterworthLowPass<Vector>)
    where Vector.Scalar: MotionScalar {
        finite("\(field).state0", filter.state0)
        finite("\(field).state1", filter.state1)
        finite("\(field).output", filter.output)
        // The input time of the running-mean phase, or negative (−1) once filtering.
        finite("\(field).warmUpTime", filter.warmUpTime)
        finite("\(field).warmUpCount", Double(filter.warmUpCount), atLeast: 0)
    }
}
