public import MotionCore
public import MotionTrace

extension MotionManager {
    /// Records the source's readings as a canonical trace (`Docs/TraceFormat.md`) until the source ends (a
    /// recording, a sample sequence) or the calling task is cancelled (a live source), and returns the number of
    /// samples written.
    ///
    /// The samples are ``sampleUpdates(sensors:interval:bufferingPolicy:)``: every reading of `sensors`,
    /// filtered by ``MotionConfiguration/sensorFilter``, as the source timestamps them (seconds). Nothing is lost
    /// to a slow disk: the replay of a recording waits for the writer, and a live source has a 65,536-sample buffer
    /// (655 s at 100 Hz) before the newest are dropped.
    ///
    /// The file never destroys data (`TraceOutputFile`): it is written beside `path` and put in place once it
    /// holds a sample, so an existing file is kept unless `existing` is `.replace`, and a recording that fails
    /// before its first sample (or a source with none) leaves no file. When the source fails later (a device
    /// unplugged), the samples written so far are kept and the error is thrown. For a live source each line is
    /// written as its sample arrives, so a reader (or `kill -9`) sees whole lines up to the latest sample.
    ///
    /// - Parameters:
    ///   - path: The file, or `-` for standard output.
    ///   - sensors: The columns. Unless given, the sensors the source has: a trace's header, the samples given, or
    ///     the devices present now; a ``MotionSource/stream(_:)`` source needs them given.
    ///   - format: CSV (the canonical trace) or JSON Lines.
    ///   - existing: What to do with a file already at `path`.
    ///   - metadata: Comment and `key: value` lines at the top of the trace (attribution, notes).
    /// - Throws: `MotionError.Code.outputExists` for an existing file with `.refuse`; `.invalidArgument` when no
    ///   sensor is left to record; the source's error.
    @discardableResult
    public func record(
        to path: String, sensors: SensorSet? = nil, format: TraceFormat = .csv,
        existing: TraceOutputFile.ExistingFile = .refuse, metadata: TraceMetadata = TraceMetadata()
    ) async throws(MotionError) -> Int {
        let sensors = sensors ?? engine.availableSensors
        guard !sensors.isEmpty else {
            throw MotionError(
                .invalidArgument, "nothing to record: \(source) has no accelerometer, gyroscope or magnetometer")
        }
        if existing == .refuse { try TraceOutputFile.checkAbsent(path) }
        let live = source.isLive
        let updates = sampleUpdates(
            sensors: sensors, bufferingPolicy: live ? .bufferingOldest(65_536) : .samplesDefault)
        defer { updates.cancel() }
        let recorder = TraceRecorder(
            path: path, existing: existing, format: format, flushing: live ? .eachLine : .whenFull, sensors: sensors,
            metadata: metadata)
        do {
            for try await sample in updates { try recorder.write(sample) }
        } catch {
            recorder.abandon()
            throw error
        }
        return try recorder.finish()
    }
}
