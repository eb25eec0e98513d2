import MotionAlgorithms
import MotionTesting
import Testing
import TestThreads

/// The interval gate: exact rates from faster inputs, every sample from inputs at or below the interval's rate,
/// with simulated timestamp jitter (seeded, so a failure repeats).
@Suite(.computeBound) struct UpdateIntervalGateTests {
    /// The timestamps of `count` samples `period` apart, each moved by a uniform jitter of ±`jitter`·period.
    static func timestamps(count: Int, period: Double, jitter: Double, seed: UInt64, start: Double = 1) -> [Double] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { start + Double($0) * period + jitter * period * random.uniform(in: -1...1) }
    }

    static func passed(_ times: [Double], interval: Double) -> [Double] {
        var gate = UpdateIntervalGate(interval: interval)
        return times.filter { gate.admit(at: $0) }
    }

    /// The most deliveries in any window `k` intervals long that starts at a delivery.
    static func mostInWindow(_ times: [Double], intervals k: Double, interval: Double) -> Int {
        var most = 0
        var end = 0
        for start in times.indices {
            while end < times.count && times[end] < times[start] + k * interval - 1e-12 { end += 1 }
            most = max(most, end - start)
        }
        return most
    }

    @Test("An input at the interval's period, or slower, with timestamps jittering by up to ±30 %: every sample passes")
    func everySampleWithJitter() {
        for seed in UInt64(1)...200 {
            var random = SeededGenerator(seed: seed)
            let interval = random.uniform(in: 0.001...1)
            let period = interval * random.uniform(in: 1...3)
            let times = Self.timestamps(count: 500, period: period, jitter: 0.3, seed: seed &+ 1000)
            var gate = UpdateIntervalGate(interval: interval)
            let admitted = times.map { gate.admit(at: $0) }
            // The second sample is the one the gate cannot tell from a faster input: held back when it comes
            // less than I / 1.9 after the first.
            let secondIsAmbiguous = times[1] - times[0] < interval / 1.9
            #expect(admitted[0] && (admitted[1] || secondIsAmbiguous), "seed \(seed)")
            let held = admitted.indices.dropFirst(2).filter { !admitted[$0] }
            #expect(held.isEmpty, "seed \(seed): I \(interval) s, period \(period) s: held back samples \(held.prefix(5))")
        }
    }

    @Test("Exactly at the interval's period, with no jitter or the slightest: every sample passes")
    func everySampleAtThePeriod() {
        for interval in [0.04, 0.01, 0.001, 0.1, 1.0 / 3] {
            for jitter in [0, 1e-9, 0.01, 0.05] {
                let times = Self.timestamps(count: 1000, period: interval, jitter: jitter, seed: 7)
                #expect(Self.passed(times, interval: interval).count == 1000, "I \(interval) s, jitter \(jitter)")
            }
        }
        // A device whose period is a little longer than asked (a 25 Hz device, asked 0.04 s, at 24.9 Hz).
        let slower = Self.timestamps(count: 1000, period: 1 / 24.9, jitter: 0.2, seed: 8)
        #expect(Self.passed(slower, interval: 0.04).count == 1000)
    }

    @Test("A faster input: one delivery per interval on average, and no bursts")
    func fasterInputHasTheExactRate() {
        for seed in UInt64(1)...200 {
            var random = SeededGenerator(seed: seed)
            let interval = random.uniform(in: 0.001...1)
            let period = interval * random.uniform(in: 0.02...0.98)
            // Jitter that never leaves a whole interval without a sample: up to ±30 % below 0.6 I.
            let jitter = period < 0.6 * interval ? random.uniform(in: 0...0.3) : 0
            let count = Int(200 * interval / period) + 2
            let times = Self.timestamps(count: count, period: period, jitter: jitter, seed: seed &+ 5000)
            let delivered = Self.passed(times, interval: interval)
            let span = times.last! - times.first!
            let expected = span / interval
            #expect(abs(Double(delivered.count) - expected) <= 2, "seed \(seed): \(delivered.count) for \(expected)")
            #expect(
                Self.mostInWindow(delivered, intervals: 1, interval: interval) <= 3
                    && Self.mostInWindow(delivered, intervals: 10, interval: interval) <= 12,
                "seed \(seed): I \(interval) s, period \(period) s, jitter \(jitter)")
        }
    }

    @Test("A whole multiple faster is cut exactly on its grid, from the first sample")
    func exactMultiples() {
        for (rate, interval) in [(100.0, 0.02), (100, 0.1), (100, 0.03), (1000, 0.001 * 7), (25, 0.04 * 3)] {
            let times = (0..<Int(rate * 4)).map { 1 + Double($0) / rate }
            let delivered = Self.passed(times, interval: interval)
            let steps = zip(delivered.dropFirst(), delivered).map { $0 - $1 }
            #expect(delivered.first == 1)
            #expect(steps.allSatisfy { abs($0 - interval) < 1e-9 }, "\(rate) Hz at \(interval) s: \(steps.prefix(4))")
        }
    }

    /// Unix times (about 1.8·10⁹ s, where a Double's step is 238 ns), as a history query's rows are stamped: the
    /// device's time plus the clock offset, each sum rounded. The grid's own sums round too, up or down depending
    /// on the interval, so an exact grid point and the sample meant for it can differ by a step or two.
    @Test("A whole multiple faster is cut exactly on its grid in Unix time too, despite rounding")
    func exactMultiplesInUnixTime() {
        let offset = 1_796_237_384.168_216_7
        for (rate, multiple) in [(50.0, 2), (50, 3), (50, 5), (50, 7), (50, 15), (100, 3), (100, 9), (1000, 7)] {
            let interval = Double(multiple) / rate
            let times = (0..<Int(rate * 60)).map { offset + (1 + Double($0) / rate) }
            let delivered = Self.passed(times, interval: interval)
            let expected = stride(from: 0, to: times.count, by: multiple).map { times[$0] }
            #expect(delivered == expected, "\(rate) Hz at \(interval) s: \(delivered.count) of \(expected.count)")
        }
    }

    @Test func averageRateIsTheIntervalsWhenTheInputIsFaster() {
        // broad-dev's rate, 2000/7 Hz, thinned to 100 Hz over 10 s: 1000 deliveries, 2 or 3 samples apart.
        let times = (0..<2857).map { Double($0) * 0.0035 }
        let delivered = Self.passed(times, interval: 0.01)
        #expect(delivered.count == 1000)
        let gaps = zip(delivered.dropFirst(), delivered).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 0.0035 * 2 - 1e-9 && $0 <= 0.0035 * 3 + 1e-9 })
    }

    @Test func intervalZeroPassesEverything() {
        #expect(Self.passed((0..<200).map { Double($0) / 100 }, interval: 0).count == 200)
    }

    @Test("A gap starts a new grid: no burst of catch-up deliveries")
    func aGapDoesNotCauseABurst() {
        let before = (0..<100).map { Double($0) * 0.01 }
        let after = (0..<100).map { 6 + Double($0) * 0.01 }
        let delivered = Self.passed(before + after, interval: 0.1)
        let resumed = delivered.filter { $0 >= 6 }
        let expected = (0..<10).map { 6 + Double($0) * 0.1 }
        #expect(resumed.count == 10 && zip(resumed, expected).allSatisfy { abs($0 - $1) < 1e-9 }, "\(resumed)")
        #expect(delivered.count == 20)
    }

    @Test("A non-finite timestamp never passes, and does not disturb the grid")
    func nonFiniteTimestamps() {
        var gate = UpdateIntervalGate(interval: 0.1)
        let admitted = [.nan, 1, .infinity, -.infinity, .nan, 1.05, 1.1].map { gate.admit(at: $0) }
        #expect(admitted == [false, true, false, false, false, false, true])
    }
}
