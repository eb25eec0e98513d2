package import MotionCore
package import MotionStore
package import MotionTrace

/// How `motionctl history --store` and motiond's `OpenHistory` print a history's device motion and events: one
/// definition for both (`Docs/History.md`).
package enum HistoryRecords {
    /// The writer of device motion (`attitude` records, the columns of `motionctl attitude --all`) or of events, to
    /// `fileDescriptor` or into memory (`nil`).
    package static func writer(
        deviceMotion: Bool, format: TraceFormat, metadata: TraceMetadata, fileDescriptor: Int32? = nil
    ) throws(MotionError) -> TraceWriter {
        var metadata = metadata
        guard deviceMotion else {
            guard let fileDescriptor else { return TraceWriter(format: format, sensors: [], metadata: metadata) }
            return try TraceWriter(fileDescriptor: fileDescriptor, name: "<stdout>", format: format, sensors: [], metadata: metadata)
        }
        metadata["quaternion"] = "scalar first, device to reference: v_ref = q v_device q*"
        let columns = OutputRecords.deviceMotionColumns
        guard let fileDescriptor else {
            return try TraceWriter(format: format, recordType: "attitude", columns: columns, metadata: metadata)
        }
        return try TraceWriter(
            fileDescriptor: fileDescriptor, name: "<stdout>", format: format, recordType: "attitude", columns: columns,
            metadata: metadata)
    }

    /// Writes `batch`'s device motion (or its events) stamped in Unix time, skipping device motion at the times
    /// `admit` refuses (a rate limit); returns the records written and the last one's Unix time. `values` is the
    /// caller's row buffer.
    @discardableResult
    package static func write(
        _ batch: StoredSamples, deviceMotion: Bool, to writer: TraceWriter, values: inout [Double],
        admit: (Double) -> Bool = { _ in true }
    ) throws(MotionError) -> (count: Int, last: Double?) {
        var written = 0
        var last: Double?
        if deviceMotion {
            if values.count != OutputRecords.deviceMotionColumns.count {
                values = [Double](repeating: 0, count: OutputRecords.deviceMotionColumns.count)
            }
            for motion in batch.deviceMotion {
                let time = motion.timestamp + batch.clockOffset
                guard admit(time) else { continue }
                OutputRecords.fill(&values, with: motion, all: true)
                try writer.write(recordAt: time, values: values)
                written += 1
                last = time
            }
        } else {
            for event in batch.events {
                let time = event.timestamp + batch.clockOffset
                try writer.writeEvent(type: event.type, timestamp: time, fields: event.fields)
                written += 1
                last = time
            }
        }
        return (written, last)
    }
}
