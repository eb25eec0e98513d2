package import MotionCore
package import MotionStore
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// Gathers samples into messages and writes each to a spool: a header object
/// `{"type":"batch","stream":ID,"seq":N,"records":K}`, then the K samples as JSON Lines (`stream --format jsonl`'s
/// objects). A message holds at most ``seconds`` of samples (sample time) and ``maximumRecords`` of them.
/// Used by one thread at a time.
package final class SampleBatcher {
    /// The most samples in one message.
    package static let maximumRecords = 500
    package let spool: MessageSpool
    package let topic: String
    package let stream: String
    package let seconds: Double
    private var pending: [MotionSample] = []
    private var sequence = 0
    /// Messages the spool refused (full), and their samples.
    package private(set) var refused = 0
    package private(set) var refusedRecords = 0

    /// A stream id unique to this process and moment: `HOST-PID-NANOSECONDS`.
    package static func streamID(host: String) -> String { "\(host)-\(getpid())-\(clockNanoseconds(CLOCK_REALTIME))" }

    package init(spool: MessageSpool, topic: String, stream: String, seconds: Double) {
        self.spool = spool
        self.topic = topic
        self.stream = stream
        self.seconds = seconds
    }

    /// Adds `sample`; writes the message when it is full.
    package func add(_ sample: MotionSample) throws(MotionError) {
        if let first = pending.first,
            sample.timestamp - first.timestamp >= seconds || pending.count >= Self.maximumRecords
        {
            try send()
        }
        pending.append(sample)
    }

    /// Writes what is gathered.
    package func finish() throws(MotionError) {
        if !pending.isEmpty { try send() }
    }

    private func send() throws(MotionError) {
        let writer = TraceWriter(format: .jsonl, sensors: .all)
        for sample in pending { try writer.write(sample) }
        let header = "{\"type\":\"batch\",\"stream\":\(JSONString.quoted(stream)),\"seq\":\(sequence),\"records\":\(pending.count)}\n"
        let bytes = Array(header.utf8) + writer.takeWrittenBytes()
        if try spool.append(topic: topic, bytes: bytes) {
            sequence += 1
        } else {
            refused += 1
            refusedRecords += pending.count
        }
        pending.removeAll(keepingCapacity: true)
    }
}
