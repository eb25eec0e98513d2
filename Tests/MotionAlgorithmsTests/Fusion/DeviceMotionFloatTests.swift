import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// `DeviceMotionFilterOf<Float>`: the estimator in single precision, the calibration and the outputs in `Double`.
@Suite(.computeBound) struct DeviceMotionFloatTests {
    @Test(arguments: AttitudeReferenceFrame.allCases)
    func floatAgreesWithDoubleWithinFloatPrecision(frame: AttitudeReferenceFrame) throws {
        // Tumbling with holds, a gyroscope bias and a hard-iron offset (the calibration fits within seconds).
        let frames = EstimatorStateTests.frames
        var double = DeviceMotionFilter(referenceFrame: frame, magneticDeclination: 0.05)
        var float = DeviceMotionFilterOf<Float>(referenceFrame: frame, magneticDeclination: 0.05)
        var worst = (attitude: 0.0, gravity: 0.0, heading: 0.0, truth: 0.0)
        var count = 0
        for f in frames {
            let d = double.update(f.sample), s = float.update(f.sample)
            #expect((d == nil) == (s == nil))
            guard let d, let s else { continue }
            count += 1
            #expect(abs(s.attitude.quaternion.lengthSquared - 1) < 1e-14)
            #expect(s.referenceFrame == frame && s.magneticField == d.magneticField)
            worst.attitude = max(worst.attitude, s.attitude.angle(to: d.attitude))
            worst.gravity = max(worst.gravity, ((s.gravity.vector - d.gravity.vector).magnitudeSquared).squareRoot())
            if d.heading >= 0 || s.heading >= 0 {
                let difference = abs(s.heading - d.heading)
                worst.heading = max(worst.heading, min(difference, 360 - difference))
            }
            if f.sample.timestamp >= 10 { worst.truth = max(worst.truth, d.attitude.angle(to: f.attitude)) }
        }
        #expect(count >= frames.count - 1)
        // Float carries 24 bits: 6·10⁻⁸ relative per operation. Over the 5 000 samples the attitudes stay within
        // 0.01° (1.7·10⁻⁴ rad) of each other (5·10⁻⁵ rad seen), small against the error of either against the
        // truth. The heading is the direction of the top's horizontal part, which can be as short as 0.1 (then
        // the back's is taken): up to ten times the attitude's difference, 0.05° (0.0055° seen).
        #expect(worst.attitude < 1.7e-4, "\(worst.attitude) rad")
        #expect(worst.gravity < 1.7e-4, "\(worst.gravity) g")
        #expect(worst.heading < 0.05, "\(worst.heading)°")
        #expect(worst.attitude < worst.truth / 10, "\(worst.attitude) against \(worst.truth) rad")
        #expect(float.calibrator.bias == double.calibrator.bias)
        let bias = SIMD3<Double>(float.estimator.gyroscopeBias) - double.estimator.gyroscopeBias
        #expect((bias * bias).sum().squareRoot() < 1e-5, "\(bias) rad/s")
    }

    @Test func floatStateRestoresBitForBit() throws {
        let frames = EstimatorStateTests.frames
        var uninterrupted = DeviceMotionFilterOf<Float>(referenceFrame: .xTrueNorthZVertical, magneticDeclination: 0.05)
        var first = uninterrupted
        for f in frames[..<2100] { _ = first.update(f.sample) }
        var restored = DeviceMotionFilterOf<Float>(restoring: try EstimatorStateTests.roundTrip(first.state))
        var differing = 0
        for (i, f) in frames.enumerated() {
            let expected = uninterrupted.update(f.sample)
            guard i >= 2100 else { continue }
            if restored.update(f.sample) != expected { differing += 1 }
        }
        #expect(differing == 0)
    }
}

extension SIMD3 where Scalar == Double {
    fileprivate var magnitudeSquared: Double { (self * self).sum() }
}
