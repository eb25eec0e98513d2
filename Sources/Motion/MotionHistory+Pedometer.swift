public import MotionAlgorithms
public import MotionCore
public import MotionStore

extension MotionHistory {
    /// How long before a query's start the recorded accelerometer is read, in seconds: 10 s, the longest a walk's
    /// confirmation takes (10 steps at the slowest cadence, 1 step/s). So a walk under way at the start is counted
    /// from the start, and the classifier has settled there, as a pedometer running all along would have it.
    public static var queryLead: Double { 10 }

    /// The steps taken from `start` to `end` (Unix seconds), as Core Motion's
    /// `CMPedometer.queryPedometerData(from:to:)` gives them: the pedometer run over the recorded accelerometer
    /// (``accelerometerData(from:to:damage:)``, from ``queryLead`` before `start`), counting the steps whose times
    /// fall in the range.
    ///
    /// `startTime` and `endTime` are the first and last of those steps (Unix seconds), `distance` the sum of their
    /// lengths (`configuration.stepLength` at each step's cadence), and the cadence and pace those at `end` when
    /// steps were being counted then (the last step at most the longest stride, 2 s, before it), else `nil`. Steps
    /// need the accelerometer recorded (`motiond --history`, or
    /// ``MotionManager/record(into:sensors:interval:events:)``; 50 Hz by default); a gap in the recording ends a
    /// walk there, as a gap in live samples does. The figures match the live pedometer's only as far as the
    /// recording's rate allows (Docs/Pedometer.md, "Lower sample rates").
    /// - Throws: `invalidArgument` when `start` or `end` is not finite or `start > end`; `cancelled` when the calling
    ///   task is cancelled (checked at each batch: about a second of recording); the store's errors.
    public func pedometerData(
        from start: Double, to end: Double, configuration: MotionConfiguration = MotionConfiguration(),
        damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) async throws(MotionError) -> PedometerData {
        var data = PedometerData(
            startTime: nil, endTime: nil, numberOfSteps: 0, distance: 0, currentCadence: nil, currentPace: nil)
        let processor = try await process(
            from: start, to: end, configuration: configuration, request: .init(steps: true), damage: damage
        ) { outputs in
            guard let update = outputs.steps else { return }
            for i in 0..<update.stepTimes.count {
                let t = update.stepTimes[i]
                guard t >= start && t <= end else { continue }
                data.startTime = data.startTime ?? t
                data.endTime = t
                data.numberOfSteps += 1
                data.distance += update.stepLength
            }
        }
        // Walking at `end`: a step within the longest stride before it (the detector alone cannot tell a walk that
        // stopped, or a recording that ended, from one that goes on).
        if let now = processor.pedometerData, let last = now.endTime,
            last >= end - 2 * configuration.steps.longestStep
        {
            data.currentCadence = now.currentCadence
            data.currentPace = now.currentPace
        }
        return data
    }

    /// The activities from `start` to `end` (Unix seconds), as Core Motion's
    /// `CMMotionActivityManager.queryActivityStarting(from:to:to:)` gives them: the activity classifier run over the
    /// recorded accelerometer (from ``queryLead`` before `start`), oldest first. The first is the activity in force
    /// at `start`, with the time it was reported (before `start` when it began earlier); then each change up to
    /// `end`. Empty when the classifier reported nothing by `end` (too little recorded).
    /// - Throws: `invalidArgument` when `start` or `end` is not finite or `start > end`; `cancelled` when the calling
    ///   task is cancelled (checked at each batch: about a second of recording); the store's errors.
    public func activities(
        from start: Double, to end: Double, configuration: MotionConfiguration = MotionConfiguration(),
        damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) async throws(MotionError) -> [MotionActivity] {
        var inForce: MotionActivity?
        var changes: [MotionActivity] = []
        _ = try await process(
            from: start, to: end, configuration: configuration, request: .init(activity: true), damage: damage
        ) { outputs in
            guard let change = outputs.activity else { return }
            if change.timestamp < start { inForce = change } else { changes.append(change) }
        }
        return (inForce.map { [$0] } ?? []) + changes
    }

    /// Runs the engine (``MotionProcessor``) with `request` over the recorded accelerometer from ``queryLead``
    /// before `start` to `end`, handing `body` each sample's outputs; returns the processor at `end`.
    private func process(
        from start: Double, to end: Double, configuration: MotionConfiguration, request: MotionProcessor.Request,
        damage: (@Sendable (StoreDamage) -> Void)?, _ body: (MotionOutputs) -> Void
    ) async throws(MotionError) -> MotionProcessor {
        try Self.checkRange(start, end)
        var processor = MotionProcessor(configuration: configuration, request: request)
        for try await batch in accelerometerData(from: start - Self.queryLead, to: end, damage: damage) {
            try Self.checkCancellation()
            for reading in batch where reading.timestamp <= end {
                processor.process(MotionSample(timestamp: reading.timestamp, acceleration: reading.acceleration))
                body(processor.outputs)
            }
        }
        return processor
    }

    private static func checkCancellation() throws(MotionError) {
        if Task.isCancelled { throw MotionError(.cancelled, "the history query was cancelled") }
    }

    private static func checkRange(_ start: Double, _ end: Double) throws(MotionError) {
        guard start.isFinite, end.isFinite, start <= end else {
            throw MotionError(
                .invalidArgument, "a query needs finite Unix times with start ≤ end, got \(start) to \(end)")
        }
    }
}
