public import MotionCore
public import RealModule

/// Coefficients of a second-order Butterworth low-pass filter for one sample interval (bilinear transform).
///
/// The cutoff is set from a time constant τ as `fc = √2 / (2π·τ)`, so that the filter's non-oscillating step
/// response settles like a first-order filter with time constant τ.
@usableFromInline
struct ButterworthCoefficients<Scalar: MotionScalar>: Sendable, Codable {
    @usableFromInline var b0: Scalar = 0
    @usableFromInline var a1: Scalar = 0
    @usableFromInline var a2: Scalar = 0
    /// The interval these coefficients were computed for, in seconds (0 before the first computation).
    @usableFromInline var interval: Double = 0
    /// The time constant in seconds.
    @usableFromInline let tau: Double

    @inlinable
    init(tau: Double) {
        self.tau = tau
    }

    /// Recomputes the coefficients when `dt` differs from the last interval by more than 1 part in 10⁶.
    /// The check is inlined; the rare recomputation is not, so that callers need not save registers around it.
    @inlinable @inline(__always)
    mutating func update(interval dt: Double) {
        guard Self.differs(dt, from: interval) else { return }
        recompute(interval: dt)
    }

    /// `true` when an interval `dt` (s) differs from `last` by more than 1 part in 10⁶: then coefficients
    /// computed for `last` are not reused for `dt`.
    @inlinable @inline(__always)
    static func differs(_ dt: Double, from last: Double) -> Bool {
        abs(dt - last) > 1e-6 * dt
    }

    @inlinable @inline(never)
    mutating func recompute(interval dt: Double) {
        interval = dt
        let fc = 2.0.squareRoot() / (2 * Double.pi * tau)
        let c = Double.tan(Double.pi * fc * dt)
        let d = c * c + 2.0.squareRoot() * c + 1
        b0 = Scalar(c * c / d)
        a1 = Scalar(2 * (c * c - 1) / d)
        a2 = Scalar((1 - 2.0.squareRoot() * c + c * c) / d)
    }
}

/// A second-order Butterworth low-pass filter over a SIMD vector, in transposed direct form II.
///
/// Until τ seconds of input have been seen, the output is the running mean of the input; then the filter
/// starts in steady state at that mean. This avoids the start-up transient of a filter started from zero.
@usableFromInline
struct ButterworthLowPass<Vector: SIMD & Sendable>: Sendable, Codable where Vector.Scalar: MotionScalar {
    @usableFromInline typealias Scalar = Vector.Scalar
    @usableFromInline var state0: Vector = .zero
    @usableFromInline var state1: Vector = .zero
    /// Accumulated input time during the running-mean phase, in seconds; negative once filtering.
    @usableFromInline var warmUpTime: Double = 0
    @usableFromInline var warmUpCount: Scalar = 0
    /// The last output of ``update(_:interval:coefficients:)`` (``filter(_:interval:coefficients:)`` leaves it).
    @usableFromInline var output: Vector = .zero

    @inlinable
    init() {}

    /// Filters `x` and keeps the result in ``output``.
    @inlinable @inline(__always)
    mutating func update(_ x: Vector, interval dt: Double, coefficients k: ButterworthCoefficients<Scalar>) -> Vector {
        let y = filter(x, interval: dt, coefficients: k)
        output = y
        return y
    }

    /// Filters `x` and returns the result only.
    @inlinable @inline(__always)
    mutating func filter(_ x: Vector, interval dt: Double, coefficients k: ButterworthCoefficients<Scalar>) -> Vector {
        if warmUpTime >= 0 { return warmUp(x, interval: dt, coefficients: k) }
        let b0 = k.b0
        let y = b0 * x + state0
        state0 = (2 * b0) * x - k.a1 * y + state1
        state1 = b0 * x - k.a2 * y
        return y
    }

    /// Continues in steady state at `y` (as after a constant input `y`) with the coefficients `k`: a change of
    /// coefficients without a jump.
    @inlinable
    mutating func restart(at y: Vector, coefficients k: ButterworthCoefficients<Scalar>) {
        state0 = y * (1 - k.b0)
        state1 = y * (k.b0 - k.a2)
        warmUpTime = -1
    }

    /// The running-mean phase: the first τ seconds.
    @inlinable @inline(__always)
    mutating func warmUp(_ x: Vector, interval dt: Double, coefficients k: ButterworthCoefficients<Scalar>) -> Vector {
        warmUpCount += 1
        state0 += x  // the running sum while warming up
        warmUpTime += dt
        let mean = state0 / warmUpCount
        if warmUpTime >= k.tau {
            state0 = mean * (1 - k.b0)
            state1 = mean * (k.b0 - k.a2)
            warmUpTime = -1
        }
        return mean
    }
}
