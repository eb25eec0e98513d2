@testable import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// The two places that scale a quaternion to unit length without normalising the result: the inclination
/// correction (its length from its factors') and the Float filter's output in Double (a series step).
@Suite(.computeBound) struct UnitLengthTests {
    static func randomQuaternion(_ generator: inout SeededGenerator) -> Quaternion<Double> {
        let q = Quaternion<Double>(
            w: .random(in: -1...1, using: &generator), x: .random(in: -1...1, using: &generator),
            y: .random(in: -1...1, using: &generator), z: .random(in: -1...1, using: &generator))
        return q.normalized
    }

    static func largestDifference(_ a: Quaternion<Double>, _ b: Quaternion<Double>) -> Double {
        max(abs(a.w - b.w), abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z))
    }

    @Test func inclinationCorrectionIsTheNormalisedProduct() {
        var generator = SeededGenerator(seed: 3)
        var worst = 0.0, worstLength = 0.0
        for i in 0..<20_000 {
            // Up vectors from straight up to 170° away, of lengths 10⁻³ to 10³, and attitudes of lengths 1 ± 10⁻⁹
            // (the formula's length is the product of both factors', not 1 times the correction's).
            let tilt = Double(i % 100) / 100 * (170 * Double.pi / 180)
            let azimuth = Double.random(in: 0..<(2 * .pi), using: &generator)
            let scale = [1e-3, 1, 1e3][i % 3]
            let u = SIMD3(Double.sin(tilt) * Double.cos(azimuth), Double.sin(tilt) * Double.sin(azimuth), Double.cos(tilt))
                * scale
            let unit = Self.randomQuaternion(&generator)
            let stretch = 1 + Double.random(in: -1e-9...1e-9, using: &generator)
            let q = Quaternion(w: unit.w * stretch, x: unit.x * stretch, y: unit.y * stretch, z: unit.z * stretch)
            let n = (u * u).sum().squareRoot()
            let corrected = AttitudeEstimator<Double>.corrected(q, towardsUp: u, length: n)
            let expected = (AttitudeEstimator<Double>.correction(towardsUp: u / n) * q).normalized
            worst = max(worst, Self.largestDifference(corrected, expected))
            worstLength = max(worstLength, abs(corrected.lengthSquared - 1))
        }
        #expect(worst < 1e-14, "\(worst)")
        #expect(worstLength < 1e-15, "\(worstLength)")
    }

    @Test func inclinationCorrectionOfAnOverflowingLengthIsStillAUnitQuaternion() {
        // An up vector of length 10¹⁵⁴ (its squared length still finite): (w² + x² + y²)·|q|² overflows, and the
        // correction is scaled by 1/|u| before the product.
        let q = Quaternion<Double>(w: 0.9, x: 0.1, y: -0.3, z: 0.2).normalized
        let direction = SIMD3<Double>(0.3, -0.2, 0.9) / (SIMD3<Double>(0.3, -0.2, 0.9) * SIMD3(0.3, -0.2, 0.9)).sum()
            .squareRoot()
        let u = direction * 1e154
        let n = (u * u).sum().squareRoot()
        #expect(n.isFinite)
        let corrected = AttitudeEstimator<Double>.corrected(q, towardsUp: u, length: n)
        let expected = AttitudeEstimator<Double>.corrected(q, towardsUp: direction, length: 1)
        #expect(Self.largestDifference(corrected, expected) < 1e-15)
        #expect(abs(corrected.lengthSquared - 1) < 1e-15)
    }

    @Test func floatAttitudesReachUnitLengthInDouble() {
        var generator = SeededGenerator(seed: 4)
        var worst = 0.0, worstLength = 0.0
        for _ in 0..<20_000 {
            // A Float attitude as the estimator keeps it: products of unit quaternions, renormalised in Float.
            var q = Quaternion<Float>.identity
            for _ in 0..<3 {
                let r = Self.randomQuaternion(&generator)
                q = AttitudeEstimator<Float>.renormalized(
                    q * Quaternion(w: Float(r.w), x: Float(r.x), y: Float(r.y), z: Float(r.z)))
            }
            let wide = Quaternion<Double>(q)
            let unit = DeviceMotionFilterOf<Float>.unitLength(wide)
            worst = max(worst, Self.largestDifference(unit, wide.normalized))
            worstLength = max(worstLength, abs(unit.lengthSquared - 1))
        }
        #expect(worst < 3e-16, "\(worst)")
        #expect(worstLength < 5e-16, "\(worstLength)")
        // Farther from unit length than the series holds: exact normalisation.
        let far = Quaternion<Double>(w: 1.01, x: 0, y: 0, z: 0)
        #expect(DeviceMotionFilterOf<Float>.unitLength(far) == far.normalized)
    }
}
