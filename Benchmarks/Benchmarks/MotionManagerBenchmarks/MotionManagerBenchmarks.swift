import Benchmark
import Dispatch
import Foundation
import Motion
import MotionCore
import Synchronization

#if os(Linux)
import Glibc

/// `MotionManager` delivery, measured in real time (figures and method: `Docs/Performance.md`, "MotionManager
/// delivery"). Every benchmark runs once (no warm-up iteration, `maxIterations` 1) and reports its figures as
/// custom metrics (units in the name); the built-in metrics are there for the whole run.
///
/// - `Latency …`: one consumer, samples yielded one every 1 ms (absolute `CLOCK_MONOTONIC` deadlines) by a
///   feeder thread into the `AsyncStream` of a `.stream` source. The feeder stores `CLOCK_MONOTONIC` read just
///   before `continuation.yield(sample)` in the sample's timestamp (seconds); the consumer reads the clock when
///   it is called and records the difference. The percentiles of the `latency (ns)` metric are the figures.
/// - `CPU …`: consumers (asynchronous sequences) on one manager fed 100 Hz samples in real time for 10 s
///   (`.samples(…, pacing: .realTime)`): process CPU time (`getrusage`, user + system) per second of wall time and
///   per delivered update.
/// - `Memory …`: a reader that reads every sample beside two subscriptions that are never read
///   (`bufferingOldest(1024)` and `bufferingNewest(1)`), source `.stream` over samples generated lazily as fast as
///   the reader takes them (the generator waits only for the reader, so the producer drops for the stalled ones).

// MARK: Clocks and resources

@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

func sleepUntil(nanoseconds deadline: UInt64) {
    var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
}

/// Process CPU time, user + system, in nanoseconds, and the peak resident set in kB.
func processUsage() -> (cpu: UInt64, maxRSSKilobytes: Int) {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    let user = UInt64(usage.ru_utime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_utime.tv_usec) * 1000
    let system = UInt64(usage.ru_stime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_stime.tv_usec) * 1000
    return (user + system, Int(usage.ru_maxrss))
}

/// Resident set now, in kB (`/proc/self/statm`).
func currentRSSKilobytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
}

/// Resets the process's peak resident set (`VmHWM`) to the current one (Linux ≥ 4.0); `false` if it could not.
func resetPeakRSS() -> Bool {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return write(fd, "5", 1) == 1
}

/// The process's peak resident set since start or the last ``resetPeakRSS()``, in kB (`VmHWM`).
func peakRSSKilobytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
}

/// A one-shot signal from any thread to an awaiting task.
final class Completion: Sendable {
    private let state = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.done { return nil }
            state.done = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.done { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

// MARK: Latency

/// Latencies recorded by one serial consumer, read after it has signalled completion.
final class LatencyRecorder: @unchecked Sendable {
    let expected: Int
    private let values: UnsafeMutablePointer<Int>
    private(set) var count = 0
    private(set) var error: MotionError?
    let done = Completion()

    init(expected: Int) {
        self.expected = expected
        values = .allocate(capacity: expected)
    }

    deinit { values.deallocate() }

    /// Called by the (serial) consumer with a sample's timestamp: its yield time in seconds on CLOCK_MONOTONIC.
    @inline(__always)
    func record(yieldedAt timestamp: Double) {
        let now = monotonicNanoseconds()
        guard count < expected else { return }
        values[count] = Int(now) - Int((timestamp * 1e9).rounded())
        count += 1
        if count == expected { done.signal() }
    }

    /// Called by the consumer when its updates end (`nil`: the end of the stream) before all were recorded.
    func fail(_ error: MotionError?) {
        guard count < expected else { return }
        self.error = error
        done.signal()
    }

    var latencies: UnsafeBufferPointer<Int> { UnsafeBufferPointer(start: values, count: count) }
}

/// Yields `count` samples into `continuation`, one every `period` nanoseconds, from a thread of its own (a
/// driver's thread, not the cooperative pool), then finishes the stream.
func startFeeder(
    _ continuation: AsyncStream<MotionSample>.Continuation, count: Int, periodNanoseconds period: UInt64
) {
    let thread = Thread {
        var deadline = monotonicNanoseconds() + 5_000_000
        for i in 0..<count {
            sleepUntil(nanoseconds: deadline)
            deadline += period
            let acceleration = Acceleration(x: 0.001 * Double(i % 7), y: 0, z: -1)
            let yieldedAt = monotonicNanoseconds()
            continuation.yield(MotionSample(timestamp: Double(yieldedAt) / 1e9, acceleration: acceleration))
        }
        continuation.finish()
    }
    thread.name = "feeder"
    thread.start()
}

enum DeliveryStyle: String, CaseIterable {
    case dispatchQueue = "DispatchQueue handler"
    case operationQueue = "OperationQueue handler"
    case asyncSequence = "async sequence"
}

let latencyMetric = BenchmarkMetric.custom("latency (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let latencySamples = 5000
let latencyWarmUp = 50

func latencyBenchmark(_ style: DeliveryStyle) {
    Benchmark(
        "Latency \(style.rawValue), 1 kHz stream",
        configuration: .init(
            metrics: [latencyMetric, .wallClock], units: [latencyMetric: .count], warmupIterations: 0,
            maxDuration: .seconds(60), maxIterations: 1)
    ) { benchmark in
        let (stream, continuation) = AsyncStream<MotionSample>.makeStream()
        let manager = try MotionManager(source: .stream(stream))
        let recorder = LatencyRecorder(expected: latencySamples)
        var consumer: Task<Void, Never>?
        switch style {
        case .dispatchQueue:
            manager.accelerometerUpdateInterval = 0
            manager.startAccelerometerUpdates(to: DispatchQueue(label: "latency")) { data, error in
                if let data { recorder.record(yieldedAt: data.timestamp) } else { recorder.fail(error) }
            }
        case .operationQueue:
            manager.accelerometerUpdateInterval = 0
            manager.startAccelerometerUpdates(to: OperationQueue()) { data, error in
                if let data { recorder.record(yieldedAt: data.timestamp) } else { recorder.fail(error) }
            }
        case .asyncSequence:
            let updates = manager.accelerometerUpdates(interval: 0)
            consumer = Task {
                do {
                    for try await data in updates { recorder.record(yieldedAt: data.timestamp) }
                    recorder.fail(nil)
                } catch {
                    recorder.fail(error as? MotionError)
                }
            }
        }
        startFeeder(continuation, count: latencySamples, periodNanoseconds: 1_000_000)
        await recorder.done.wait()
        manager.stopAccelerometerUpdates()
        consumer?.cancel()
        await consumer?.value
        benchmark.stopMeasurement()
        if let error = recorder.error { print("\(style.rawValue): \(error)") }
        if recorder.count < latencySamples {
            print("\(style.rawValue): \(recorder.count) of \(latencySamples) samples delivered")
        }
        let latencies = recorder.latencies.dropFirst(latencyWarmUp)
        for latency in latencies { benchmark.measurement(latencyMetric, latency) }
        // Exact percentiles from the sorted values, next to the histogram's.
        let sorted = latencies.sorted()
        if let maxIndex = latencies.indices.max(by: { latencies[$0] < latencies[$1] }) {
            print(
                "\(style.rawValue): max at sample \(maxIndex); over 100 µs: \(sorted.count { $0 > 100_000 }), "
                    + "over 500 µs: \(sorted.count { $0 > 500_000 })")
        }
        if !sorted.isEmpty {
            func percentile(_ p: Double) -> Double {
                Double(sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]) / 1000
            }
            print(
                "\(style.rawValue): \(sorted.count) samples, latency µs p50 \(percentile(0.5)) p90 \(percentile(0.9))"
                    + " p99 \(percentile(0.99)) max \(Double(sorted.last!) / 1000)")
        }
    }
}

// MARK: CPU of many consumers at 100 Hz

let cpuPerWallMetric = BenchmarkMetric.custom(
    "CPU per wall second (µs/s; 10000 = 1 % of a core)", polarity: .prefersSmaller, useScalingFactor: false)
let cpuPerUpdateMetric = BenchmarkMetric.custom(
    "CPU per delivered update (ns)", polarity: .prefersSmaller, useScalingFactor: false)
let deliveredMetric = BenchmarkMetric.custom(
    "updates delivered", polarity: .prefersLarger, useScalingFactor: false)
let cpuSeconds = 10

/// The process doing nothing for as long: what the benchmark process itself costs, to subtract.
func idleBenchmark() {
    let metrics = [cpuPerWallMetric]
    Benchmark(
        "CPU idle process (no manager), \(cpuSeconds) s",
        configuration: .init(
            metrics: metrics + [.wallClock, .cpuTotal],
            units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) }), warmupIterations: 0,
            maxDuration: .seconds(60), maxIterations: 1)
    ) { benchmark in
        let start = (wall: monotonicNanoseconds(), cpu: processUsage().cpu)
        try? await Task.sleep(for: .seconds(cpuSeconds))
        let end = (wall: monotonicNanoseconds(), cpu: processUsage().cpu)
        benchmark.stopMeasurement()
        let wall = Double(end.wall - start.wall), cpu = Double(end.cpu - start.cpu)
        benchmark.measurement(cpuPerWallMetric, Int((cpu / wall * 1e6).rounded()))
        print("idle: wall \(wall / 1e9) s, CPU \(cpu / 1e9) s = \(100 * cpu / wall) % of a core")
    }
}

func cpuBenchmark(consumers: Int) {
    let samples = (0..<(cpuSeconds * 100)).map { i in
        MotionSample(timestamp: Double(i) / 100, acceleration: Acceleration(x: 0.001 * Double(i % 7), y: 0, z: -1))
    }
    let metrics = [cpuPerWallMetric, cpuPerUpdateMetric, deliveredMetric]
    Benchmark(
        "CPU \(consumers) async consumer\(consumers == 1 ? "" : "s"), 100 Hz real time, \(cpuSeconds) s",
        configuration: .init(
            metrics: metrics + [.wallClock, .cpuTotal],
            units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) }), warmupIterations: 0,
            maxDuration: .seconds(60), maxIterations: 1)
    ) { benchmark in
        let manager = try MotionManager(source: .samples(samples, pacing: .realTime))
        let start = (wall: monotonicNanoseconds(), cpu: processUsage().cpu)
        let subscriptions = (0..<consumers).map { _ in manager.accelerometerUpdates(interval: 0) }
        let delivered = await withTaskGroup(of: Int.self) { group in
            for updates in subscriptions {
                group.addTask {
                    var received = 0
                    do {
                        for try await update in updates { received += 1; blackHole(update) }
                    } catch {
                        print("consumer: \(error)")
                    }
                    return received
                }
            }
            return await group.reduce(0, +)
        }
        let end = (wall: monotonicNanoseconds(), cpu: processUsage().cpu)
        benchmark.stopMeasurement()
        let wall = Double(end.wall - start.wall), cpu = Double(end.cpu - start.cpu)
        benchmark.measurement(cpuPerWallMetric, Int((cpu / wall * 1e6).rounded()))
        benchmark.measurement(cpuPerUpdateMetric, delivered > 0 ? Int((cpu / Double(delivered)).rounded()) : 0)
        benchmark.measurement(deliveredMetric, delivered)
        print(
            "\(consumers) consumers: wall \(wall / 1e9) s, CPU \(cpu / 1e9) s = \(100 * cpu / wall) % of a core, "
                + "\(delivered) updates (expected \(consumers * samples.count)), \(cpu / Double(max(delivered, 1))) ns each")
    }
}

// MARK: Memory with a stalled consumer

/// How many samples the reader has taken.
final class ReaderProgress: Sendable {
    let read = Atomic<Int>(0)
}

/// `count` samples, made one at a time as the producer asks for them; never more than `window` ahead of the
/// reader (so the reader never drops), and never waiting for anybody else.
struct LazySamples: AsyncSequence, Sendable {
    typealias Element = MotionSample
    let count: Int
    let window: Int
    let progress: ReaderProgress

    struct AsyncIterator: AsyncIteratorProtocol {
        let count: Int
        let window: Int
        let progress: ReaderProgress
        var next = 0

        mutating func next() async -> MotionSample? {
            guard next < count else { return nil }
            while next - progress.read.load(ordering: .relaxed) >= window { await Task.yield() }
            defer { next += 1 }
            return MotionSample(
                timestamp: Double(next) * 0.001, acceleration: Acceleration(x: 0.001 * Double(next % 7), y: 0, z: -1))
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(count: count, window: window, progress: progress)
    }
}

let readMetric = BenchmarkMetric.custom("reader: updates read", polarity: .prefersLarger, useScalingFactor: false)
let readerDroppedMetric = BenchmarkMetric.custom("reader: droppedCount", useScalingFactor: false)
let oldestDroppedMetric = BenchmarkMetric.custom(
    "stalled bufferingOldest(1024): droppedCount", useScalingFactor: false)
let newestDroppedMetric = BenchmarkMetric.custom("stalled bufferingNewest(1): droppedCount", useScalingFactor: false)
let peakRSSMetric = BenchmarkMetric.custom("VmHWM: peak RSS during the run (kB)", useScalingFactor: false)
let rssGrowthMetric = BenchmarkMetric.custom("RSS growth over the run (kB)", useScalingFactor: false)
let checkpointRSSMetric = BenchmarkMetric.custom("RSS at each 1 M samples read (kB)", useScalingFactor: false)

func memoryBenchmark(samples: Int) {
    let metrics = [
        readMetric, readerDroppedMetric, oldestDroppedMetric, newestDroppedMetric, peakRSSMetric, rssGrowthMetric,
        checkpointRSSMetric,
    ]
    Benchmark(
        "Memory stalled consumers, \(samples / 1_000_000) M samples",
        configuration: .init(
            metrics: metrics + [.wallClock, .peakMemoryResident, .mallocCountTotal, .mallocFreeDelta],
            units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) }), warmupIterations: 0,
            maxDuration: .seconds(600), maxIterations: 1)
    ) { benchmark in
        let progress = ReaderProgress()
        let manager = try MotionManager(
            source: .stream(LazySamples(count: samples, window: 512, progress: progress)))
        let peakReset = resetPeakRSS()
        let rssBefore = currentRSSKilobytes()
        let stalledOldest = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(1024))
        let stalledNewest = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingNewest(1))
        let reader = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(1024))
        var read = 0
        var checkpoints: [Int] = []
        checkpoints.reserveCapacity(samples / 1_000_000)
        do {
            for try await update in reader {
                read += 1
                progress.read.store(read, ordering: .relaxed)
                blackHole(update)
                if read % 1_000_000 == 0 { checkpoints.append(currentRSSKilobytes()) }
            }
        } catch {
            print("reader: \(error)")
        }
        let rssAfter = currentRSSKilobytes()
        let peakRSS = peakRSSKilobytes()
        benchmark.stopMeasurement()
        let oldestDropped = stalledOldest.droppedCount, newestDropped = stalledNewest.droppedCount
        withExtendedLifetime((stalledOldest, stalledNewest)) {}
        benchmark.measurement(readMetric, read)
        benchmark.measurement(readerDroppedMetric, reader.droppedCount)
        benchmark.measurement(oldestDroppedMetric, oldestDropped)
        benchmark.measurement(newestDroppedMetric, newestDropped)
        if peakReset { benchmark.measurement(peakRSSMetric, peakRSS) }
        benchmark.measurement(rssGrowthMetric, rssAfter - rssBefore)
        for rss in checkpoints { benchmark.measurement(checkpointRSSMetric, rss) }
        print(
            "\(samples) samples: read \(read), reader dropped \(reader.droppedCount), stalled oldest(1024) dropped "
                + "\(oldestDropped), newest(1) dropped \(newestDropped); RSS \(rssBefore) → \(rssAfter) kB, "
                + "peak \(peakReset ? "\(peakRSS) kB" : "unknown (clear_refs failed)"); RSS kB at each 1 M read: \(checkpoints)")
    }
}

let benchmarks: @Sendable () -> Void = {
    for style in DeliveryStyle.allCases { latencyBenchmark(style) }
    idleBenchmark()
    cpuBenchmark(consumers: 1)
    cpuBenchmark(consumers: 100)
    memoryBenchmark(samples: 1_000_000)
    memoryBenchmark(samples: 10_000_000)
}

#else
/// Linux only (`CLOCK_MONOTONIC` deadlines, `/proc/self`).
let benchmarks: @Sendable () -> Void = {}
#endif
