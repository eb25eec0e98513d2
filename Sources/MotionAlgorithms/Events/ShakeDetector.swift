public import MotionCore
public import RealModule

/// Recognises shake gestures in accelerometer samples, with UIKit's began/ended/cancelled semantics.
///
/// A shake is a quick back-and-forth of the device along one line. Each sample goes through:
/// 1. **Gravity removal**: a low-pass at ``Configuration/gravityCutoff`` (default 0.8 Hz) estimates gravity,
///    which is subtracted; a second low-pass at ``Configuration/smoothingCutoff`` (default 15 Hz) removes
///    noise and vibration. The result is the linear acceleration `v` (g).
/// 2. **Strokes**: a stroke starts when `v` exceeds ``Configuration/threshold`` (default 0.3 g) pointing
///    against the previous stroke (projected on its direction). Consecutive strokes must start between
///    `1/(2·fmax)` and `1/(2·fmin)` apart, the half periods of ``Configuration/frequencyBand`` (default
///    1.5–10 Hz), give or take one sample interval; a stroke outside that band, or one in the same direction as
///    the previous, starts a new sequence.
/// 3. **Line test**: the second moments of `v` over the sequence must put at least
///    ``Configuration/minimumLinearity`` (default 0.97) of the energy on one line. A shake is a reciprocation
///    along one line; walking and running add sideways and forwards sway to their vertical bounce.
/// 4. **Stroke balance**: the weakest completed stroke's peak must be at least
///    ``Configuration/minimumStrokeBalance`` (default 1/3) of the gesture's strongest acceleration (strongest
///    completed stroke, or the recent peak decaying over the end delay): a tap's impulse and ringing rebound are
///    not a back-and-forth.
/// 5. **Phases**: ``ShakeEvent/Phase/began`` once ``Configuration/minimumReversals`` reversals (default 2, so
///    three strokes: one full back-and-forth) pass the line and balance tests; ``ShakeEvent/Phase/ended`` when
///    no stroke starts for `1.2/(2·fmin)` (0.4 s); ``ShakeEvent/Phase/cancelled(_:)`` when a stroke starts more than
///    ``Configuration/maximumDuration`` (default 1 s) after the first (`tooLong`), when the line test fails
///    (`notAShake`), or on ``cancel(at:)``. After a cancel, nothing begins until the motion has stopped.
///
/// Taps and set-down bumps make at most two strokes, or an unbalanced three when they ring; tilts and rotations
/// one; a phone's vibration motor stays below the threshold after smoothing. `Docs/MotionEvents.md` compares this
/// with Square's seismic.
///
/// A pure value-type state machine: it reads no clock (timestamps are input), does no I/O and allocates
/// nothing. Generic over `Float` and `Double`.
///
/// ```swift
/// var detector = ShakeDetector<Double>()
/// for sample in samples {
///     guard let a = sample.acceleration else { continue }
///     if let event = detector.update(a.vector, at: sample.timestamp), event.phase == .ended {
///         print("shake along \(event.axis)")
///     }
/// }
/// ```
public struct ShakeDetector<Scalar: MotionScalar>: Sendable {
    /// The detector's sensitivity and timing. Every default is documented with its unit.
    public struct Configuration: Hashable, Sendable {
        /// The linear acceleration a stroke must reach, in g (after gravity removal and smoothing). Default
        /// 0.3 g: every shake of 0.5 g or more at 2–8 Hz lasting 0.2 s or more passes at 100 Hz, whatever the
        /// sampling phase of its short first and last strokes. Walking's bounce (≈ 0.27 g peaks) stays below it,
        /// and the line test rejects gaits anyway.
        public var threshold: Scalar
        /// The band of shake frequencies (full back-and-forth cycles per second), in Hz. Default 1.5–10 Hz.
        public var frequencyBand: ClosedRange<Scalar>
        /// How many reversals (changes of direction) make a shake begin. Default 2: three strokes, one full
        /// back-and-forth.
        public var minimumReversals: Int
        /// The fraction of the motion's energy that must lie along one line, in [0, 1]. Default 0.97.
        public var minimumLinearity: Scalar
        /// The longest shake that ends rather than being cancelled, in seconds. Default 1 s (UIKit's Event
        /// Handling Guide).
        public var maximumDuration: Double
        /// The cutoff of the gravity estimate, in Hz. Default 0.8 Hz.
        public var gravityCutoff: Scalar
        /// The cutoff of the smoothing applied to the linear acceleration, in Hz. Default 15 Hz.
        public var smoothingCutoff: Scalar
        /// A gap between samples longer than this, in seconds, restarts the detector (cancelling a shake in
        /// progress as `interrupted`). Default 0.5 s.
        public var maximumGap: Double
        /// The smallest ratio of the weakest completed stroke's peak to the strongest acceleration of the gesture
        /// (the strongest completed stroke, or any linear acceleration in the last moments: a peak that decays
        /// linearly to zero over ``endDelay``) before a shake may begin, in [0, 1]. Default 1/3. A shake moves
        /// the device back and forth, so each stroke undoes the last and their peaks are alike (1 for the
        /// simulator's sinusoids); a tap is an impulse followed by a decaying rebound (a 5 g spike, then about 1 g
        /// and 0.5 g on real recordings), far from balanced even when the rebound alone looks like a shake.
        public var minimumStrokeBalance: Scalar

        /// Creates a configuration; every parameter has the documented default.
        ///
        /// - Precondition: `threshold > 0`; `0 < frequencyBand.lowerBound < frequencyBand.upperBound`;
        ///   `minimumReversals ≥ 1`; `0 ≤ minimumLinearity ≤ 1`; `maximumDuration > 0`;
        ///   `0 < gravityCutoff < smoothingCutoff`; `maximumGap > 0`; all finite.
        @inlinable
        public init(
            threshold: Scalar = 0.3,
            frequencyBand: ClosedRange<Scalar> = 1.5...10,
            minimumReversals: Int = 2,
            minimumLinearity: Scalar = 0.97,
            maximumDuration: Double = 1,
            gravityCutoff: Scalar = 0.8,
            smoothingCutoff: Scalar = 15,
            maximumGap: Double = 0.5,
            minimumStrokeBalance: Scalar = 1 / 3
        ) {
            precondition(
                threshold > 0 && threshold.isFinite, "The threshold must be a positive number of g, got \(threshold).")
            precondition(
                frequencyBand.lowerBound > 0 && frequencyBand.upperBound > frequencyBand.lowerBound
                    && frequencyBand.upperBound.isFinite,
                "The frequency band must be a finite range of positive hertz, got \(frequencyBand).")
            precondition(minimumReversals >= 1, "At least one reversal is needed, got \(minimumReversals).")
            precondition(
                minimumLinearity >= 0 && minimumLinearity <= 1,
                "The minimum linearity must be in [0, 1], got \(minimumLinearity).")
            precondition(
                maximumDuration > 0 && maximumDuration.isFinite,
                "The maximum duration must be > 0 s, got \(maximumDuration).")
            precondition(
                gravityCutoff > 0 && smoothingCutoff > gravityCutoff && smoothingCutoff.isFinite,
                "The cutoffs must satisfy 0 < gravityCutoff < smoothingCutoff, got \(gravityCutoff) and \(smoothingCutoff)."
            )
            precondition(maximumGap > 0 && maximumGap.isFinite, "The maximum gap must be > 0 s, got \(maximumGap).")
            precondition(
                minimumStrokeBalance >= 0 && minimumStrokeBalance <= 1,
                "The minimum stroke balance must be in [0, 1], got \(minimumStrokeBalance).")
            self.threshold = threshold
            self.frequencyBand = frequencyBand
            self.minimumReversals = minimumReversals
            self.minimumLinearity = minimumLinearity
            self.maximumDuration = maximumDuration
            self.gravityCutoff = gravityCutoff
            self.smoothingCutoff = smoothingCutoff
            self.maximumGap = maximumGap
            self.minimumStrokeBalance = minimumStrokeBalance
        }

        /// The shortest time between the starts of two strokes, in seconds: half a period at the top of the band.
        @inlinable public var shortestStroke: Double { 0.5 / Double(frequencyBand.upperBound) }
        /// The longest time between the starts of two strokes, in seconds: half a period at the bottom of the
        /// band.
        @inlinable public var longestStroke: Double { 0.5 / Double(frequencyBand.lowerBound) }
        /// How long without a new stroke ends a shake, in seconds: 1.2 × ``longestStroke`` (0.4 s by default).
        @inlinable public var endDelay: Double { 1.2 * longestStroke }
    }

    @usableFromInline
    enum Phase: Hashable, Sendable {
        /// No shake: strokes may be accumulating towards one.
        case idle
        /// A shake has begun.
        case active
        /// A shake was cancelled; nothing begins until the strokes stop.
        case suppressed
    }

    /// The settings.
    public let configuration: Configuration

    /// `true` between a ``ShakeEvent/Phase/began`` and its ``ShakeEvent/Phase/ended`` or
    /// ``ShakeEvent/Phase/cancelled(_:)``.
    @inlinable public var isShaking: Bool { phase == .active }
    /// The linear acceleration after gravity removal and smoothing, in g; zero before the second sample.
    @inlinable package var linearAcceleration: SIMD3<Scalar> { smoothed }
    /// The gravity estimate, in g; zero before the first sample.
    @inlinable package var gravity: SIMD3<Scalar> { gravityEstimate }

    @usableFromInline var gravityEstimate: SIMD3<Scalar> = .zero
    @usableFromInline var smoothed: SIMD3<Scalar> = .zero
    @usableFromInline var lastTimestamp: Double?
    @usableFromInline var phase: Phase = .idle
    /// The unit direction of the current stroke.
    @usableFromInline var direction: SIMD3<Scalar> = .zero
    /// Strokes in the current sequence; 0 when there is none.
    @usableFromInline var strokes = 0
    @usableFromInline var strokeStart: Double = 0
    @usableFromInline var sequenceStart: Double = 0
    /// Whether the projection on the stroke direction has fallen below half the threshold since the stroke
    /// started (so a new rise in the same direction is a new stroke).
    @usableFromInline var armed = false
    @usableFromInline var peak: Scalar = 0
    /// The current stroke's peak along its direction, and the weakest and strongest completed strokes' peaks.
    @usableFromInline var strokePeak: Scalar = 0
    @usableFromInline var weakestStroke: Scalar = .infinity
    @usableFromInline var strongestStroke: Scalar = 0
    /// The largest linear acceleration lately, decaying linearly to zero over the end delay, in g.
    @usableFromInline var recentPeak: Scalar = 0
    /// Time-weighted second moments of the linear acceleration over the sequence: xx, yy, zz and xy, xz, yz.
    @usableFromInline var diagonalMoments: SIMD3<Scalar> = .zero
    @usableFromInline var crossMoments: SIMD3<Scalar> = .zero

    /// Creates a detector.
    /// - Parameter configuration: The settings; the default is documented on each ``Configuration`` property.
    @inlinable
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Takes one accelerometer sample and returns the shake event it completes, if any.
    ///
    /// - Parameters:
    ///   - acceleration: The reading in g, Core Motion's sign (gravity plus user acceleration).
    ///   - timestamp: The sample's time in seconds. A sample that is not later than the previous one, or that
    ///     has a non-finite component, is ignored.
    /// - Returns: At most one event: ``ShakeEvent/Phase/began``, ``ShakeEvent/Phase/ended`` or
    ///   ``ShakeEvent/Phase/cancelled(_:)``.
    @inlinable
    public mutating func update(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> ShakeEvent? {
        guard acceleration.x.isFinite, acceleration.y.isFinite, acceleration.z.isFinite, timestamp.isFinite else {
            return nil
        }
        guard let last = lastTimestamp else {
            start(at: timestamp, with: acceleration)
            return nil
        }
        guard timestamp > last else { return nil }
        let dt = timestamp - last
        if dt > configuration.maximumGap {
            let event = phase == .active ? makeEvent(.cancelled(.interrupted), at: timestamp) : nil
            start(at: timestamp, with: acceleration)
            return event
        }
        lastTimestamp = timestamp

        // 1. Linear acceleration: minus a low-passed gravity, then smoothed.
        let gravityFactor = -Scalar.expMinusOne(-2 * Scalar.pi * configuration.gravityCutoff * Scalar(dt))
        gravityEstimate += gravityFactor * (acceleration - gravityEstimate)
        let smoothingFactor = -Scalar.expMinusOne(-2 * Scalar.pi * configuration.smoothingCutoff * Scalar(dt))
        smoothed += smoothingFactor * (acceleration - gravityEstimate - smoothed)
        let v = smoothed

        var event: ShakeEvent?
        // 2. The end of a sequence: no stroke for the end delay.
        if strokes > 0 && timestamp - strokeStart > configuration.endDelay {
            if phase == .active { event = makeEvent(.ended, at: timestamp) }
            phase = .idle
            strokes = 0
        }
        if strokes > 0 {
            diagonalMoments += v * v * Scalar(dt)
            crossMoments += SIMD3(v.x * v.y, v.x * v.z, v.y * v.z) * Scalar(dt)
        }

        // 3. Strokes.
        let magnitude = (v * v).sum().squareRoot()
        recentPeak = max(magnitude, recentPeak * max(1 - Scalar(dt / configuration.endDelay), 0))
        let threshold = configuration.threshold
        if strokes == 0 {
            if magnitude >= threshold { startSequence(at: timestamp, along: v, magnitude: magnitude) }
            return event
        }
        let projection = (v * direction).sum()
        if projection < threshold / 2 { armed = true }
        if projection >= threshold && armed {
            // The same direction again: not a back-and-forth.
            return restart(at: timestamp, along: v, magnitude: magnitude) ?? event
        }
        if projection > peak { peak = projection }
        if projection > strokePeak { strokePeak = projection }
        guard projection <= -threshold else { return event }

        // A reversal. Stroke starts are only known to within a sample interval, so the band's bounds are
        // widened by one.
        let interval = timestamp - strokeStart
        guard interval >= configuration.shortestStroke - dt && interval <= configuration.longestStroke + dt else {
            return restart(at: timestamp, along: v, magnitude: magnitude) ?? event
        }
        strokes += 1
        strokeStart = timestamp
        direction = v / magnitude
        armed = false
        if magnitude > peak { peak = magnitude }
        weakestStroke = min(weakestStroke, strokePeak)
        strongestStroke = max(strongestStroke, strokePeak)
        strokePeak = magnitude
        return phaseChange(at: timestamp) ?? event
    }

    /// Cancels a shake in progress, as UIKit does when the app is interrupted, and forgets the strokes seen.
    ///
    /// - Parameter timestamp: The time of the interruption, in seconds.
    /// - Returns: ``ShakeEvent/Phase/cancelled(_:)`` with ``ShakeEvent/CancelReason/interrupted`` when a shake
    ///   had begun; otherwise `nil`.
    @inlinable
    public mutating func cancel(at timestamp: Double) -> ShakeEvent? {
        let event = phase == .active ? makeEvent(.cancelled(.interrupted), at: timestamp) : nil
        phase = .idle
        strokes = 0
        return event
    }

    /// Forgets everything, as if no sample had been seen (no event is produced).
    @inlinable
    public mutating func reset() {
        self = ShakeDetector(configuration: configuration)
    }

    // MARK: - Internals

    /// Starts over from `acceleration`: gravity is the first sample, no strokes.
    @inlinable
    mutating func start(at timestamp: Double, with acceleration: SIMD3<Scalar>) {
        lastTimestamp = timestamp
        gravityEstimate = acceleration
        smoothed = .zero
        recentPeak = 0
        phase = .idle
        strokes = 0
    }

    /// A new sequence whose first stroke starts now.
    @inlinable
    mutating func startSequence(at timestamp: Double, along v: SIMD3<Scalar>, magnitude: Scalar) {
        strokes = 1
        strokeStart = timestamp
        sequenceStart = timestamp
        direction = v / magnitude
        armed = false
        peak = magnitude
        strokePeak = magnitude
        weakestStroke = .infinity
        strongestStroke = 0
        diagonalMoments = .zero
        crossMoments = .zero
    }

    /// A stroke that breaks the rhythm: a shake in progress has ended (a cancelled one stays suppressed), and
    /// the stroke starts a new sequence.
    @inlinable
    mutating func restart(at timestamp: Double, along v: SIMD3<Scalar>, magnitude: Scalar) -> ShakeEvent? {
        let event = phase == .active ? makeEvent(.ended, at: timestamp) : nil
        if phase == .active { phase = .idle }
        startSequence(at: timestamp, along: v, magnitude: magnitude)
        return event
    }

    /// Begins, or cancels, after a reversal.
    @inlinable
    mutating func phaseChange(at timestamp: Double) -> ShakeEvent? {
        switch phase {
        case .suppressed:
            return nil
        case .active:
            if timestamp - sequenceStart > configuration.maximumDuration {
                phase = .suppressed
                return makeEvent(.cancelled(.tooLong), at: timestamp)
            }
            if linearity < configuration.minimumLinearity {
                phase = .suppressed
                return makeEvent(.cancelled(.notAShake), at: timestamp)
            }
            return nil
        case .idle:
            guard strokes > configuration.minimumReversals,
                timestamp - sequenceStart <= configuration.maximumDuration,
                linearity >= configuration.minimumLinearity,
                weakestStroke >= configuration.minimumStrokeBalance * max(strongestStroke, recentPeak)
            else { return nil }
            phase = .active
            return makeEvent(.began, at: timestamp)
        }
    }

    /// The fraction of the sequence's energy along its principal direction: the largest eigenvalue of the
    /// second-moment matrix over its trace (1 for a motion along one line, 1/3 for an isotropic one).
    @inlinable
    var linearity: Scalar {
        let trace = diagonalMoments.sum()
        guard trace > 0 else { return 1 }
        return Self.largestEigenvalue(diagonal: diagonalMoments, offDiagonal: crossMoments) / trace
    }

    /// The largest eigenvalue of the symmetric 3 × 3 matrix with `diagonal` (a11, a22, a33) and `offDiagonal`
    /// (a12, a13, a23), in closed form (trigonometric solution of the characteristic cubic).
    @inlinable
    static func largestEigenvalue(diagonal d: SIMD3<Scalar>, offDiagonal o: SIMD3<Scalar>) -> Scalar {
        let p1 = (o * o).sum()
        let q = d.sum() / 3
        let centred = d - q
        let p2 = (centred * centred).sum() + 2 * p1
        guard p2 > 0 else { return q }
        let p = (p2 / 6).squareRoot()
        let b = centred / p
        let (b12, b13, b23) = (o.x / p, o.y / p, o.z / p)
        let determinant =
            b.x * (b.y * b.z - b23 * b23) - b12 * (b12 * b.z - b23 * b13) + b13 * (b12 * b23 - b.y * b13)
        let r = min(max(determinant / 2, -1), 1)
        let phi = Scalar.acos(r) / 3
        return q + 2 * p * Scalar.cos(phi)
    }

    /// The device axis with the most energy in the sequence.
    @inlinable
    var dominantAxis: ShakeEvent.Axis {
        let e = diagonalMoments
        if e.x >= e.y && e.x >= e.z { return .x }
        return e.y >= e.z ? .y : .z
    }

    @inlinable
    func makeEvent(_ phase: ShakeEvent.Phase, at timestamp: Double) -> ShakeEvent {
        ShakeEvent(
            phase: phase, timestamp: timestamp, axis: dominantAxis, startTime: sequenceStart, strokes: strokes,
            peakAcceleration: Double(peak))
    }
}
