public import MotionCore
import MotionSystem

extension MotionSource {
    /// A trace in the canonical CSV format (`Docs/TraceFormat.md`), read as the replay goes, in constant memory.
    ///
    /// The replay starts when the first subscription starts, pauses while no subscription is active, and ends
    /// every subscription when the trace ends. Timestamps are the trace's `t` column, in seconds.
    /// - Parameters:
    ///   - path: The file, or `-` for standard input.
    ///   - pacing: Real time (default), a multiple of it, or as fast as the consumers take the updates.
    ///   - lenient: Skip malformed rows instead of ending with a `MotionError.Code.malformedTrace` error.
    public static func trace(_ path: String, pacing: ReplayPacing = .realTime, lenient: Bool = false) -> MotionSource {
        MotionSource(TraceSampleProvider(path: path, lenient: lenient), pacing: pacing)
    }

    /// A trace already opened (a command's standard input through its own pump), for one manager: its reader is
    /// handed to the first manager made on this source.
    package static func trace(_ reader: TraceReader, pacing: ReplayPacing = .realTime) -> MotionSource {
        MotionSource(OpenTraceProvider(reader: reader), pacing: pacing)
    }
}

/// `MotionSource.trace(_:pacing:)` for a reader already open.
struct OpenTraceProvider: MotionSampleProvider, @unchecked Sendable {
    /// Handed to one manager, which reads it on one thread at a time.
    let reader: TraceReader
    var isLive: Bool { false }
    var description: String { "trace \(reader.name)" }

    func makeReader() throws(MotionError) -> any MotionSampleReader { TraceSampleProvider.Reader(reader) }
}

/// `MotionSource.trace(_:pacing:lenient:)`: a trace file read as the replay goes.
struct TraceSampleProvider: MotionSampleProvider {
    let path: String
    let lenient: Bool
    var isLive: Bool { false }
    var description: String { "trace \(path)" }

    func makeReader() throws(MotionError) -> any MotionSampleReader {
        try Reader(TraceReader(path: path, options: .init(lenient: lenient)))
    }

    /// Reads on a thread of its own: a read from a pipe or a slow disk blocks that thread, never one of Swift
    /// concurrency's cooperative pool.
    final class Reader: BatchSampleReader {
        private let reader: TraceReader
        private let thread = SourceThread()
        /// A sample put back (the replay stopped while pacing it).
        private var pending: MotionSample?

        init(_ reader: TraceReader) { self.reader = reader }

        deinit { thread.stop() }

        func availableSensors() -> SensorSet { reader.sensors }
        var preferredExecutor: (any TaskExecutor)? { thread }

        func next(_ demand: SourceDemand) throws(MotionError) -> SampleSourceStep {
            if let sample = pending {
                pending = nil
                return .sample(sample)
            }
            return try reader.next().map { .sample($0) } ?? .ended
        }

        /// The rows at hand in one call: the trace's reader called directly, with no witness call per row. From a
        /// pipe, one row per call: a row that arrived is processed before the next is waited for.
        func takeBatch(
            _ demand: SourceDemand, into samples: inout [MotionSample], maximumCount: Int
        ) -> SampleBatchEnd {
            let maximumCount = reader.neverWaits ? maximumCount : min(maximumCount, samples.count + 1)
            if let sample = pending, samples.count < maximumCount {
                pending = nil
                samples.append(sample)
            }
            while samples.count < maximumCount {
                do {
                    guard let sample = try reader.nextRow() else { return .ended }
                    samples.append(sample)
                } catch {
                    return .failed(error)
                }
            }
            return .full
        }

        func wait(_ demand: SourceDemand) async {}

        func putBack(_ sample: MotionSample) { pending = sample }
    }
}
