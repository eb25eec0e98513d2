import Motion
import MotionCore
import MotionTrace

/// The one loop of the trace commands (`stream`, `attitude`, `shake`, `orientation` on `--trace`): each row, paced at
/// the replay speed, goes through a `MotionProcessor` and its outputs to the command's output; when the trace
/// ends or SIGINT/SIGTERM arrives, the processor's `finish()` (a shake in progress is cancelled) goes there too
/// when it holds anything. `MotionManager` runs the same processor on the same samples (`MotionEngine`).
struct TraceReplay {
    let reader: TraceReader
    /// The factor on real time, or `nil` for as fast as possible.
    let speed: Double?
    /// Readings of other sensors are removed from each row before processing (`--sensors`), or `nil` for none.
    var inputSensors: SensorSet?

    /// Runs the replay. `flush` makes what is written visible before each wait; `write` gets each sample's outputs.
    func run(
        _ processor: inout MotionProcessor, flush: () throws(MotionError) -> Void,
        write: (MotionOutputs) throws(MotionError) -> Void
    ) throws(MotionError) {
        var pacer = Pacer(speed: speed)
        let restriction = inputSensors.flatMap { $0 == reader.sensors ? nil : $0 }
        while !Interruption.isRequested, var sample = try reader.next() {
            if let restriction { sample = sample.restricted(to: restriction) }
            if let deadline = pacer.deadline(for: sample.timestamp) {
                try flush()  // what is written so far is visible while we wait
                Pacer.sleep(until: deadline)
                if Interruption.isRequested { break }
            }
            processor.process(sample)
            try write(processor.outputs)
        }
        processor.finish()
        if !processor.outputs.isEmpty { try write(processor.outputs) }
        try flush()
    }
}
