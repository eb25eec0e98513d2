import Foundation
import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// Saving and restoring the estimator's state (`DeviceMotionFilter.State`, `Codable`) through JSON.
@Suite(.computeBound) struct EstimatorStateTests {
    /// Tumbling (turns over all directions, a hold now and then) with a gyroscope bias and a hard-iron offset.
    static var frames: [SimulatedFrame] {
        var scenario = Scenario(name: "tumbling with holds", start: .faceUp)
        for i in 1...40 {
            scenario.append(.rotate(to: .spread(i), duration: 1))
            if i % 10 == 0 { scenario.append(.hold(3)) }
        }
        let options = SimulationOptions(
            rate: 100, sensors: .all, seed: 11, gyroscopeBias: SIMD3(0.01, -0.006, 0.004),
            magnetometerOffset: SIMD3(35, -22, 48))
        return Array(try! Simulation(scenario: scenario, options: options).frames)
    }

    /// `value` encoded to JSON and decoded again (non-finite numbers as strings).
    static func roundTrip<Value: Codable>(_ value: Value) throws -> Value {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(Value.self, from: encoder.encode(value))
    }

    @Test(arguments: [AttitudeReferenceFrame.xArbitraryZVertical, .xArbitraryCorrectedZVertical,
                      .xMagneticNorthZVertical, .xTrueNorthZVertical])
    func restoringContinuesBitForBit(frame: AttitudeReferenceFrame) throws {
        let frames = Self.frames
        // Saved at 7 s (before the calibration has a fit), 21 s (fitted, moving) and 45 s (in a hold); each between
        // two heading corrections (every 0.05 s), with magnetometer readings averaged since the last one.
        for split in [700, 2100, 4500] {
            var uninterrupted = DeviceMotionFilter(
                referenceFrame: frame, magneticDeclination: 0.05, predictionInterval: 0.003)
            var first = uninterrupted
            for f in frames[..<split] { _ = first.update(f.sample) }
            var restored = DeviceMotionFilter(restoring: try Self.roundTrip(first.state))
            var differing = 0
            for (i, f) in frames.enumerated() {
                let expected = uninterrupted.update(f.sample)
                guard i >= split else { continue }
                if restored.update(f.sample) != expected { differing += 1 }
            }
            #expect(differing == 0, "split at sample \(split)")
            #expect(restored.estimator.gyroscopeBias == uninterrupted.estimator.gyroscopeBias)
            #expect(restored.calibrator.bias == uninterrupted.calibrator.bias)
            #expect(restored.calibrator.accuracy == uninterrupted.calibrator.accuracy)
        }
    }

    @Test func theStateNamesWhatOutlivesASession() throws {
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        let frames = Self.frames
        for f in frames { _ = filter.update(f.sample) }
        let state = try Self.roundTrip(filter.state)
        #expect(state.gyroscopeBias == filter.estimator.gyroscopeBias)
        #expect(state.gyroscopeBiasUncertainty == filter.estimator.gyroscopeBiasUncertainty)
        #expect(state.gyroscopeBiasUncertainty < 0.5 * .pi / 180)  // below the initial 0.5 °/s
        #expect(state.isResting == filter.estimator.isResting)
        #expect(state.magnetometerBias == filter.calibrator.bias)
        #expect(state.magnetometerAccuracy == .high)
        let error = state.magnetometerBias - SIMD3(35, -22, 48)
        #expect((error * error).sum().squareRoot() < 1)
    }

    @Test func aNewSessionStartsFromTheSavedCalibration() throws {
        let frames = Self.frames
        var previous = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        for f in frames { _ = previous.update(f.sample) }
        let state = try Self.roundTrip(previous.state)

        // The next session: another clock (starting at 1000 s), the device held still on a table.
        var scenario = Scenario(name: "still", start: .faceUp)
        scenario.append(.hold(2))
        let options = SimulationOptions(
            rate: 100, sensors: .all, seed: 12, gyroscopeBias: SIMD3(0.01, -0.006, 0.004),
            magnetometerOffset: SIMD3(35, -22, 48))
        var resumed = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical, calibratedFrom: state)
        var fresh = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        #expect(resumed.estimator.gyroscopeBias == state.gyroscopeBias)
        #expect(resumed.calibrator.bias == state.magnetometerBias)
        #expect(resumed.calibrator.accuracy == .high)
        let trueBias = SIMD3<Double>(0.01, -0.006, 0.004)
        func error(_ v: SIMD3<Double>) -> Double { ((v - trueBias) * (v - trueBias)).sum().squareRoot() }
        var last: (resumed: DeviceMotion, fresh: DeviceMotion, truth: Attitude)?
        var biasErrorAtHalfASecond: (resumed: Double, fresh: Double)?
        for f in try Simulation(scenario: scenario, options: options).frames {
            var s = f.sample
            s.timestamp += 1000
            guard let r = resumed.update(s), let n = fresh.update(s) else { continue }
            last = (r, n, f.attitude)
            if biasErrorAtHalfASecond == nil && f.sample.timestamp >= 0.5 {
                biasErrorAtHalfASecond = (error(resumed.estimator.gyroscopeBias), error(fresh.estimator.gyroscopeBias))
            }
        }
        let (r, n, truth) = try #require(last)
        // Within 2 s the resumed filter reports the calibrated field and the right heading; a fresh one has neither.
        #expect(r.magneticField?.accuracy == .high)
        #expect(n.magneticField?.accuracy == .uncalibrated)
        #expect(r.attitude.angle(to: truth) * 180 / .pi < 2, "\(r.attitude.angle(to: truth) * 180 / .pi)°")
        #expect(n.attitude.angle(to: truth) > 4 * r.attitude.angle(to: truth))
        // Before rest detection (1.5 s) has measured anything, the resumed bias is near the saved one (saved
        // 0.0055 rad/s off: 40 s of tumbling pin the bias down only so far; 0.0056 at 0.5 s); a fresh filter's
        // starts at zero (0.0124 rad/s off).
        let (resumedError, freshError) = try #require(biasErrorAtHalfASecond)
        #expect(resumedError < 0.5 * freshError, "bias error \(resumedError) vs \(freshError) rad/s")
    }

    @Test func theEstimatorAloneRoundTripsInFloat() throws {
        // `AttitudeEstimator` is `Codable` in Float too, and continues bit for bit.
        let frames = Self.frames
        var uninterrupted = AttitudeEstimator<Float>()
        var first = uninterrupted
        func feed(_ e: inout AttitudeEstimator<Float>, _ s: MotionSample) {
            e.update(
                rotationRate: s.rotationRate.map { SIMD3<Float>($0.vector) },
                acceleration: s.acceleration.map { SIMD3<Float>($0.vector) },
                magneticField: s.magneticField.map { SIMD3<Float>($0.vector) }, at: s.timestamp)
        }
        for f in frames[..<1500] { feed(&first, f.sample) }
        var restored = try Self.roundTrip(first)
        var differing = 0
        for (i, f) in frames.enumerated() {
            feed(&uninterrupted, f.sample)
            guard i >= 1500 else { continue }
            feed(&restored, f.sample)
            if restored.quaternion9D != uninterrupted.quaternion9D { differing += 1 }
        }
        #expect(differing == 0)
    }
}
