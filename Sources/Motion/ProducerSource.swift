import MotionCore

/// A source's reader as the engine's sample loop reads it: it takes nothing more once its producer's task is
/// cancelled (`MotionError.Code.cancelled`; a replay resumes there with the next producer).
struct ProducerSource: SampleSource {
    /// Held as a variable so that each call mutates it in place (no copy, so no retain and release per sample).
    var reader: any MotionSampleReader

    init(reader: any MotionSampleReader) { self.reader = reader }

    mutating func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        if Task.isCancelled { throw MotionError(.cancelled, "the producer was cancelled") }
        return try reader.next(demand)
    }

    nonisolated(nonsending) mutating func wait(_ demand: SourceDemand) async throws(MotionError) {
        try await reader.wait(demand)
    }

    mutating func putBack(_ sample: MotionSample) {
        reader.putBack(sample)
    }
}
