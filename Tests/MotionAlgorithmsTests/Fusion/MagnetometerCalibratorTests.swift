import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// The magnetometer calibration against a simulated device with a known hard-iron offset.
@Suite(.computeBound) struct MagnetometerCalibratorTests {
    /// The device's own field, in µT (larger than the Earth's 47.4 µT, as is common in phones).
    static let offset = SIMD3<Double>(35, -22, 48)

    /// Turns through 40 orientations spread over all directions, 1 s each, starting face up.
    static var tumbling: Scenario { .tumbling(turns: 40) }

    static func simulation(_ scenario: Scenario, seed: UInt64 = 3) -> Simulation {
        try! Simulation(
            scenario: scenario,
            options: SimulationOptions(rate: 100, sensors: .all, seed: seed, magnetometerOffset: offset))
    }

    static func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

    @Test func offsetConvergesWhileTumbling() {
        var calibrator = MagnetometerCalibrator()
        var timeToHigh: Double?
        for sample in Self.simulation(Self.tumbling) {
            calibrator.update(sample.magneticField!.vector, at: sample.timestamp)
            if timeToHigh == nil, calibrator.accuracy == .high { timeToHigh = sample.timestamp }
        }
        #expect(calibrator.accuracy == .high)
        let error = Self.length(calibrator.bias - Self.offset)
        #expect(error < 0.5, "offset error \(error) µT")
        #expect(abs(calibrator.radius - Self.length(SIMD3(20, 0, -43))) < 0.5)
        #expect(calibrator.residual < 1)
        #expect(calibrator.coverage >= 16)
        // High within 10 s of tumbling (4.6–7.7 s over five seeds).
        #expect((timeToHigh ?? .infinity) < 10, "high after \(timeToHigh ?? -1) s")
    }

    @Test func deviceMotionReportsTheCalibratedField() {
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var last: (DeviceMotion, SimulatedFrame)?
        for frame in Self.simulation(Self.tumbling).frames {
            if let motion = filter.update(frame.sample) { last = (motion, frame) }
        }
        let (motion, frame) = try! #require(last)
        let field = try! #require(motion.magneticField)
        #expect(field.accuracy == .high)
        #expect(filter.calibrator.accuracy == .high)
        // The calibrated field is the Earth's field in the device frame, within noise (0.4 µT per axis).
        let truth = frame.attitude.quaternion.conjugate.act(on: SIMD3<Double>(20, 0, -43))
        #expect(Self.length(field.field.vector - truth) < 2)
        // The arbitrary frame ignores the magnetometer.
        var arbitrary = DeviceMotionFilter()
        #expect(arbitrary.update(frame.sample)?.magneticField == nil)
    }

    @Test func attitudeIsFusedFromTheCalibratedField() {
        // Tumbling with the hard-iron offset, then the first 15 turns again: by then the calibrated field is the
        // estimator's reference and the north-referenced attitude is right; fused from the raw readings (an
        // estimator fed directly), the offset turns with the device and the heading goes wrong.
        var scenario = Self.tumbling
        scenario.append(contentsOf: Self.tumbling.segments.prefix(15).map(\.segment))
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var raw = AttitudeEstimator<Double>()
        var worst = (calibrated: 0.0, raw: 0.0)
        for frame in Self.simulation(scenario).frames {
            let s = frame.sample
            let motion = filter.update(s)
            raw.update(rotationRate: s.rotationRate?.vector, acceleration: s.acceleration?.vector,
                       magneticField: s.magneticField?.vector, at: s.timestamp)
            guard s.timestamp >= 45, let motion else { continue }
            worst.calibrated = max(worst.calibrated, motion.attitude.angle(to: frame.attitude))
            worst.raw = max(worst.raw, Attitude(quaternion: raw.quaternion9D).angle(to: frame.attitude))
        }
        #expect(filter.calibrator.accuracy == .high)
        // Worst after 45 s with seed 3: 1.7° calibrated, 9.7° raw.
        #expect(worst.calibrated * 180 / .pi < 3, "\(worst.calibrated * 180 / .pi)°")
        #expect(worst.raw > 4 * worst.calibrated, "\(worst.raw * 180 / .pi)°")
    }

    @Test func turningAboutOneAxisIsNotEnough() {
        // Flat on a table, turned about the vertical three times: the readings lie on one circle, which leaves the
        // offset along the vertical unknown.
        var scenario = Scenario(name: "table", start: .faceUp)
        scenario.append(.slowRotation(by: 6 * .pi, duration: 30))
        var calibrator = MagnetometerCalibrator()
        var best = MagneticFieldCalibrationAccuracy.uncalibrated
        for sample in Self.simulation(scenario) {
            calibrator.update(sample.magneticField!.vector, at: sample.timestamp)
            best = max(best, calibrator.accuracy)
        }
        #expect(best <= .low)
        #expect(calibrator.spread < 0.05)

        // Held still: nothing to fit.
        var still = Scenario(name: "still", start: .faceUp)
        still.append(.hold(20))
        var held = MagnetometerCalibrator()
        for sample in Self.simulation(still) { held.update(sample.magneticField!.vector, at: sample.timestamp) }
        #expect(held.accuracy == .uncalibrated)
        #expect(held.bias == .zero)
    }

    @Test func aPassingMagnetDoesNotMoveTheOffset() {
        // Calibrate, then tumble on with a magnet near the device for 5 s (adding 147 µT along a fixed device
        // direction), then without it.
        var scenario = Self.tumbling
        scenario.append(contentsOf: Self.tumbling.segments.prefix(15).map(\.segment))
        var calibrator = MagnetometerCalibrator()
        var before: SIMD3<Double>?
        var disturbedCount = 0
        var worstDuring = 0.0
        for sample in Self.simulation(scenario, seed: 8) {
            var field = sample.magneticField!.vector
            let t = sample.timestamp
            if t >= 41 && t < 46 {
                if before == nil { before = calibrator.bias }
                field += SIMD3(90, -60, 100)
            }
            calibrator.update(field, at: t)
            if t >= 41 && t < 46 {
                if calibrator.isDisturbed { disturbedCount += 1 }
                worstDuring = max(worstDuring, Self.length(calibrator.bias - before!))
            }
        }
        #expect(disturbedCount == 500)
        #expect(worstDuring == 0)
        #expect(calibrator.accuracy == .high)
        #expect(Self.length(calibrator.bias - Self.offset) < 0.5)
    }

    @Test func aLastingNewOffsetIsLearnedAgain() {
        // A magnet attached to the device for good: after 30 s of disturbance the calibration starts again and
        // finds the new offset.
        var scenario = Self.tumbling
        scenario.append(contentsOf: Self.tumbling.segments.map(\.segment))
        scenario.append(contentsOf: Self.tumbling.segments.map(\.segment))
        let extra = SIMD3<Double>(40, 30, -25)
        var calibrator = MagnetometerCalibrator()
        var restarted = false
        for sample in Self.simulation(scenario, seed: 4) {
            var field = sample.magneticField!.vector
            if sample.timestamp >= 41 { field += extra }
            calibrator.update(field, at: sample.timestamp)
            if sample.timestamp >= 41 && calibrator.accuracy == .uncalibrated { restarted = true }
        }
        #expect(restarted)
        #expect(calibrator.accuracy == .high)
        #expect(Self.length(calibrator.bias - (Self.offset + extra)) < 0.5)
    }
}
