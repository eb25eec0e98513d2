package import MotionCore

/// Merges the samples of several devices (such as a separate accelerometer and gyroscope) into one stream in
/// timestamp order, combining readings taken at the same instant into one `MotionSample`.
///
/// How it works (all timestamps on the same clock, `CLOCK_BOOTTIME` for live devices):
///
/// 1. Each source's samples are queued in arrival order (each source is in time order already).
/// 2. A sample is released only when every source has delivered something at least as late (the *watermark*,
///    the minimum over sources of their latest timestamp), so a slower source never makes the output go
///    back in time. A source that has fallen more than ``maximumDelay`` behind the newest timestamp seen no
///    longer holds the others back (a stalled or disconnected sensor must not stop the stream).
/// 3. Released samples are taken in timestamp order across sources (ties: lower source number first).
///    Consecutive samples whose sensors differ and whose timestamps are at most ``tolerance`` apart are merged
///    into one sample carrying the earlier timestamp; otherwise each is delivered alone, with only its own
///    sensors' readings (Core Motion style: a reading that did not happen is `nil`).
///
/// A pure value type: no I/O, no clock reads, no locks.
package struct SampleMerger: Sendable {
    /// Samples at most this many seconds apart, from different sensors, become one sample.
    package let tolerance: Double
    /// A source this many seconds behind the newest timestamp stops holding back the others.
    package let maximumDelay: Double

    private var queues: [[MotionSample]]
    private var heads: [Int]
    private var latest: [Double]
    private var newest = -Double.infinity
    private var pending: MotionSample?
    private var lastReleased = -Double.infinity

    /// Creates a merger for `sourceCount` sources.
    ///
    /// - Parameters:
    ///   - sourceCount: How many sources feed it (numbered from 0).
    ///   - tolerance: Seconds within which readings of different sensors are merged; 0 merges equal
    ///     timestamps only.
    ///   - maximumDelay: Seconds a source may lag before the others go on without it.
    package init(sourceCount: Int, tolerance: Double = 0.001, maximumDelay: Double = 0.5) {
        precondition(sourceCount >= 1, "a merger needs at least one source")
        precondition(tolerance >= 0 && maximumDelay >= 0, "tolerance and delay are non-negative")
        self.tolerance = tolerance
        self.maximumDelay = maximumDelay
        queues = Array(repeating: [], count: sourceCount)
        heads = Array(repeating: 0, count: sourceCount)
        latest = Array(repeating: -.infinity, count: sourceCount)
    }

    /// Queues samples of one source, in time order.
    package mutating func append(_ samples: [MotionSample], from source: Int) {
        guard let last = samples.last else { return }
        queues[source] += samples
        latest[source] = max(latest[source], last.timestamp)
        newest = max(newest, last.timestamp)
    }

    /// Appends the samples that can be released now to `output`, in time order.
    package mutating func drain(into output: inout [MotionSample]) {
        let watermark = latest.min() ?? -.infinity
        let release = max(watermark, newest - maximumDelay)
        take(upTo: release, into: &output)
        if let held = pending, held.timestamp + tolerance < release {
            output.append(held)
            pending = nil
        }
    }

    /// Appends everything still queued to `output`, in time order (when the sources have stopped, or one of
    /// them failed: `IIOCapture` delivers these before the error). Readings still waiting for a partner are
    /// delivered alone, as partial samples.
    package mutating func finish(into output: inout [MotionSample]) {
        take(upTo: .infinity, into: &output)
        if let held = pending {
            output.append(held)
            pending = nil
        }
    }

    private mutating func take(upTo release: Double, into output: inout [MotionSample]) {
        while true {
            var best: Int?
            for source in queues.indices where heads[source] < queues[source].count {
                let t = queues[source][heads[source]].timestamp
                if t <= release, best.map({ t < queues[$0][heads[$0]].timestamp }) ?? true { best = source }
            }
            guard let source = best else { break }
            var sample = queues[source][heads[source]]
            heads[source] += 1
            // Never go back in time: a late straggler (from a source that was not waited for) is moved up.
            sample.timestamp = max(sample.timestamp, lastReleased)
            lastReleased = sample.timestamp
            if var held = pending, held.sensors.isDisjoint(with: sample.sensors),
                sample.timestamp - held.timestamp <= tolerance
            {
                held.acceleration = held.acceleration ?? sample.acceleration
                held.rotationRate = held.rotationRate ?? sample.rotationRate
                held.magneticField = held.magneticField ?? sample.magneticField
                pending = held
            } else {
                if let held = pending { output.append(held) }
                pending = sample
            }
        }
        for source in queues.indices where heads[source] > 256 && heads[source] * 2 > queues[source].count {
            queues[source].removeFirst(heads[source])
            heads[source] = 0
        }
    }
}
