public import MotionCore
public import RealModule

/// How much of each new sample a first-order filter takes in.
public struct FilterSmoothing<Scalar: MotionScalar>: Hashable, Sendable {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case factor(Scalar)
        case cutoff(hertz: Scalar)
    }

    @usableFromInline
    let kind: Kind

    @usableFromInline
    init(kind: Kind) { self.kind = kind }

    /// A fixed filtering factor α in [0, 1], applied on every sample whatever the interval between samples:
    /// `y = α·x + (1 − α)·y_prev` (the iPhone Application Programming Guide's listings 8-5 and 8-6, whose
    /// `kFilteringFactor` is 0.1). Its cutoff frequency depends on the sample rate: fc ≈ α·rate / (2π).
    ///
    /// - Precondition: `0 ≤ α ≤ 1`.
    @inlinable
    public static func factor(_ alpha: Scalar) -> FilterSmoothing {
        precondition(alpha >= 0 && alpha <= 1, "The filtering factor must be in [0, 1], got \(alpha).")
        return FilterSmoothing(kind: .factor(alpha))
    }

    /// A cutoff frequency in hertz; the factor is computed from each sample's interval `dt` (seconds) as
    /// `α = 1 − exp(−2π·fc·dt)`, so the filter is the exact sampled RC filter (time constant 1/(2π·fc)) for
    /// piecewise-constant input, however irregular the intervals.
    ///
    /// - Precondition: `hertz > 0` and finite.
    @inlinable
    public static func cutoff(hertz: Scalar) -> FilterSmoothing {
        precondition(hertz > 0 && hertz.isFinite, "The cutoff frequency must be a positive number of hertz, got \(hertz).")
        return FilterSmoothing(kind: .cutoff(hertz: hertz))
    }

    /// The iPhone guide's default: a factor of 0.1.
    @inlinable
    public static var `default`: FilterSmoothing { .factor(0.1) }
}

/// Where a first-order filter's state starts.
public enum FilterStart: String, Hashable, Sendable, CaseIterable {
    /// The state starts at zero, exactly as the iPhone guide's listings (whose `accelX` starts at 0): the
    /// low-pass output rises from 0 towards the input.
    case zero
    /// The first sample becomes the state: a constant input low-passes to itself and high-passes to zero from
    /// the first sample on.
    case firstSample
}

/// A per-axis first-order low-pass filter: `y = α·x + (1 − α)·y_prev`.
///
/// A pure value-type state machine: it takes each sample's timestamp as input, reads no clock, does no I/O and
/// allocates nothing. Generic over `Float` and `Double`.
public struct LowPassFilter<Scalar: MotionScalar>: Sendable {
    /// The smoothing the filter was created with.
    public let smoothing: FilterSmoothing<Scalar>
    /// How the state started.
    public let start: FilterStart
    /// The current output (the state), in the input's unit; zero before the first sample.
    @inlinable public var value: SIMD3<Scalar> { state }
    /// The timestamp of the last sample, in seconds, or `nil` before the first sample.
    @inlinable public var lastTimestamp: Double? { previousTimestamp }

    @usableFromInline var state: SIMD3<Scalar> = .zero
    @usableFromInline var previousTimestamp: Double?

    /// Creates a filter.
    /// - Parameters:
    ///   - smoothing: A fixed factor or a cutoff frequency; the default is the factor 0.1.
    ///   - start: Where the state starts; the default, `.zero`, is the iPhone guide's behaviour.
    @inlinable
    public init(smoothing: FilterSmoothing<Scalar> = .default, start: FilterStart = .zero) {
        self.smoothing = smoothing
        self.start = start
    }

    /// Filters one sample and returns the new output.
    /// - Parameters:
    ///   - input: The sample, per axis, in any unit (the output has the same unit).
    ///   - timestamp: The sample's time in seconds; only the cutoff form uses it (intervals ≤ 0 change nothing,
    ///     and with `start: .zero` the first sample of the cutoff form, having no interval, leaves the output at
    ///     zero).
    @inlinable
    public mutating func update(_ input: SIMD3<Scalar>, at timestamp: Double) -> SIMD3<Scalar> {
        defer { previousTimestamp = timestamp }
        guard let last = previousTimestamp else {
            switch (start, smoothing.kind) {
            case (.firstSample, _): state = input
            case (.zero, .factor(let alpha)): state = alpha * input
            case (.zero, .cutoff): state = .zero
            }
            return state
        }
        let alpha: Scalar
        switch smoothing.kind {
        case .factor(let factor):
            alpha = factor
        case .cutoff(let hertz):
            let dt = timestamp - last
            guard dt > 0 else { return state }
            alpha = -Scalar.expMinusOne(-2 * Scalar.pi * hertz * Scalar(dt))
        }
        state = alpha * input + (1 - alpha) * state
        return state
    }

    /// Forgets the state, as if no sample had been seen.
    @inlinable
    public mutating func reset() {
        state = .zero
        previousTimestamp = nil
    }
}

/// A per-axis first-order high-pass filter: the input minus its low-pass, `x − lowpass(x)`.
///
/// It keeps a separate low-pass state, as the iPhone guide's listing 8-6 intends (the listing as printed feeds
/// its own high-pass output back as the low-pass state; see `Docs/Filters.md`). It removes slowly changing
/// parts, such as gravity from acceleration. Pure, allocation-free, generic over `Float` and `Double`.
public struct HighPassFilter<Scalar: MotionScalar>: Sendable {
    /// The low-pass filter whose output is subtracted.
    @inlinable public var lowPass: LowPassFilter<Scalar> { lowPassState }
    /// The current output, in the input's unit; zero before the first sample.
    @inlinable public var value: SIMD3<Scalar> { state }

    @usableFromInline var lowPassState: LowPassFilter<Scalar>
    @usableFromInline var state: SIMD3<Scalar> = .zero

    /// Creates a filter.
    /// - Parameters:
    ///   - smoothing: The low-pass smoothing to subtract; the default is the factor 0.1.
    ///   - start: Where the low-pass state starts; the default, `.zero`, is the iPhone guide's behaviour.
    @inlinable
    public init(smoothing: FilterSmoothing<Scalar> = .default, start: FilterStart = .zero) {
        lowPassState = LowPassFilter(smoothing: smoothing, start: start)
    }

    /// Filters one sample and returns the new output; see ``LowPassFilter/update(_:at:)`` for `timestamp`.
    @inlinable
    public mutating func update(_ input: SIMD3<Scalar>, at timestamp: Double) -> SIMD3<Scalar> {
        state = input - lowPassState.update(input, at: timestamp)
        return state
    }

    /// Forgets the state, as if no sample had been seen.
    @inlinable
    public mutating func reset() {
        lowPassState.reset()
        state = .zero
    }
}
