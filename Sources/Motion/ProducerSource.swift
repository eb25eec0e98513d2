import MotionCore

/// A source's reader as the engine's sample loop reads it: it takes nothing more once its producer's task is
/// cancelled (`MotionError.Code.cancelled`; a replay resumes there with the next producer).
struct ProducerSource: SampleSource {
    /// Held as a variable so that each call mutates it in place (no copy, so no retain and release per sample).
    var reader: any MotionSampleReader
    /// Samples between looks at the task's cancellation (and one before each wait, which a cancellation also
    /// ends): 1 for subscriptions, whose paused replay resumes with the next sample; 64 for a run, which a
    /// cancellation ends (it stops within microseconds at full speed, with one look per 64 samples).
    private let cancellationCheckInterval: Int
    private var untilCancellationCheck = 0

    init(reader: any MotionSampleReader, cancellationCheckInterval: Int = 1) {
        self.reader = reader
        self.cancellationCheckInterval = cancellationCheckInterval
    }

    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        if untilCancellationCheck == 0 {
            if Task.isCancelled { throw MotionError(.cancelled, "the producer was cancelled") }
            untilCancellationCheck = cancellationCheckInterval
        }
        untilCancellationCheck -= 1
        return try reader.next(demand)
    }

    nonisolated(nonsending) mutating func wait(_ demand: SourceDemand) async throws(MotionError) {
        untilCancellationCheck = 0
        try await reader.wait(demand)
    }

    mutating func putBack(_ sample: MotionSample) {
        reader.putBack(sample)
    }
}
