import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

@testable import MotionAlgorithms

/// A fit is applied only when it makes the field's strength more consistent than the raw readings over the same
/// recent readings, and dropped when it stops doing so (simulated, 100 Hz, 0.4 µT noise per axis, Earth's field
/// 47.4 µT). The accuracy gate (`Scripts/check-attitude-accuracy.sh`) runs this suite.
@Suite(.computeBound) struct MagnetometerTrustTests {
    /// Fast turns (0.5 s each, up to about 6 rad/s) to 60 orientations spread over all directions, with a 10 s break
    /// after every fifth: BROAD's "fast rotation with breaks", 180 s.
    static var fastRotationWithBreaks: Scenario {
        var scenario = Scenario(name: "fast rotation with breaks", start: .faceUp)
        for i in 1...60 {
            scenario.append(.rotate(to: .spread(i), duration: 0.5))
            scenario.append(.hold(i % 5 == 0 ? 10 : 0.5))
        }
        return scenario
    }

    /// Turns of `turn` seconds each to 40 orientations over all directions, with a 10 s break after every fifth.
    static func turning(_ turn: Double) -> Scenario {
        var scenario = Scenario(name: "turns of \(turn) s", start: .faceUp)
        for i in 1...40 {
            scenario.append(.rotate(to: .spread(i), duration: turn))
            if i % 5 == 0 { scenario.append(.hold(10)) }
        }
        return scenario
    }

    static func frames(
        _ scenario: Scenario, offset: SIMD3<Double> = .zero, seed: UInt64, rate: Double = 100
    ) -> Simulation.Frames {
        try! Simulation(
            scenario: scenario,
            options: SimulationOptions(rate: rate, sensors: .all, seed: seed, magnetometerOffset: offset)
        ).frames
    }

    /// The heading error of `estimate` against `truth`, in degrees: the angle about the vertical of the rotation
    /// between them (device → reference quaternions), which is defined in every attitude.
    static func headingError(_ estimate: Attitude, _ truth: Attitude) -> Double {
        let e = estimate.quaternion * truth.quaternion.conjugate
        return abs(2 * Double.atan(e.z / e.w)) * 180 / .pi
    }

    /// Runs `DeviceMotionFilter` in the magnetic-north frame next to an estimator fed the raw readings; `distort`
    /// changes each reading first (time, reading → reading). Checks after every sample that a fit in use is never
    /// less consistent than the raw readings at the last check.
    struct Run {
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var raw = AttitudeEstimator<Double>()
        /// Worst heading error (degrees) from `from` on, calibrated and raw.
        var worst = (calibrated: 0.0, raw: 0.0)
        /// Sum of the squared heading errors (degrees²) from `from` on, calibrated, and their number.
        var squaredErrors = (sum: 0.0, count: 0)
        /// RMS heading error (degrees) from `from` on, calibrated.
        var rms: Double { (squaredErrors.sum / Double(squaredErrors.count)).squareRoot() }
        /// Samples at which the output differed from the raw estimate.
        var differing = 0
        var everApplied = false
        var bestCandidate = MagneticFieldCalibrationAccuracy.uncalibrated
        var spreadViolations = 0
        /// Samples at which raw readings more than twice `consistentSpread` apart were reported calibrated.
        var inconsistentRawReportedCalibrated = 0

        init(_ frames: Simulation.Frames, from: Double, distort: (Double, SIMD3<Double>) -> SIMD3<Double> = { $1 }) {
            for frame in frames {
                var s = frame.sample
                s.magneticField = s.magneticField.map { MagneticField(distort(s.timestamp, $0.vector)) }
                let motion = filter.update(s)
                raw.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector,
                           magneticField: s.magneticField?.vector, at: s.timestamp)
                let c = filter.calibrator
                everApplied = everApplied || c.isFitApplied
                bestCandidate = max(bestCandidate, c.candidateAccuracy)
                if c.isFitApplied && c.calibratedSpread > max(c.rawSpread, c.configuration.consistentSpread) {
                    spreadViolations += 1
                }
                if !c.isFitApplied && c.accuracy >= .low && c.rawSpread > 2 * c.configuration.consistentSpread {
                    inconsistentRawReportedCalibrated += 1
                }
                guard let motion else { continue }
                let rawAttitude = Attitude(quaternion: raw.quaternion9D)
                if motion.attitude.quaternion != raw.quaternion9D { differing += 1 }
                guard s.timestamp >= from else { continue }
                let error = headingError(motion.attitude, frame.attitude)
                worst.calibrated = max(worst.calibrated, error)
                squaredErrors = (squaredErrors.sum + error * error, squaredErrors.count + 1)
                worst.raw = max(worst.raw, headingError(rawAttitude, frame.attitude))
            }
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func aCleanFieldIsLeftAsItIs(seed: UInt64) {
        // No hard iron: the raw readings are as consistent as any fit can make them, so none is applied and the
        // output is the uncalibrated estimate, bit for bit. The accuracy says the raw field is calibrated as it is:
        // the fits' coverage level, not `uncalibrated` for ever (an app waiting for `medium` would wait for ever).
        let run = Run(Self.frames(Self.fastRotationWithBreaks, seed: seed), from: 10)
        #expect(run.bestCandidate >= .low)  // fits were made, and refused
        #expect(!run.everApplied)
        #expect(run.differing == 0)
        #expect(!run.filter.calibrator.isFitApplied)
        #expect(run.filter.calibrator.accuracy >= .medium)
        #expect(run.filter.calibrator.accuracy == run.filter.calibrator.candidateAccuracy)
        #expect(run.worst.calibrated < 3, "\(run.worst.calibrated)°")
        #expect(run.spreadViolations == 0)
        #expect(run.inconsistentRawReportedCalibrated == 0)
    }

    @Test(arguments: [(0.3, 100.0), (1, 100), (4, 100), (0.3, 285.7), (4, 285.7)])
    func everySpeedAndRate(turn: Double, rate: Double) {
        // Turns of 0.3 s (up to about 10 rad/s), 1 s and 4 s (slow), at 100 Hz and BROAD's 285.7 Hz: a clean
        // field stays uncalibrated (bit-identical to the raw estimate); hard iron is applied, and over the second
        // half the heading is as good as with a clean field, within 1°.
        let end = Self.turning(turn).duration
        let clean = Run(Self.frames(Self.turning(turn), seed: 21, rate: rate), from: end / 2)
        #expect(!clean.everApplied)
        #expect(clean.differing == 0)
        #expect(clean.spreadViolations == 0)
        #expect(clean.inconsistentRawReportedCalibrated == 0)
        let hard = Run(
            Self.frames(Self.turning(turn), offset: SIMD3(35, -22, 48), seed: 21, rate: rate), from: end / 2)
        #expect(hard.filter.calibrator.isFitApplied)
        #expect(
            hard.worst.calibrated < clean.worst.calibrated + 1,
            "\(hard.worst.calibrated)° against \(clean.worst.calibrated)° clean, from \(end / 2) s")
        #expect(hard.worst.raw > 5 * hard.worst.calibrated, "\(hard.worst.raw)° raw")
        #expect(hard.spreadViolations == 0)
        #expect(hard.inconsistentRawReportedCalibrated == 0)
    }

    @Test func softIronAloneIsNotMistakenForHardIron() {
        // A 3 % scale error on x and −2 % on z (soft iron, which a hard-iron fit cannot remove): the raw strength
        // varies by a few per cent, the fits do not halve that, and the raw readings stay in use.
        let run = Run(Self.frames(Self.fastRotationWithBreaks, seed: 4), from: 10) { _, m in
            m * SIMD3(1.03, 1, 0.98)
        }
        #expect(!run.everApplied)
        #expect(run.differing == 0)
        #expect(run.spreadViolations == 0)
        #expect(run.inconsistentRawReportedCalibrated == 0)
    }

    @Test(arguments: [(0.01, 0.44), (0.02, 0.68), (0.03, 0.94), (0.05, 1.48)])
    func softIronCostsHeadingThatNoHardIronFitRemoves(scale k: Double, rms expected: Double) {
        // Soft iron: the readings scaled by 1 + k on x and 1 − 2k/3 on z (seed 1). No hard-iron fit is applied (the
        // trust rule), and the heading's RMS error from 10 s on grows from the clean device's 0.29° by about 0.15°
        // per per cent of scale error: the most a soft-iron correction could win here (Docs/Attitude.md).
        let clean = Run(Self.frames(Self.fastRotationWithBreaks, seed: 1), from: 10)
        let soft = Run(Self.frames(Self.fastRotationWithBreaks, seed: 1), from: 10) { _, m in
            m * SIMD3(1 + k, 1, 1 - 2 * k / 3)
        }
        #expect(!soft.everApplied)
        #expect(abs(clean.rms - 0.29) < 0.005, "\(clean.rms)° clean")
        #expect(abs(soft.rms - expected) < 0.005, "\(soft.rms)° with \(k * 100) %")
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func hardIronIsAppliedAndFixesTheHeading(seed: UInt64) {
        let run = Run(
            Self.frames(Self.fastRotationWithBreaks, offset: SIMD3(35, -22, 48), seed: seed), from: 60)
        #expect(run.filter.calibrator.isFitApplied)
        #expect(run.filter.calibrator.accuracy >= .medium)
        let error = run.filter.calibrator.bias - SIMD3(35, -22, 48)
        #expect((error * error).sum().squareRoot() < 1)
        // Seeds 1–3: within 2.2–2.3° from 60 s on (the clean field gives the same); fed the raw readings, 54°
        // off.
        #expect(run.worst.calibrated < 4, "\(run.worst.calibrated)°")
        #expect(run.worst.raw > 5 * run.worst.calibrated, "\(run.worst.raw)°")
        #expect(run.spreadViolations == 0)
        #expect(run.inconsistentRawReportedCalibrated == 0)
    }

    @Test func aSmallHardIronIsApplied() {
        // 4 µT (a heading error of up to 12° on 20 µT of horizontal field): the raw strength's spread is 0.033, the
        // calibrated 0.006; from 60 s on the heading is within 2.1°, against 8.6° fed the raw readings (seed 5).
        let run = Run(Self.frames(Self.fastRotationWithBreaks, offset: SIMD3(-2, 3, 2), seed: 5), from: 60)
        #expect(run.filter.calibrator.isFitApplied)
        #expect(run.worst.calibrated < run.worst.raw)
        #expect(run.spreadViolations == 0)
        #expect(run.inconsistentRawReportedCalibrated == 0)
    }

    /// The time the fit in use is dropped after the magnet is taken off, at most: the trust window must hold more
    /// readings taken after than before (17 of its 32, the median's breakdown point), which one turn of this
    /// scenario gives (0.5 s at up to about 6 rad/s moves the reading by 2 µT or more on most samples), and the
    /// next check comes within `trustInterval` (0.5 s): by the end of the first turn after the removal, plus 0.5 s.
    static func dropBound(afterRemovalAt removal: Double) -> Double {
        // The scenario's turns start every 1 s, or 10.5 s after every fifth, and take 0.5 s: the first one that
        // starts at or after the removal.
        var start = 0.0
        for i in 1...60 where start < removal {
            start += i % 5 == 0 ? 10.5 : 1
        }
        return start + 0.5 + MagnetometerCalibratorConfiguration().trustInterval
    }

    @Test func aMagnetAttachedAndRemovedIsAppliedThenDropped() {
        // No hard iron of its own; a magnet attached (a 30 µT offset) from 20 s to 90 s. The fit of the magnet is
        // applied while it is attached; once it is gone, the candidate (the magnet's fit) rejects every reading as
        // disturbed, but the readings still enter the trust window, where the raw readings are now far more
        // consistent than the fit in use: the fit is dropped at the first check that sees them (seed 6: at
        // 90.58 s; the turn 90–90.5 s, so within `dropBound`, 91 s). Before the window took disturbed readings, it
        // was dropped only when the calibration restarted, 30 s after the disturbance began (120.65 s).
        let magnet = SIMD3<Double>(10, 25, -12)
        var applied = (during: false, after: false)
        var dropped: Double?
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var worstAtEnd = 0.0
        for frame in Self.frames(Self.fastRotationWithBreaks, seed: 6) {
            var s = frame.sample
            let t = s.timestamp
            if t >= 20 && t < 90 { s.magneticField = s.magneticField.map { MagneticField($0.vector + magnet) } }
            guard let motion = filter.update(s) else { continue }
            if t >= 60 && t < 90 && filter.calibrator.isFitApplied { applied.during = true }
            if t >= 90 && dropped == nil && !filter.calibrator.isFitApplied { dropped = t }
            if t >= 150 && filter.calibrator.isFitApplied { applied.after = true }
            if t >= 150 {
                worstAtEnd = max(worstAtEnd, Self.headingError(motion.attitude, frame.attitude))
            }
        }
        #expect(applied.during)
        #expect((dropped ?? .infinity) <= Self.dropBound(afterRemovalAt: 90), "dropped at \(dropped ?? -1) s")
        #expect(!applied.after)
        #expect(worstAtEnd < 3, "\(worstAtEnd)°")
    }

    @Test func aPassingMagnetDoesNotDropAGoodFit() {
        // Hard iron applied, then a magnet passes (147 µT for 5 s): its readings enter the trust window, but no
        // centre makes them consistent, so neither the raw readings nor any other fit is twice as consistent as
        // the fit in use, which stays applied throughout (seed 1).
        var droppedDuring = false
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        for frame in Self.frames(Self.fastRotationWithBreaks, offset: SIMD3(35, -22, 48), seed: 1) {
            var s = frame.sample
            let t = s.timestamp
            if t >= 100 && t < 105 { s.magneticField = s.magneticField.map { MagneticField($0.vector + SIMD3(147, 0, 0)) } }
            _ = filter.update(s)
            if t >= 60 && !filter.calibrator.isFitApplied { droppedDuring = true }
        }
        #expect(!droppedDuring)
        let error = filter.calibrator.bias - SIMD3(35, -22, 48)
        #expect((error * error).sum().squareRoot() < 1)
    }

    @Test func aMagnetHeldBrieflyAtTheStartIsDroppedWhenItGoes() {
        // No hard iron; during the first 8 s a magnet held against the device adds an offset, which the first fits
        // find and apply (rightly: it is an offset then); then it is taken away, during a 10 s break. The candidate
        // rejects every reading as disturbed, but the first turn after the break (14.5–15 s) fills the trust window
        // with readings around no offset, and the check after it drops the fit (seed 7: at 15.07 s, within
        // `dropBound`, 15.5 s; at 60 s, when the calibration restarted, before the window took disturbed readings).
        // The fit in use never makes the strength less consistent than the raw readings; the heading is right once
        // the estimator has taken the field back (from 110 s on within 2.1°, as with a clean start).
        var dropped: Double?
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var worstLate = 0.0
        var violations = 0
        for frame in Self.frames(Self.fastRotationWithBreaks, seed: 7) {
            var s = frame.sample
            let t = s.timestamp
            if t < 8 { s.magneticField = s.magneticField.map { MagneticField($0.vector + SIMD3(30, -20, 15)) } }
            guard let motion = filter.update(s) else { continue }
            let c = filter.calibrator
            if c.isFitApplied && c.calibratedSpread > max(c.rawSpread, c.configuration.consistentSpread) {
                violations += 1
            }
            if t > 8 && dropped == nil && !c.isFitApplied { dropped = t }
            if t >= 110 { worstLate = max(worstLate, Self.headingError(motion.attitude, frame.attitude)) }
        }
        #expect(violations == 0)
        #expect((dropped ?? .infinity) <= Self.dropBound(afterRemovalAt: 8), "dropped at \(dropped ?? -1) s")
        #expect(!filter.calibrator.isFitApplied)
        #expect(worstLate < 3, "\(worstLate)°")
    }

    @Test func aMagnetAttachedWhileTheFitIsWeakIsFittedAfresh() {
        // 0–20 s: no offset, the device turns about its z axis (readings in a band around the equator, |z| ≤ 0.3
        // of the field): enough for a fit at `low`, too little spread for `medium`, so no reading is rejected as
        // disturbed. From 20 s a magnet adds 40 µT on x and the device turns about x instead (a band through the
        // poles). The equator's points, seen from the old centre, lie in bins the new readings never reach; fits
        // over old and new points are off the sphere by more than `low` allows (residual above 6 µT). Before the
        // calibration started again on that, the candidate stayed the old fit for ever; now the points are
        // forgotten and the new field is fitted (seed 3: at 45.4 s).
        var random = SeededGenerator(seed: 3)
        let magnet = SIMD3<Double>(40, 0, 0)
        var calibrator = MagnetometerCalibrator()
        var levelBefore = MagneticFieldCalibrationAccuracy.uncalibrated
        var fitted: Double?
        for i in 0..<8000 {
            let t = Double(i) * 0.01
            let (phi, z) = (t * 1.3, 0.3 * Double.sin(t * 0.37))
            let (c, s, r) = (Double.cos(phi), Double.sin(phi), (1 - z * z).squareRoot())
            let direction = t < 20 ? SIMD3(r * c, r * s, z) : SIMD3(z, r * c, r * s)
            let reading = (t < 20 ? .zero : magnet) + 47 * direction + 0.4 * random.nextGaussianVector()
            calibrator.update(reading, at: t)
            if t < 20 { levelBefore = calibrator.candidateAccuracy }
            let error = calibrator.candidateBias - magnet
            if t >= 20, fitted == nil, calibrator.candidateAccuracy >= .low, (error * error).sum() < 1 { fitted = t }
        }
        #expect(levelBefore == .low)
        #expect((fitted ?? .infinity) < 60, "fitted at \(fitted ?? -1) s")
        let error = calibrator.bias - magnet
        #expect(calibrator.isFitApplied && (error * error).sum().squareRoot() < 1, "\(calibrator.bias)")
    }

    @Test func smallestEigenvalueOfKnownMatrices() {
        // A = R·diag(l)·Rᵀ for random rotations R and eigenvalues l (µT², as the points' covariance): repeated ones
        // (a sphere's covariance), one of zero (points on a plane) and the diagonal case.
        var random = SeededGenerator(seed: 9)
        var worst = 0.0
        for i in 0..<2000 {
            var l = SIMD3<Double>(
                .random(in: 0...900, using: &random), .random(in: 0...900, using: &random),
                .random(in: 0...900, using: &random))
            if i % 4 == 1 { l = SIMD3(l.x, l.x, l.z) }
            if i % 4 == 2 { l.z = 0 }
            let axis = SIMD3<Double>(
                .random(in: -1...1, using: &random), .random(in: -1...1, using: &random),
                .random(in: -1...1, using: &random))
            let angle = Double.random(in: 0...3, using: &random)
            let r = (i % 4 == 3 ? Quaternion<Double>.identity : Quaternion(rotationVector: axis * angle)).rotationMatrix
            let m = [[r.m11, r.m12, r.m13], [r.m21, r.m22, r.m23], [r.m31, r.m32, r.m33]]
            func a(_ j: Int, _ k: Int) -> Double { (0..<3).reduce(0) { $0 + m[j][$1] * l[$1] * m[k][$1] } }
            let smallest = MagnetometerCalibrator.smallestEigenvalue(a(0, 0), a(1, 1), a(2, 2), a(0, 1), a(0, 2), a(1, 2))
            worst = max(worst, abs(smallest - l.min()) / l.max())
        }
        // Relative to the largest eigenvalue: near a repeated eigenvalue the closed form's arccosine amplifies
        // rounding to about √ε. The spread it gives is compared with thresholds of 0.05 and more.
        #expect(worst < 1e-8, "\(worst)")
    }

    @Test func sortingNetworkSorts() {
        // Against sorting: random values, many ties, sorted and reversed input, infinity padding, sizes 1–32; and
        // the median deviation merged outwards from the sorted values against taking it from the sorted
        // deviations, for every size and rank.
        var random = SeededGenerator(seed: 5)
        for count in 1...32 {
            for pattern in 0..<4 {
                var values = (0..<count).map { _ in Double(random.next() % 1000) / 10 }
                if pattern == 1 { values = values.map { ($0 / 20).rounded() } }
                if pattern == 2 { values.sort() }
                if pattern == 3 { values.sort(by: >) }
                var padded = values + Array(repeating: .infinity, count: 32 - count)
                padded.withUnsafeMutableBufferPointer { MagnetometerCalibrator.sort32($0.baseAddress!) }
                #expect(Array(padded[..<count]) == values.sorted(), "\(values)")
                for middle in 0..<count {
                    let deviations = values.map { abs($0 - padded[middle]) }.sorted()
                    for k in 0..<count {
                        let found = padded.withUnsafeMutableBufferPointer {
                            MagnetometerCalibrator.deviation(k, around: middle, inSorted: $0.baseAddress!, count: count)
                        }
                        #expect(found == deviations[k], "k \(k) around \(middle) of \(values)")
                    }
                }
            }
        }
    }
}
