public import MotionCore

/// How long a step is, in metres: the pedometer's distance is the sum of its steps' lengths.
///
/// A model is either *proportional to cadence* or *fixed*. Proportional is the default: a walker's step length
/// over cadence (the *walk ratio*) stays about the same over a wide range of walking speeds (Sekiya and Nagasaki
/// 1998; below about 98 steps/min slow steps are somewhat longer), so a step is
/// `stepLength × cadence / referenceCadence`: slower steps are shorter, faster ones longer. ``height(_:ratio:)``
/// sets `stepLength` to the anthropometric rule pedometer makers give their users (0.415 of the walker's height for
/// men, 0.413 for women) at the typical free walking cadence, 110 steps/min (``typicalCadence``, 1.83 steps/s):
/// 0.7055 m for the default height of 1.70 m, which is a walk ratio of 0.0064 m per step/min, the figure measured
/// for young men. A fixed model (``init(stepLength:referenceCadence:)`` without a cadence, or
/// ``calibrated(distance:steps:)``) gives every step the same length. The best figure is a calibrated one: walk a
/// measured distance and use ``calibrated(distance:steps:cadence:)`` with the walk's cadence. Running is not
/// validated: the proportional model gives 1.04–1.15 m at 2.7–3.0 steps/s for the default height (2.8–3.5 m/s),
/// while fast runners lengthen their steps more than their cadence. Docs/Pedometer.md discusses the choice.
public struct StepLengthModel: Hashable, Sendable, CustomStringConvertible {
    /// The length of one step, in metres: at ``referenceCadence``, or at every cadence when that is `nil`.
    public var stepLength: Double
    /// The cadence at which a step is ``stepLength`` long, in steps per second; the step is proportional to the
    /// cadence. `nil`: every step is ``stepLength`` long.
    public var referenceCadence: Double?

    /// A model with a step of `stepLength` metres, at every cadence (`referenceCadence` `nil`) or at
    /// `referenceCadence` steps per second and proportional to the cadence.
    /// - Precondition: `stepLength` is a positive, finite number of metres; `referenceCadence`, when given, a
    ///   positive, finite number of steps per second.
    public init(stepLength: Double, referenceCadence: Double? = nil) {
        precondition(
            stepLength > 0 && stepLength.isFinite, "The step length must be a positive number of metres, got \(stepLength).")
        if let referenceCadence {
            precondition(
                referenceCadence > 0 && referenceCadence.isFinite,
                "The reference cadence must be a positive number of steps/s, got \(referenceCadence).")
        }
        self.stepLength = stepLength
        self.referenceCadence = referenceCadence
    }

    /// The length of a step at `cadence` steps per second, in metres: `stepLength × cadence / referenceCadence`,
    /// or `stepLength` for a fixed model or when `cadence` is not a positive, finite number (no stride measured).
    @inlinable
    public func stepLength(atCadence cadence: Double) -> Double {
        guard let referenceCadence, cadence > 0, cadence.isFinite else { return stepLength }
        return stepLength * cadence / referenceCadence
    }

    /// The steps of a walker `height` metres tall: `ratio × height` at ``typicalCadence``, proportional to the
    /// cadence.
    /// - Parameters:
    ///   - height: The walker's height, in metres (0.5–2.5 m).
    ///   - ratio: Step length over height at ``typicalCadence``. Default 0.415 (0.413 is the figure usually given
    ///     for women).
    public static func height(_ height: Double, ratio: Double = defaultRatio) -> StepLengthModel {
        precondition(height >= 0.5 && height <= 2.5, "The height must be 0.5–2.5 m, got \(height).")
        precondition(ratio > 0 && ratio < 1, "The ratio must be in (0, 1), got \(ratio).")
        return StepLengthModel(stepLength: ratio * height, referenceCadence: typicalCadence)
    }

    /// A fixed step, measured by walking `distance` metres in `steps` steps.
    /// - Precondition: `distance > 0` and `steps > 0`.
    public static func calibrated(distance: Double, steps: Int) -> StepLengthModel {
        precondition(distance > 0 && distance.isFinite && steps > 0, "Calibrate with a positive distance and step count.")
        return StepLengthModel(stepLength: distance / Double(steps))
    }

    /// Steps proportional to cadence, measured by walking `distance` metres in `steps` steps at `cadence` steps per
    /// second (the walk's mean: `PedometerData.currentCadence`, or the steps less one over the time from the first
    /// to the last).
    /// - Precondition: `distance > 0`, `steps > 0`, `cadence > 0`.
    public static func calibrated(distance: Double, steps: Int, cadence: Double) -> StepLengthModel {
        precondition(
            distance > 0 && distance.isFinite && steps > 0 && cadence > 0 && cadence.isFinite,
            "Calibrate with a positive distance, step count and cadence.")
        return StepLengthModel(stepLength: distance / Double(steps), referenceCadence: cadence)
    }

    /// Step length over height of the default model at ``typicalCadence``: 0.415.
    public static let defaultRatio = 0.415
    /// The default walker's height, in metres: 1.70 m.
    public static let defaultHeight = 1.70
    /// The cadence at which ``height(_:ratio:)``'s ratio holds, in steps per second: 110 steps/min, a typical
    /// adult's free walking cadence.
    public static let typicalCadence = 110.0 / 60
    /// The default model: 0.415 × 1.70 m = 0.7055 m per step at 110 steps/min, proportional to the cadence.
    public static let `default` = StepLengthModel.height(defaultHeight)

    /// `0.8 m per step` (fixed) or `0.755 m per step at 1.833 steps/s, proportional to cadence`.
    public var description: String {
        let length = "\((stepLength * 1000).rounded() / 1000) m per step"
        guard let referenceCadence else { return length }
        return length + " at \((referenceCadence * 1000).rounded() / 1000) steps/s, proportional to cadence"
    }
}

/// What a pedometer has measured, in Core Motion's `CMPedometerData` shape (times in seconds on the samples'
/// clock).
public struct PedometerData: Hashable, Sendable {
    /// The first counted step's time, in seconds; `nil` before any step.
    public var startTime: Double?
    /// The last counted step's time, in seconds; `nil` before any step.
    public var endTime: Double?
    /// The steps counted.
    public var numberOfSteps: Int
    /// The distance walked, in metres: the sum of the steps' lengths (the step-length model at each step's cadence).
    public var distance: Double
    /// The current cadence, in steps per second; `nil` when not stepping.
    public var currentCadence: Double?
    /// The current pace, in seconds per metre (1 / (step length at the cadence × cadence)); `nil` when not stepping.
    public var currentPace: Double?

    /// Creates pedometer data.
    public init(
        startTime: Double?, endTime: Double?, numberOfSteps: Int, distance: Double, currentCadence: Double?,
        currentPace: Double?
    ) {
        self.startTime = startTime
        self.endTime = endTime
        self.numberOfSteps = numberOfSteps
        self.distance = distance
        self.currentCadence = currentCadence
        self.currentPace = currentPace
    }
}

/// The steps one sample counted, with the pedometer's figures after them.
public struct PedometerUpdate: Sendable {
    /// The times of the steps counted, oldest first, in seconds: one, or a whole run when it was confirmed.
    public var stepTimes: StepTimes
    /// The figures after these steps.
    public var data: PedometerData
    /// The length of each of these steps, in metres (the step-length model at the cadence they were counted at).
    public var stepLength: Double

    /// Creates an update.
    public init(stepTimes: StepTimes, data: PedometerData, stepLength: Double) {
        self.stepTimes = stepTimes
        self.data = data
        self.stepLength = stepLength
    }
}

/// A step counter with distance, cadence and pace: a ``StepDetector`` and a ``StepLengthModel``.
///
/// A pure value type: no clock, no I/O, no allocation.
///
/// ```swift
/// var pedometer = Pedometer<Double>(stepLength: .height(1.82))
/// for sample in samples {
///     guard let a = sample.acceleration else { continue }
///     if pedometer.update(a.vector, at: sample.timestamp) > 0 { print(pedometer.data.numberOfSteps) }
/// }
/// ```
public struct Pedometer<Scalar: MotionScalar>: Sendable {
    /// The step detector, with its count and the times of the steps the last update counted.
    @inlinable public var detector: StepDetector<Scalar> { stepDetector }
    /// The step-length model that turns steps into distance.
    public var stepLength: StepLengthModel
    /// The distance walked so far, in metres (each step counted with the model in force when it was counted).
    @inlinable public var distance: Double { walked }
    /// The length of each step the last ``update(_:at:)`` counted, in metres: the model at the cadence then; the
    /// model's at the current cadence when it counted none.
    @inlinable public var newStepLength: Double { stepLength.stepLength(atCadence: stepDetector.cadence) }

    @usableFromInline var stepDetector: StepDetector<Scalar>
    @usableFromInline var walked: Double = 0
    @usableFromInline var firstStepTime: Double?

    /// Creates a pedometer.
    /// - Parameters:
    ///   - configuration: The step detector's settings.
    ///   - stepLength: The step-length model; default ``StepLengthModel/default`` (0.7055 m at 110 steps/min,
    ///     proportional to the cadence).
    @inlinable
    public init(
        configuration: StepDetector<Scalar>.Configuration = .init(), stepLength: StepLengthModel = .default
    ) {
        stepDetector = StepDetector(configuration: configuration)
        self.stepLength = stepLength
    }

    /// Takes one accelerometer sample (g, Core Motion's sign; time in seconds); returns the steps it counted.
    @inlinable
    @discardableResult
    public mutating func update(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Int {
        let counted = stepDetector.update(acceleration, at: timestamp)
        if counted > 0 {
            if firstStepTime == nil { firstStepTime = stepDetector.newStepTime(0) }
            walked += Double(counted) * newStepLength
        }
        return counted
    }

    /// The figures so far. Cadence and pace are those of the last stride while steps are being counted, `nil`
    /// otherwise.
    @inlinable
    public var data: PedometerData {
        let cadence = detector.isStepping ? detector.cadence : nil
        return PedometerData(
            startTime: firstStepTime, endTime: detector.lastStepTime, numberOfSteps: detector.count,
            distance: distance, currentCadence: cadence,
            currentPace: cadence.map { 1 / (stepLength.stepLength(atCadence: $0) * $0) })
    }

    /// Ends a run of steps (the sensor stopped): the next steps need a new confirmation. Counts are kept.
    @inlinable
    public mutating func interrupt() {
        stepDetector.interrupt()
    }
}
