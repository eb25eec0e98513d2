import MotionCore

/// A source's reader as the engine's sample loop reads it: it takes nothing more once its producer's task is
/// cancelled (`MotionError.Code.cancelled`; a replay resumes there with the next producer).
struct ProducerSource: SampleSource {
    let reader: any MotionSampleReader

    func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
        if Task.isCancelled { throw MotionError(.cancelled, "the producer was cancelled") }
        var reader = self.reader
        return try reader.next(demand)
    }

    nonisolated(nonsending) func wait(_ demand: SourceDemand) async throws(MotionError) {
        var reader = self.reader
        try await reader.wait(demand)
    }

    func putBack(_ sample: MotionSample) {
        var reader = self.reader
        reader.putBack(sample)
    }
}
