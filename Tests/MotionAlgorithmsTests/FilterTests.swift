import MotionAlgorithms
import MotionCore
import RealModule
import Testing
import TestThreads

/// Filters against closed-form responses, for Float and Double.
@Suite(.computeBound) struct FilterTests {
    @Test func lowPassStepResponseMatchesTheListing() {
        stepResponse(Float.self, tolerance: 1e-5)
        stepResponse(Double.self, tolerance: 1e-12)
    }

    /// Listing 8-5 from zero: after n samples of a unit step, y = 1 − (1 − α)ⁿ.
    func stepResponse<T: MotionScalar>(_: T.Type, tolerance: T) {
        for alpha: T in [0.1, 0.5, 1, 0] {
            var filter = LowPassFilter<T>(smoothing: .factor(alpha))
            for n in 1...60 {
                let y = filter.update(SIMD3(1, 2, -3), at: Double(n))
                let expected = 1 - T.pow(1 - alpha, n)
                #expect(abs(y.x - expected) <= tolerance)
                #expect(abs(y.y - 2 * expected) <= 2 * tolerance)
                #expect(abs(y.z + 3 * expected) <= 3 * tolerance)
            }
        }
    }

    @Test func defaultIsTheGuidesFactorFromZero() {
        var filter = LowPassFilter<Double>()
        #expect(filter.smoothing == .factor(0.1))
        #expect(filter.start == .zero)
        #expect(filter.update(SIMD3(10, 0, 0), at: 0).x == 1)
    }

    @Test func cutoffFormIsExactForAnyIntervals() {
        cutoffStep(Double.self, tolerance: 1e-12)
        cutoffStep(Float.self, tolerance: 2e-5)
    }

    /// A unit step through an RC low-pass with time constant τ = 1/(2π·fc): y(t) = 1 − exp(−t/τ), sampled at
    /// irregular instants.
    func cutoffStep<T: MotionScalar>(_: T.Type, tolerance: T) {
        let cutoff: T = 2
        var filter = LowPassFilter<T>(smoothing: .cutoff(hertz: cutoff), start: .firstSample)
        _ = filter.update(.zero, at: 0)
        var t = 0.0
        var generator = 12345 as UInt64
        for _ in 0..<400 {
            generator = generator &* 6364136223846793005 &+ 1442695040888963407
            t += 0.001 + Double(generator >> 40) / Double(1 << 24) * 0.02  // 1–21 ms, irregular
            let y = filter.update(SIMD3(repeating: 1), at: t)
            let expected = 1 - T.exp(-2 * T.pi * cutoff * T(t))
            #expect(abs(y.x - expected) <= tolerance, "t = \(t)")
        }
    }

    @Test func cutoffFormIgnoresRepeatedTimestamps() {
        var filter = LowPassFilter<Double>(smoothing: .cutoff(hertz: 5), start: .firstSample)
        _ = filter.update(.zero, at: 1)
        let once = filter.update(SIMD3(repeating: 1), at: 1.01)
        #expect(filter.update(SIMD3(repeating: 100), at: 1.01) == once)
    }

    @Test func cutoffFromZeroStartsTheClockOnTheFirstSample() {
        var filter = LowPassFilter<Double>(smoothing: .cutoff(hertz: 1))
        #expect(filter.update(SIMD3(repeating: 1), at: 0) == .zero)
        #expect(filter.update(SIMD3(repeating: 1), at: 1).x == 1 - Double.exp(-2 * .pi))
    }

    @Test func constantInputHighPassesToZero() {
        var fromZero = HighPassFilter<Double>()
        var last = SIMD3<Double>.zero
        for n in 1...400 {
            last = fromZero.update(SIMD3(0, -1, 0), at: Double(n) * 0.01)
            // x − (1 − (1−α)ⁿ)·x = (1−α)ⁿ·x: decays geometrically.
            #expect(abs(last.y + Double.pow(0.9, n)) < 1e-12)
        }
        #expect(abs(last.y) < 1e-15)

        var fromFirst = HighPassFilter<Float>(smoothing: .cutoff(hertz: 3), start: .firstSample)
        for n in 0..<50 {
            #expect(fromFirst.update(SIMD3(0.2, -1, 0.1), at: Double(n) * 0.013) == .zero)
        }
    }

    @Test func highPassPlusLowPassIsTheInput() {
        var high = HighPassFilter<Double>(smoothing: .factor(0.3))
        var low = LowPassFilter<Double>(smoothing: .factor(0.3))
        for n in 0..<100 {
            let x = SIMD3(Double.sin(Double(n)), Double(n % 7), -2)
            let sum = high.update(x, at: Double(n)) + low.update(x, at: Double(n))
            #expect(((sum - x) * (sum - x)).sum() < 1e-24)
            #expect(high.lowPass.value == low.value)
        }
    }

    @Test func resetForgetsTheState() {
        var filter = HighPassFilter<Double>(smoothing: .cutoff(hertz: 1))
        _ = filter.update(SIMD3(repeating: 1), at: 0)
        _ = filter.update(SIMD3(repeating: 5), at: 0.5)
        filter.reset()
        #expect(filter.value == .zero && filter.lowPass.lastTimestamp == nil)
        #expect(filter.update(SIMD3(repeating: 1), at: 7) == SIMD3(repeating: 1))
    }
}
