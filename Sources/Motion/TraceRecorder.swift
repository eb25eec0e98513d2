package import MotionCore
package import MotionTrace

/// The one trace recorder: `MotionManager.record(to:…)` and `motionctl`'s `record` and `stream --device` write
/// through it.
///
/// The file never destroys data (`TraceOutputFile`): it is written beside its path and put in place once it
/// holds a sample, so a recording that fails before its first sample (or a source with none) leaves no file, and
/// an existing file is kept unless replacing it was asked. After that, every ``endBatch()`` makes the lines
/// written visible at the path (a reader, or `kill -9`, sees whole lines up to there). Not `Sendable`: one loop
/// uses it.
package final class TraceRecorder {
    /// The file, or `-` for standard output.
    package let path: String
    package let existing: TraceOutputFile.ExistingFile
    package let format: TraceFormat
    package let flushing: TraceWriter.Flushing
    /// The columns, and the metadata lines at the top: both may change until the first sample is written.
    package var sensors: SensorSet
    package var metadata: TraceMetadata
    private var file: TraceOutputFile?
    private var writer: TraceWriter?
    /// The samples written.
    package private(set) var sampleCount = 0
    /// The first and the last sample's time, s.
    package private(set) var firstTimestamp: Double?
    package private(set) var lastTimestamp: Double?

    package init(
        path: String, existing: TraceOutputFile.ExistingFile, format: TraceFormat, flushing: TraceWriter.Flushing,
        sensors: SensorSet, metadata: TraceMetadata
    ) {
        self.path = path
        self.existing = existing
        self.format = format
        self.flushing = flushing
        self.sensors = sensors
        self.metadata = metadata
    }

    deinit { file?.close() }

    /// `true` once the first sample was written (the header is then fixed).
    package var isStarted: Bool { writer != nil }

    /// Writes `sample` (the output is opened at the first), then puts a file that holds its first sample at its
    /// path.
    package func write(_ sample: MotionSample) throws(MotionError) {
        let output: TraceWriter
        if let writer { output = writer } else { output = try start() }
        try output.write(sample)
        sampleCount += 1
        if firstTimestamp == nil { firstTimestamp = sample.timestamp }
        lastTimestamp = sample.timestamp
        if sampleCount == 1 { try endBatch() }
    }

    /// Writes an event row (`disconnected`, `connected`) once the output holds samples; before, there is nothing
    /// to mark.
    package func writeEvent(
        type: String, timestamp: Double, fields: [(String, EventValue)]
    ) throws(MotionError) {
        guard let writer else { return }
        try writer.writeEvent(type: type, timestamp: timestamp, fields: fields)
        try writer.flush()
    }

    /// Makes what is written visible at the path: flushed, and the file put in place once it holds a sample.
    package func endBatch() throws(MotionError) {
        try writer?.flush()
        if sampleCount > 0 { try file?.commit() }
    }

    /// Ends the recording: `requireOutput` opens an output with no sample (a command's header, for a recording
    /// that ends at once), else an output with no sample leaves no file. Returns the samples written.
    @discardableResult
    package func finish(requireOutput: Bool = false) throws(MotionError) -> Int {
        if requireOutput && writer == nil { _ = try start() }
        try writer?.flush()
        if writer != nil && (sampleCount > 0 || requireOutput) { try file?.commit() }
        file?.close()
        file = nil
        return sampleCount
    }

    /// After an error: what was written so far stays (flushed, at its path when it holds samples).
    package func abandon() {
        try? endBatch()
        file?.close()
        file = nil
    }

    private func start() throws(MotionError) -> TraceWriter {
        let opened = try TraceOutputFile(path: path, existing: existing)
        file = opened
        let writer = try TraceWriter(
            fileDescriptor: opened.fileDescriptor, name: opened.name, format: format, sensors: sensors,
            metadata: metadata, flushing: flushing)
        self.writer = writer
        return writer
    }
}
