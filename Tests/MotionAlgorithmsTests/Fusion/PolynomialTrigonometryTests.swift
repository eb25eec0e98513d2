@testable import MotionAlgorithms
import MotionCore
import MotionTesting
import RealModule
import Testing
import TestThreads

/// The polynomial arcsine, arctangent, cosine and sine, and the estimator's series for a rotation's quaternion, against
/// the C library's.
@Suite(.computeBound) struct PolynomialTrigonometryTests {
    @Test func arcsineMatchesTheCLibraryOverItsDomain() {
        var worst = 0.0
        for i in -200_000...200_000 {
            let x = Double(i) / 200_000
            worst = max(worst, abs(PolynomialTrigonometry<Double>.arcsine(x) - Double.asin(x)))
        }
        // Near ±1, where the reduction takes a square root, and tiny arguments.
        for x in [1, -1, 1 - 1e-15, 0.5, 0.5.nextUp, 0.5.nextDown, 1e-300, -1e-300, 0, -0.0] as [Double] {
            worst = max(worst, abs(PolynomialTrigonometry<Double>.arcsine(x) - Double.asin(x)))
        }
        #expect(worst < 1e-13, "\(worst)")
        #expect(PolynomialTrigonometry<Double>.arcsine(.nan).isNaN)
        #expect(PolynomialTrigonometry<Double>.arcsine(1 + 1e-15) == Double.pi / 2)

        var worstFloat: Float = 0
        for i in -20_000...20_000 {
            let x = Float(i) / 20_000
            worstFloat = max(worstFloat, abs(PolynomialTrigonometry<Float>.arcsine(x) - Float(Double.asin(Double(x)))))
        }
        #expect(worstFloat < 1e-6, "\(worstFloat)")
    }

    @Test func arctangentMatchesTheCLibraryInEveryQuadrant() {
        var worst = 0.0
        for i in 0..<100_000 {
            // Points on circles of several radii, all around.
            let angle = Double(i) / 100_000 * 2 * .pi - .pi
            let radius = [1e-3, 1, 47.4, 1e6][i % 4]
            let (y, x) = (radius * Double.sin(angle), radius * Double.cos(angle))
            worst = max(worst, abs(PolynomialTrigonometry<Double>.arctangent(y: y, x: x) - Double.atan2(y: y, x: x)))
        }
        for (y, x) in [(0.0, 1.0), (1, 0), (0, -1), (-1, 0), (1, 1), (-1, -1), (0.41421356237309503, 1), (1e-300, 1)] {
            worst = max(worst, abs(PolynomialTrigonometry<Double>.arctangent(y: y, x: x) - Double.atan2(y: y, x: x)))
        }
        #expect(worst < 1e-13, "\(worst)")
        // Zeros and infinities: the C library's results.
        for (y, x) in [(0.0, 0.0), (0, -0.0), (-0.0, -1), (.infinity, 1), (1, -.infinity), (.infinity, .infinity)] {
            #expect(PolynomialTrigonometry<Double>.arctangent(y: y, x: x) == Double.atan2(y: y, x: x))
        }
        #expect(PolynomialTrigonometry<Double>.arctangent(y: .nan, x: 1).isNaN)

        var worstFloat: Float = 0
        for i in 0..<20_000 {
            let angle = Float(i) / 20_000 * 2 * .pi - .pi
            let (y, x) = (Float.sin(angle), Float.cos(angle))
            worstFloat = max(worstFloat, abs(PolynomialTrigonometry<Float>.arctangent(y: y, x: x) - Float.atan2(y: y, x: x)))
        }
        #expect(worstFloat < 1e-6, "\(worstFloat)")
    }

    @Test func azimuthIsTheArctangentTurnedIntoOneFullTurn() {
        /// The C library's atan2 in [0, 2π).
        func expected<T: MotionScalar>(_ y: T, _ x: T) -> T {
            let a = T.atan2(y: y, x: x)
            return a < 0 ? a + 2 * T.pi : a + 0
        }
        var worst = 0.0
        for i in 0..<100_000 {
            // Every octant and the boundaries between them, on circles of several radii.
            let angle = Double(i) / 100_000 * 2 * .pi - .pi
            let radius = [1e-3, 1, 47.4, 1e6][i % 4]
            let (y, x) = (radius * Double.sin(angle), radius * Double.cos(angle))
            let azimuth = PolynomialTrigonometry<Double>.azimuth(y: y, x: x)
            #expect(azimuth >= 0 && azimuth <= 2 * .pi)
            // Just below +x the exact result is 2π − a tiny angle: compare on the circle.
            let difference = abs(azimuth - expected(y, x))
            worst = max(worst, min(difference, abs(difference - 2 * .pi)))
        }
        #expect(worst < 1e-13, "\(worst)")
        // The axes, the diagonals, signed zeros, infinities and NaN.
        for (y, x) in [(0.0, 1.0), (1, 0), (0, -1), (-1, 0), (1, 1), (-1, -1), (1, -1), (-1, 1), (-0.0, 1), (-0.0, -1),
                       (0, -0.0), (0, 0), (-0.0, 0), (.infinity, 1), (-1, -.infinity), (-.infinity, .infinity)] {
            let azimuth = PolynomialTrigonometry<Double>.azimuth(y: y, x: x)
            #expect(abs(azimuth - expected(y, x)) < 1e-15, "(\(y), \(x)): \(azimuth)")
            #expect(azimuth.sign == .plus, "(\(y), \(x)): \(azimuth)")
        }
        #expect(PolynomialTrigonometry<Double>.azimuth(y: .nan, x: 1).isNaN)
        #expect(PolynomialTrigonometry<Double>.azimuth(y: 1, x: .nan).isNaN)

        var worstFloat: Float = 0
        for i in 0..<20_000 {
            let angle = Float(i) / 20_000 * 2 * .pi - .pi
            let (y, x) = (Float.sin(angle), Float.cos(angle))
            let difference = abs(PolynomialTrigonometry<Float>.azimuth(y: y, x: x) - expected(y, x))
            worstFloat = max(worstFloat, min(difference, abs(difference - 2 * .pi)))
        }
        #expect(worstFloat < 1e-6, "\(worstFloat)")
    }

    @Test func rotationSeriesMatchesTheCLibraryUpToItsLimit() {
        // Rotation vectors in every direction, 0 to 0.35 rad: the series below 0.3 rad, sin and cos above.
        var generator = SeededGenerator(seed: 1)
        var worst = 0.0
        for i in 0..<20_000 {
            let direction = SIMD3<Double>(
                .random(in: -1...1, using: &generator), .random(in: -1...1, using: &generator),
                .random(in: -1...1, using: &generator))
            let length = (direction * direction).sum().squareRoot()
            guard length > 1e-3 else { continue }
            let v = direction / length * (0.35 * Double(i) / 20_000)
            let q = AttitudeEstimator<Double>.exponential(v), exact = Quaternion<Double>(rotationVector: v)
            worst = max(worst, abs(q.w - exact.w), abs(q.x - exact.x), abs(q.y - exact.y), abs(q.z - exact.z))
        }
        #expect(worst < 3e-15, "\(worst)")
    }

    @Test func cosineAndSineMatchTheCLibraryUpToAQuarterTurn() {
        var worst = 0.0
        for i in -200_000...200_000 {
            let x = Double(i) / 200_000 * (Double.pi / 2)
            let (c, s) = PolynomialTrigonometry<Double>.cosineSine(x)
            worst = max(worst, abs(c - Double.cos(x)), abs(s - Double.sin(x)))
        }
        #expect(worst < 5e-16, "\(worst)")
        // Beyond ±π/2 and NaN: the C library's.
        for x in [2.0, -3, 100, .nan] {
            let (c, s) = PolynomialTrigonometry<Double>.cosineSine(x)
            #expect(c.isNaN ? Double.cos(x).isNaN : c == Double.cos(x))
            #expect(s.isNaN ? Double.sin(x).isNaN : s == Double.sin(x))
        }

        var worstFloat: Float = 0
        for i in -20_000...20_000 {
            let x = Float(i) / 20_000 * (Float.pi / 2)
            let (c, s) = PolynomialTrigonometry<Float>.cosineSine(x)
            worstFloat = max(worstFloat, abs(c - Float(Double.cos(Double(x)))), abs(s - Float(Double.sin(Double(x)))))
        }
        #expect(worstFloat < 3e-7, "\(worstFloat)")
    }
}
