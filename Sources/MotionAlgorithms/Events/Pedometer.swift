public import MotionCore

/// How long a step is, in metres: the pedometer's distance is the step count times this.
///
/// The default model is the anthropometric one that pedometer makers give their users: a step (one foot's
/// touchdown to the other's) is about 0.415 of the walker's height for men and 0.413 for women, so 0.415 × 1.70 m
/// = 0.71 m for the default height of 1.70 m. The best figure is a calibrated one: walk a measured distance and
/// use ``calibrated(distance:steps:)``. The model does not change with cadence: running steps are longer than
/// walking ones (about 1.0–1.5 m), so running distance is underestimated unless the user calibrates while running.
/// Docs/Pedometer.md discusses the choice.
public struct StepLengthModel: Hashable, Sendable, CustomStringConvertible {
    /// The length of one step, in metres.
    public var stepLength: Double

    /// A model with a step of `stepLength` metres.
    /// - Precondition: `stepLength` is a positive, finite number of metres.
    public init(stepLength: Double) {
        precondition(
            stepLength > 0 && stepLength.isFinite, "The step length must be a positive number of metres, got \(stepLength).")
        self.stepLength = stepLength
    }

    /// The step of a walker `height` metres tall: `ratio × height`.
    /// - Parameters:
    ///   - height: The walker's height, in metres (0.5–2.5 m).
    ///   - ratio: Step length over height. Default 0.415 (0.413 is the figure usually given for women).
    public static func height(_ height: Double, ratio: Double = defaultRatio) -> StepLengthModel {
        precondition(height >= 0.5 && height <= 2.5, "The height must be 0.5–2.5 m, got \(height).")
        precondition(ratio > 0 && ratio < 1, "The ratio must be in (0, 1), got \(ratio).")
        return StepLengthModel(stepLength: ratio * height)
    }

    /// The step measured by walking `distance` metres in `steps` steps.
    /// - Precondition: `distance > 0` and `steps > 0`.
    public static func calibrated(distance: Double, steps: Int) -> StepLengthModel {
        precondition(distance > 0 && distance.isFinite && steps > 0, "Calibrate with a positive distance and step count.")
        return StepLengthModel(stepLength: distance / Double(steps))
    }

    /// Step length over height of the default model: 0.415.
    public static let defaultRatio = 0.415
    /// The default walker's height, in metres: 1.70 m.
    public static let defaultHeight = 1.70
    /// The default model: 0.415 × 1.70 m = 0.7055 m per step.
    public static let `default` = StepLengthModel.height(defaultHeight)

    /// `0.706 m per step`.
    public var description: String { "\((stepLength * 1000).rounded() / 1000) m per step" }
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
    /// The distance walked, in metres: steps × the step-length model.
    public var distance: Double
    /// The current cadence, in steps per second; `nil` when not stepping.
    public var currentCadence: Double?
    /// The current pace, in seconds per metre (1 / (step length × cadence)); `nil` when not stepping.
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

    /// Creates an update.
    public init(stepTimes: StepTimes, data: PedometerData) {
        self.stepTimes = stepTimes
        self.data = data
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

    @usableFromInline var stepDetector: StepDetector<Scalar>
    @usableFromInline var walked: Double = 0
    @usableFromInline var firstStepTime: Double?

    /// Creates a pedometer.
    /// - Parameters:
    ///   - configuration: The step detector's settings.
    ///   - stepLength: The step-length model; default ``StepLengthModel/default`` (0.7055 m).
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
            walked += Double(counted) * stepLength.stepLength
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
            currentPace: cadence.map { 1 / (stepLength.stepLength * $0) })
    }

    /// Ends a run of steps (the sensor stopped): the next steps need a new confirmation. Counts are kept.
    @inlinable
    public mutating func interrupt() {
        stepDetector.interrupt()
    }
}
