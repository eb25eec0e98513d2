import Motion
import MotionCore
import MotionProtocol
import MotionTrace

/// The last line rendered for each variant of record (kind, format, and sensors or frame), shared by the
/// service's streams: streams of one variant get the same line for the same record, so it is rendered once
/// however many clients read that variant. The stream's own header, `dropped` events and records sent late
/// (that waited while its pipe was full) are rendered by the stream's own writer.
final class SharedRows: Sendable {
    /// What a line depends on besides the record.
    struct Variant: Equatable, Sendable {
        var kind: StreamRequest.Kind
        var format: TraceFormat
        /// The sensors of a sample line (empty for device motion).
        var sensors: SensorSet
        /// The frame of a device-motion line.
        var frame: AttitudeReferenceFrame?

        /// The variant of `request`'s lines, or `nil` for events (rare: rendered per stream).
        init?(_ request: StreamRequest) {
            switch request.kind {
            case .samples: (sensors, frame) = (request.sensors, nil)
            case .deviceMotion: (sensors, frame) = ([], request.frame)
            case .shake, .orientation, .steps, .activity: return nil
            }
            kind = request.kind
            format = request.format
        }
    }

    /// One variant's renderer and its last line.
    private struct Row {
        let variant: Variant
        /// A memory writer whose header was taken off at creation: it renders rows only.
        let writer: TraceWriter
        var sample: MotionSample?
        var timestamp = -Double.infinity
        /// Device motion's columns, of the last line and for the next.
        var values: [Double]
        var scratch: [Double]
        var line: [UInt8] = []
    }

    private let rows = LockedState<[Row]>([])

    /// The line of `record` in `variant`, rendered now unless it is the last one rendered; `nil` for a record
    /// older than that one (a stream catching up renders it itself) or one the writer refuses.
    func line(_ variant: Variant, _ record: MotionRecord) -> [UInt8]? {
        rows.withLock { rows -> [UInt8]? in
            var index = 0
            while index < rows.count && rows[index].variant != variant { index += 1 }  // no copy of a row
            if index == rows.count {
                guard let row = Self.makeRow(variant) else { return nil }
                rows.append(row)
            }
            return Self.line(of: record, in: &rows[index])
        }
    }

    private static func makeRow(_ variant: Variant) -> Row? {
        let writer: TraceWriter
        var count = 0
        switch variant.kind {
        case .samples:
            writer = TraceWriter(format: variant.format, sensors: variant.sensors)
        case .deviceMotion:
            count = OutputRecords.deviceMotionColumns.count
            guard
                let made = try? TraceWriter(
                    format: variant.format, recordType: "attitude", columns: OutputRecords.deviceMotionColumns)
            else { return nil }
            writer = made
        case .shake, .orientation, .steps, .activity:
            return nil
        }
        guard (try? writer.flush()) != nil else { return nil }
        writer.withTakenBytes { _ in }  // the header: each stream writes its own
        let zeros = [Double](repeating: 0, count: count)
        return Row(variant: variant, writer: writer, values: zeros, scratch: zeros)
    }

    private static func line(of record: MotionRecord, in row: inout Row) -> [UInt8]? {
        guard record.timestamp >= row.timestamp else { return nil }
        switch record {
        case .sample(let sample):
            if sample == row.sample { return row.line }
            guard (try? row.writer.write(sample)) != nil else { return nil }
            row.sample = sample
        case .deviceMotion(let motion):
            OutputRecords.fill(&row.scratch, with: motion, all: true)
            if motion.timestamp == row.timestamp && row.scratch == row.values { return row.line }
            guard (try? row.writer.write(recordAt: motion.timestamp, values: row.scratch)) != nil else { return nil }
            swap(&row.values, &row.scratch)
        case .shake, .orientation, .steps, .activity:
            return nil
        }
        row.timestamp = record.timestamp
        row.writer.withTakenBytes { bytes in
            row.line.removeAll(keepingCapacity: true)  // the lines handed out before are released by now
            row.line.append(contentsOf: bytes)
        }
        return row.line
    }
}
