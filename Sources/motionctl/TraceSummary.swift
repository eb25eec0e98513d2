import MotionCore
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// What `motionctl info` reports about a trace, gathered in one pass over its rows in bounded memory: the rows,
/// the time span and, per sensor, the count, the sampling intervals (median, gaps, the largest) and the range of
/// each axis.
struct TraceSummary {
    /// The rows read (samples of any sensor).
    private(set) var rows = 0
    /// The first row's time, s.
    private(set) var start: Double?
    /// The last row's time, s.
    private(set) var end: Double?
    /// One summary per sensor the header names, in the order accelerometer, gyroscope, magnetometer.
    private(set) var sensors: [SensorSummary]

    /// An empty summary for a trace with `sensors`.
    init(sensors: SensorSet) {
        self.sensors = SensorSet.shortNames.filter { sensors.contains($0.sensor) }.map { SensorSummary(name: $0.name, sensor: $0.sensor) }
    }

    /// Counts one row.
    mutating func add(_ sample: MotionSample) {
        rows += 1
        if start == nil { start = sample.timestamp }
        end = sample.timestamp
        for index in sensors.indices {
            if let reading = sample.vector(of: sensors[index].sensor) { sensors[index].add(reading, at: sample.timestamp) }
        }
    }

    /// The time from the first row to the last, s (0 without rows).
    var duration: Double { (end ?? 0) - (start ?? 0) }
}

/// One sensor's figures: samples, time span, intervals between its readings, and the range of each axis.
struct SensorSummary {
    /// A gap: the interval between two consecutive readings of the sensor.
    struct Gap: Equatable {
        /// The reading before the gap, s.
        var start: Double
        /// The reading after it, s.
        var end: Double
        /// `end − start`, s.
        var length: Double { end - start }
    }

    /// How many of the largest intervals are kept.
    static let largestGapCount = 5
    /// An interval longer than this many median intervals counts as a gap.
    static let gapFactor = 3.0

    /// `accel`, `gyro` or `mag`.
    let name: String
    /// The sensor, as a set of one.
    let sensor: SensorSet
    /// The readings of this sensor.
    private(set) var samples = 0
    /// Time of the first reading, s.
    private(set) var first: Double?
    /// Time of the last reading, s.
    private(set) var last: Double?
    /// Smallest and largest value of each axis, in the sensor's unit.
    private(set) var minimum = SIMD3<Double>(repeating: .infinity)
    private(set) var maximum = SIMD3<Double>(repeating: -.infinity)
    /// The intervals between consecutive readings.
    private(set) var intervals = IntervalHistogram()
    /// The largest intervals, longest first (at most ``largestGapCount``; the earlier one first among equals).
    private(set) var largestGaps: [Gap] = []

    init(name: String, sensor: SensorSet) {
        self.sensor = sensor
        self.name = name
    }

    /// The unit of the sensor's values: `g`, `rad/s` or `µT`.
    var unit: String {
        switch name {
        case "accel": "g"
        case "gyro": "rad/s"
        default: "µT"
        }
    }

    /// The sensor's name in text: `accelerometer`, `gyroscope`, `magnetometer`.
    var title: String {
        switch name {
        case "accel": "accelerometer"
        case "gyro": "gyroscope"
        default: "magnetometer"
        }
    }

    mutating func add(_ value: SIMD3<Double>, at time: Double) {
        samples += 1
        minimum = pointwiseMin(minimum, value)
        maximum = pointwiseMax(maximum, value)
        if let last {
            let gap = Gap(start: last, end: time)
            intervals.add(gap.length)
            if largestGaps.count < Self.largestGapCount || gap.length > largestGaps[largestGaps.count - 1].length {
                let index = largestGaps.firstIndex { $0.length < gap.length } ?? largestGaps.count
                largestGaps.insert(gap, at: index)
                if largestGaps.count > Self.largestGapCount { largestGaps.removeLast() }
            }
        } else {
            first = time
        }
        last = time
    }

    /// The median interval between readings, s, or `nil` with fewer than two readings.
    var medianInterval: Double? { intervals.median }

    /// The median rate, Hz: 1 / the median interval (`nil` when there is none or it is 0).
    var medianRate: Double? { medianInterval.flatMap { $0 > 0 ? 1 / $0 : nil } }

    /// The interval above which a reading counts as late: ``gapFactor`` × the median interval, s.
    var gapThreshold: Double? { medianInterval.map { $0 * Self.gapFactor } }

    /// The intervals longer than ``gapThreshold``.
    var gapCount: Int { gapThreshold.map { intervals.count(longerThan: $0) } ?? 0 }
}

/// A histogram of positive intervals in logarithmic bins 0.1 % wide (and one bin for 0), each holding its count and
/// the sum of its intervals: the median and the count above a bound from any number of intervals in bounded memory.
///
/// Intervals are clamped to [1 ns, 10⁹ s] for binning, so there are at most 41 468 bins whatever the input. The median
/// is the mean of the bin holding the lower median: within 0.1 % of the exact lower median (exact when the intervals
/// in that bin are equal). ``count(longerThan:)`` is exact except for intervals within 0.1 % of the bound.
struct IntervalHistogram {
    /// The relative width of a bin.
    static let binWidth = 1e-3
    private static let logBase = log1p(binWidth)
    private static let zeroBin = Int.min

    private struct Bin {
        var count = 0
        var sum = 0.0
    }

    private var bins: [Int: Bin] = [:]
    /// The intervals added.
    private(set) var total = 0

    private static func bin(of interval: Double) -> Int {
        guard interval > 0 else { return zeroBin }
        return Int((log(min(max(interval, 1e-9), 1e9)) / logBase).rounded(.down))
    }

    mutating func add(_ interval: Double) {
        total += 1
        let key = Self.bin(of: interval)
        bins[key, default: Bin()].count += 1
        bins[key, default: Bin()].sum += interval
    }

    /// The lower median (the interval of rank ⌊(n − 1) / 2⌋ from the shortest), within 0.1 %; `nil` when empty.
    var median: Double? {
        guard total > 0 else { return nil }
        let rank = (total - 1) / 2
        var seen = 0
        for key in bins.keys.sorted() {
            let bin = bins[key]!
            seen += bin.count
            if seen > rank { return bin.sum / Double(bin.count) }
        }
        return nil
    }

    /// How many intervals are longer than `bound`: the bins above the bound's bin, and the bound's own bin when its
    /// mean is longer than the bound.
    func count(longerThan bound: Double) -> Int {
        let boundBin = Self.bin(of: bound)
        var count = 0
        for (key, bin) in bins where key != Self.zeroBin {
            if key > boundBin || (key == boundBin && bin.sum / Double(bin.count) > bound) { count += bin.count }
        }
        return count
    }
}
