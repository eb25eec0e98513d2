public import MotionCore
public import RealModule

/// What the person carrying the device is doing, in Core Motion's `CMMotionActivity` terms (without automotive
/// and cycling, which are not validated: such motion is ``unknown``).
public enum MotionActivityKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Not known yet, or moving without steps (in a vehicle, on a bicycle, moving the device by hand).
    case unknown
    /// The device is still: on a table, or carried by someone who does not move.
    case stationary
    /// Steps at a walking cadence.
    case walking
    /// Steps at a running cadence.
    case running

    /// The name, such as `walking`.
    public var description: String { rawValue }
}

/// How sure the classifier is, as Core Motion's `CMMotionActivityConfidence`.
public enum MotionActivityConfidence: String, Hashable, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// `unknown` is always low.
    case low
    /// Near a boundary: a cadence within `ActivityClassifier.Configuration.cadenceMargin` of the walk/run
    /// boundary, or stillness close to the threshold.
    case medium
    /// Far from every boundary.
    case high

    /// `low`, `medium` or `high`.
    public var description: String { rawValue }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        let order: [Self] = [.low, .medium, .high]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}

/// An activity, from when it started.
public struct MotionActivity: Hashable, Sendable, CustomStringConvertible {
    /// The activity.
    public var kind: MotionActivityKind
    /// How sure the classifier was when it reported it.
    public var confidence: MotionActivityConfidence
    /// When the classifier reported it, in seconds (the samples' clock).
    public var timestamp: Double

    /// Creates an activity.
    public init(kind: MotionActivityKind, confidence: MotionActivityConfidence, timestamp: Double) {
        self.kind = kind
        self.confidence = confidence
        self.timestamp = timestamp
    }

    /// `12.340 walking (high)`.
    public var description: String {
        "\((timestamp * 1000).rounded() / 1000) \(kind) (\(confidence))"
    }
}

/// Classifies what the carrier is doing: stationary, walking, running or unknown, with a confidence and without
/// flicker.
///
/// Each sample gives a *candidate*:
/// - **walking** or **running** while the ``StepDetector`` is counting steps (its gait tests pass and the last
///   step is at most `Configuration.stepTimeout` old, 1.5 s by default). Running when the cadence is at least
///   `Configuration.runningCadence` (default 2.5 steps/s, 150 steps/min); with hysteresis: a runner stays running
///   down to `runningCadence − cadenceHysteresis` (2.4 steps/s), a walker becomes a runner above
///   `runningCadence + cadenceHysteresis` (2.6 steps/s).
/// - **stationary** when the RMS of the user acceleration (exponentially weighted, time constant
///   `Configuration.stillnessTimeConstant`, 0.5 s) is at most `Configuration.stillnessThreshold` (0.015 g).
/// - **unknown** otherwise: moving without steps (a vehicle, a bicycle, a device handled or shaken).
///
/// The reported activity changes to a candidate only once the candidate has held for
/// `Configuration.dwellTime` (default 2 s), so brief pauses, single stumbles and bumps do not flip it.
/// Confidence: `unknown` is low; walking or running is high when the cadence is at least
/// `Configuration.cadenceMargin` away from the walk/run boundary, else medium; stationary is high when the RMS
/// is under half the threshold, else medium.
///
/// A pure value-type state machine: no clock, no I/O, no allocation. Generic over `Float` and `Double`.
public struct ActivityClassifier<Scalar: MotionScalar>: Sendable {
    /// The classifier's settings. Every default is documented with its unit.
    public struct Configuration: Hashable, Sendable {
        /// The step detector's settings.
        @usableFromInline package var steps: StepDetector<Scalar>.Configuration
        /// The cadence from which steps are running, in steps per second. Default 2.5 steps/s.
        @usableFromInline package var runningCadence: Double
        /// Half the dead band around `runningCadence`, in steps per second. Default 0.1 steps/s.
        @usableFromInline package var cadenceHysteresis: Double
        /// How far the cadence must be from `runningCadence` for a high confidence, in steps per second.
        /// Default 0.3 steps/s.
        @usableFromInline package var cadenceMargin: Double
        /// The weight of each new step's cadence in the smoothed cadence, in (0, 1]. Default 0.2 (about the last
        /// five steps).
        @usableFromInline package var cadenceSmoothing: Double
        /// How old the last step may be while walking or running, in seconds. Default 1.5 s (1.5 × the longest
        /// step).
        @usableFromInline package var stepTimeout: Double
        /// The largest RMS user acceleration of a still device, in g. Default 0.015 g (phone accelerometers
        /// have 1–3 mg of noise; walking gives 50 mg or more).
        @usableFromInline package var stillnessThreshold: Scalar
        /// The time constant of the mean square, in seconds. Default 0.5 s (about one stride).
        @usableFromInline package var stillnessTimeConstant: Double
        /// How long a candidate must hold before it is reported, in seconds. Default 2 s.
        @usableFromInline package var dwellTime: Double
        /// How long unexplained motion (``MotionActivityKind/unknown``) must hold before it is reported, in
        /// seconds. Default 10 s: the time the step detector may need to confirm a walk (10 steps at the slowest
        /// cadence, 1 step/s), so that the start of a walk, or a run of steps being re-confirmed, does not flip
        /// the activity to unknown.
        @usableFromInline package var unknownDwellTime: Double

        /// Creates a configuration; every parameter has the documented default.
        /// - Precondition: every value is positive and finite; `cadenceHysteresis < runningCadence`.
        @usableFromInline package init(
            steps: StepDetector<Scalar>.Configuration = .init(), runningCadence: Double = 2.5,
            cadenceHysteresis: Double = 0.1, cadenceMargin: Double = 0.3, stepTimeout: Double = 1.5,
            stillnessThreshold: Scalar = 0.015, stillnessTimeConstant: Double = 0.5, dwellTime: Double = 2,
            unknownDwellTime: Double = 10
        ) {
            for (name, value) in [
                ("runningCadence", runningCadence), ("cadenceMargin", cadenceMargin), ("stepTimeout", stepTimeout),
                ("stillnessTimeConstant", stillnessTimeConstant), ("dwellTime", dwellTime), ("unknownDwellTime", unknownDwellTime),
            ] {
                precondition(value > 0 && value.isFinite, "\(name) must be positive and finite, got \(value).")
            }
            precondition(
                cadenceHysteresis >= 0 && cadenceHysteresis < runningCadence,
                "The cadence hysteresis must be in [0, runningCadence), got \(cadenceHysteresis).")
            precondition(
                stillnessThreshold > 0 && stillnessThreshold.isFinite,
                "The stillness threshold must be > 0 g, got \(stillnessThreshold).")
            self.steps = steps
            self.runningCadence = runningCadence
            self.cadenceHysteresis = cadenceHysteresis
            self.cadenceMargin = cadenceMargin
            self.cadenceSmoothing = 0.2
            self.stepTimeout = stepTimeout
            self.stillnessThreshold = stillnessThreshold
            self.stillnessTimeConstant = stillnessTimeConstant
            self.dwellTime = dwellTime
            self.unknownDwellTime = unknownDwellTime
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// The step detector the classifier runs (its count is the steps seen).
    @inlinable public var steps: StepDetector<Scalar> { detector }
    /// The reported activity: ``MotionActivityKind/unknown`` (low) until a candidate has held for the dwell time.
    @inlinable public var activity: MotionActivity { reported }
    /// The RMS user acceleration, in g.
    @inlinable package var motionRMS: Scalar { meanSquare.squareRoot() }
    /// The cadence averaged over the last few counted steps, in steps per second.
    @inlinable package var smoothedCadence: Double { averageCadence }

    @usableFromInline var detector: StepDetector<Scalar>
    @usableFromInline var reported: MotionActivity
    @usableFromInline var meanSquare: Scalar = 0
    @usableFromInline var averageCadence: Double = 0
    @usableFromInline var lastTimestamp: Double?
    @usableFromInline var candidate: MotionActivityKind = .unknown
    @usableFromInline var candidateSince: Double = 0
    /// The interval the mean square's factor was computed for, in seconds, and the factor.
    @usableFromInline var factorInterval: Double = -1
    @usableFromInline var meanSquareFactor: Scalar = 0

    /// Creates a classifier.
    @inlinable
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        detector = StepDetector(configuration: configuration.steps)
        reported = MotionActivity(kind: .unknown, confidence: .low, timestamp: 0)
    }

    /// Takes one accelerometer sample (g, Core Motion's sign; time in seconds) and returns the new activity when
    /// the reported one changes.
    @inlinable
    public mutating func update(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> MotionActivity? {
        guard acceleration.x.isFinite, acceleration.y.isFinite, acceleration.z.isFinite, timestamp.isFinite else {
            return nil
        }
        if let last = lastTimestamp, timestamp <= last { return nil }
        let dt = lastTimestamp.map { timestamp - $0 } ?? 0
        if lastTimestamp == nil { candidateSince = timestamp }
        lastTimestamp = timestamp
        let counted = detector.update(acceleration, at: timestamp)
        if counted > 1 || (counted == 1 && averageCadence == 0) {
            averageCadence = detector.cadence
        } else if counted == 1 {
            averageCadence += configuration.cadenceSmoothing * (detector.cadence - averageCadence)
        }
        if dt > detector.longestStep || dt == 0 {
            meanSquare = 0
        } else {
            if abs(dt - factorInterval) > 0.001 * dt {
                factorInterval = dt
                meanSquareFactor = Scalar(-Double.expMinusOne(-dt / configuration.stillnessTimeConstant))
            }
            let user = acceleration - detector.gravity
            meanSquare += meanSquareFactor * ((user * user).sum() - meanSquare)
        }

        let (kind, confidence) = classify(at: timestamp)
        if kind != candidate {
            candidate = kind
            candidateSince = timestamp
        }
        let dwell = kind == .unknown ? configuration.unknownDwellTime : configuration.dwellTime
        guard kind != reported.kind, timestamp - candidateSince >= dwell else { return nil }
        reported = MotionActivity(kind: kind, confidence: confidence, timestamp: timestamp)
        return reported
    }

    /// The candidate of this sample and its confidence. Always inlined: called as a method of its own, it was
    /// handed a copy of the classifier (2.3 KB, the step detector's history with it) at every sample.
    @inlinable @inline(__always)
    func classify(at timestamp: Double) -> (MotionActivityKind, MotionActivityConfidence) {
        let c = configuration
        if detector.isStepping, let last = detector.lastStepTime, timestamp - last <= c.stepTimeout {
            let cadence = averageCadence
            let running =
                reported.kind == .running
                ? cadence >= c.runningCadence - c.cadenceHysteresis
                : cadence >= c.runningCadence + c.cadenceHysteresis
            let confidence: MotionActivityConfidence =
                abs(cadence - c.runningCadence) >= c.cadenceMargin ? .high : .medium
            return (running ? .running : .walking, confidence)
        }
        // The RMS against the thresholds, squared: no square root per sample.
        let limit = c.stillnessThreshold * c.stillnessThreshold
        if meanSquare <= limit {
            return (.stationary, meanSquare <= limit / 4 ? .high : .medium)
        }
        return (.unknown, .low)
    }
}
