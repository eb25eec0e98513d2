import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// The attitude estimator against synthetic ground truth.
@Suite(.computeBound) struct AttitudeEstimatorTests {
    static var noBias: AttitudeEstimatorConfiguration {
        var c = AttitudeEstimatorConfiguration()
        c.estimatesBiasAtRest = false
        c.estimatesBiasInMotion = false
        return c
    }

    @Test func constantRatesIntegrateExactly() {
        integrate(Double.self, tolerance: 1e-12)
        integrate(Float.self, tolerance: 2e-5)
    }

    func integrate<T: MotionScalar>(_: T.Type, tolerance: T) {
        var estimator = AttitudeEstimator<T>(configuration: Self.noBias)
        let omega = SIMD3<T>(0.3, -1.1, 0.7)  // rad/s
        let dt = 0.01
        for i in 0...500 {
            estimator.update(rotationRate: omega, acceleration: nil, at: Double(i) * dt)
        }
        let expected = Quaternion<T>(rotationVector: omega * T(5))
        #expect(estimator.quaternion6D.angle(to: expected) <= tolerance)
    }

    @Test(arguments: [(0.0, 0.0), (0.4, -0.2), (1.2, 0.9), (-2.5, 0.3), (3.0, -1.4)])
    func staticTiltsGiveExactGravity(roll: Double, pitch: Double) {
        let truth = Attitude(roll: roll, pitch: pitch, yaw: 0.7)
        var filter = DeviceMotionFilter()
        var motion: DeviceMotion?
        for i in 0..<300 {
            motion = filter.update(MotionSample(
                timestamp: Double(i) * 0.01, acceleration: truth.gravity, rotationRate: RotationRate(x: 0, y: 0, z: 0)))
        }
        let m = try! #require(motion)
        #expect(((m.gravity.vector - truth.gravity.vector) * (m.gravity.vector - truth.gravity.vector)).sum() < 1e-20)
        #expect(m.userAcceleration.magnitude < 1e-10)
        // The 6D attitude matches the truth up to a turn about the vertical.
        let gravityAngle = Double.acos(min(1, (m.attitude.gravity.vector * truth.gravity.vector).sum()))
        #expect(gravityAngle < 1e-9)
    }

    @Test func biasConvergesAtRest() {
        let bias = SIMD3<Double>(0.5, -0.3, 0.2) * .pi / 180  // rad/s
        var scenario = Scenario(name: "rest", start: .faceUp)
        scenario.append(.hold(20))
        let simulation = try! Simulation(
            scenario: scenario, options: SimulationOptions(rate: 100, seed: 5, gyroscopeBias: bias))
        var estimator = AttitudeEstimator<Double>()
        for sample in simulation {
            estimator.update(rotationRate: sample.rotationRate?.vector, acceleration: sample.acceleration?.vector,
                             at: sample.timestamp)
        }
        #expect(estimator.isResting)
        let error = estimator.gyroscopeBias - bias
        #expect((error * error).sum().squareRoot() < 0.02 * .pi / 180)
    }

    @Test func biasConvergesInMotion() {
        let bias = SIMD3<Double>(0.6, 0.4, -0.5) * .pi / 180
        let simulation = try! Simulation(
            scenario: .random(seed: 11, segmentCount: 60),
            options: SimulationOptions(rate: 100, seed: 3, gyroscopeBias: bias))
        var estimator = AttitudeEstimator<Double>()
        var worstInclination = 0.0
        for frame in simulation.frames {
            let s = frame.sample
            estimator.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector, at: s.timestamp)
            if s.timestamp > 20 {
                let estimatedUp = estimator.quaternion6D.conjugate.act(on: SIMD3(0, 0, 1))
                let trueUp = frame.attitude.quaternion.conjugate.act(on: SIMD3(0, 0, 1))
                worstInclination = max(worstInclination, Double.acos(min(1, (estimatedUp * trueUp).sum())))
            }
        }
        #expect(worstInclination * 180 / .pi < 3)
        let error = estimator.gyroscopeBias - bias
        // All components within 0.05 °/s after the scenario (rests and motion).
        #expect(max(error.max(), -error.min()) < 0.05 * .pi / 180, "bias error \(error * 180 / .pi) °/s")
    }

    @Test func magneticNorthFrameFindsNorth() {
        let simulation = try! Simulation(
            scenario: .random(seed: 21, segmentCount: 30),
            options: SimulationOptions(rate: 100, sensors: .all, seed: 9))
        var north = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        let declination = 10 * Double.pi / 180
        var trueNorth = DeviceMotionFilter(referenceFrame: .xTrueNorthZVertical, magneticDeclination: declination)
        var corrected = DeviceMotionFilter(referenceFrame: .xArbitraryCorrectedZVertical)
        var arbitrary = DeviceMotionFilter(referenceFrame: .xArbitraryZVertical)
        var worst = 0.0
        var firstCorrected: (Attitude, Attitude)?
        for frame in simulation.frames {
            let magnetic = north.update(frame.sample)
            let geographic = trueNorth.update(frame.sample)
            let c = corrected.update(frame.sample)
            let a = arbitrary.update(frame.sample)
            if firstCorrected == nil, let c, let a { firstCorrected = (c.attitude, a.attitude) }
            guard frame.sample.timestamp > 15, let magnetic, let geographic else { continue }
            worst = max(worst, magnetic.attitude.angle(to: frame.attitude))
            // The true-north attitude is the magnetic one turned about the vertical by the declination.
            let back = Attitude(quaternion: Quaternion(angle: declination, axis: SIMD3(0, 0, 1)) * geographic.attitude.quaternion)
            #expect(back.angle(to: magnetic.attitude) < 1e-9)
            #expect(magnetic.heading >= 0 && magnetic.heading < 360)
            #expect(c?.heading == -1)
        }
        #expect(worst * 180 / .pi < 3)
        // The corrected frame starts where the arbitrary one does.
        if let (c, a) = firstCorrected { #expect(c.angle(to: a) < 1e-9) }
    }

    @Test func headingIsWhereTheTopPoints() {
        // Flat, face up, top towards north: 0°. Turned so the top points west (counter-clockwise): 270°.
        var attitude = Attitude(roll: 0, pitch: 0, yaw: -.pi / 2)  // top (+y) towards reference x (north)
        #expect(abs(DeviceMotionFilter.heading(of: attitude) - 0) < 1e-9)
        attitude = Attitude(roll: 0, pitch: 0, yaw: 0)  // top towards reference y (west)
        #expect(abs(DeviceMotionFilter.heading(of: attitude) - 270) < 1e-9)
        attitude = Attitude(roll: 0, pitch: 0, yaw: .pi)  // top towards −y (east)
        #expect(abs(DeviceMotionFilter.heading(of: attitude) - 90) < 1e-9)
    }

    @Test func decimatedBiasUpdatesAreAsAccurateAsPerSampleUpdates() {
        // The default bias interval (0.1 s) averages 10 corrections per update at 100 Hz and 40 at 400 Hz. Over
        // 8 random scenarios the inclination error against the truth must stay within 5 % of updating on every
        // sample, and so must the final bias error.
        let bias = SIMD3<Double>(0.4, -0.5, 0.3) * .pi / 180
        var everySample = AttitudeEstimatorConfiguration()
        everySample.biasUpdateInterval = 0
        #expect(AttitudeEstimatorConfiguration().biasUpdateInterval == 0.1)
        var errors = (decimated: 0.0, reference: 0.0), biasErrors = (decimated: 0.0, reference: 0.0)
        for (seed, rate) in zip(UInt64(1)...8, [100.0, 400.0, 100.0, 400.0, 100.0, 400.0, 100.0, 400.0]) {
            let simulation = try! Simulation(
                scenario: .random(seed: seed, segmentCount: 20),
                options: SimulationOptions(rate: rate, seed: 2, gyroscopeBias: bias))
            var decimated = AttitudeEstimator<Double>()
            var reference = AttitudeEstimator<Double>(configuration: everySample)
            var squares = (decimated: 0.0, reference: 0.0)
            var n = 0.0
            for frame in simulation.frames {
                n += 1
                let s = frame.sample
                decimated.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector, at: s.timestamp)
                reference.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector, at: s.timestamp)
                let trueUp = frame.attitude.quaternion.conjugate.act(on: SIMD3(0, 0, 1))
                func error(_ q: Quaternion<Double>) -> Double {
                    let up = q.conjugate.act(on: SIMD3(0, 0, 1))
                    return Double.acos(min(1, (up * trueUp).sum()))
                }
                squares.decimated += error(decimated.quaternion6D) * error(decimated.quaternion6D)
                squares.reference += error(reference.quaternion6D) * error(reference.quaternion6D)
            }
            errors.decimated += (squares.decimated / n).squareRoot()
            errors.reference += (squares.reference / n).squareRoot()
            func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }
            biasErrors.decimated += length(decimated.gyroscopeBias - bias)
            biasErrors.reference += length(reference.gyroscopeBias - bias)
        }
        #expect(errors.decimated < errors.reference * 1.05, "\(errors)")
        #expect(biasErrors.decimated < biasErrors.reference * 1.05, "\(biasErrors)")
    }

    @Test func floatAndDoubleAgree() {
        let simulation = try! Simulation(scenario: .random(seed: 4, segmentCount: 10), options: SimulationOptions(rate: 100))
        var f = AttitudeEstimator<Float>()
        var d = AttitudeEstimator<Double>()
        var worst = 0.0
        for s in simulation {
            f.update(rotationRate: s.rotationRate.map { SIMD3<Float>($0.vector) }, acceleration: s.acceleration.map { SIMD3<Float>($0.vector) }, at: s.timestamp)
            d.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector, at: s.timestamp)
            worst = max(worst, Quaternion<Double>(f.quaternion6D).angle(to: d.quaternion6D))
        }
        #expect(worst < 1e-3)
    }
}

@Suite(.computeBound) struct PredictionTests {
    /// Turning flat at a constant rate about the vertical, the attitude predicted one interval ahead is the attitude
    /// reported one sample later.
    @Test func predictionLooksOneIntervalAhead() {
        let dt = 0.01
        var now = DeviceMotionFilter()
        var ahead = DeviceMotionFilter(predictionInterval: dt)
        var previousPredicted: Attitude?
        var worst = 0.0
        for i in 0..<300 {
            let sample = MotionSample(
                timestamp: Double(i) * dt, acceleration: Acceleration(x: 0, y: 0, z: -1),
                rotationRate: RotationRate(x: 0, y: 0, z: 1.3))
            let current = now.update(sample)
            let predicted = ahead.update(sample)
            if let previousPredicted, let current { worst = max(worst, previousPredicted.angle(to: current.attitude)) }
            previousPredicted = predicted?.attitude
        }
        #expect(worst < 1e-9)
        #expect(ahead.predictionInterval == dt && now.predictionInterval == 0)
    }
}
