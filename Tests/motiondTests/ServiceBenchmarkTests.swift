import Foundation
import IIOTestbed
import MotionCore
import MotionDBus
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The service's figures (issue 12, Docs/Performance.md "motiond"): the real motiond on a private dbus-daemon,
/// reading an emulated 6-axis IMU at 1 kHz, with real clients reading the passed sockets. Opt-in (it takes minutes
/// and measures time): `Scripts/benchmark-service.sh`, or
/// `SWIFT_MOTION_SERVICE_BENCHMARK=1 SWIFT_MOTION_MOTIOND=$PWD/.build/release/motiond swift test --filter
/// ServiceBenchmarkTests`. It prints its figures; it asserts only that the streams worked (records arrived, every
/// stream was read), never a time.
///
/// Settings (environment): `SWIFT_MOTION_MOTIOND` the motiond to measure (default: the one built with the tests);
/// `SWIFT_MOTION_SERVICE_BENCHMARK_ARGS` more motiond arguments, such as `--batch-duration 0.001`;
/// `SWIFT_MOTION_SERVICE_BENCHMARK_SECONDS` the measured window of the stream benchmark (default 30);
/// `SWIFT_MOTION_SERVICE_BENCHMARK_SAMPLES` the samples of the memory benchmark (default 10,000,000);
/// `SWIFT_MOTION_SERVICE_BENCHMARK_NODE` `fifo` (default: reads like a kernel buffer node) or `pty`.
@Suite(
    "motiond benchmarks: CPU share and latency of 50 streams, memory over 10 M samples", .serialized,
    .enabled(if: ProcessInfo.processInfo.environment["SWIFT_MOTION_SERVICE_BENCHMARK"] != nil),
    .requires(.umockdevPreload, .dbusClients))
struct ServiceBenchmarkTests {
    static let environment = ProcessInfo.processInfo.environment
    static var executable: String { environment["SWIFT_MOTION_MOTIOND"] ?? ServiceFixture.executable }
    static var arguments: [String] {
        (environment["SWIFT_MOTION_SERVICE_BENCHMARK_ARGS"] ?? "").split(separator: " ").map(String.init)
    }
    static var seconds: Double { environment["SWIFT_MOTION_SERVICE_BENCHMARK_SECONDS"].flatMap(Double.init) ?? 30 }
    static var samples: Int { environment["SWIFT_MOTION_SERVICE_BENCHMARK_SAMPLES"].flatMap(Int.init) ?? 10_000_000 }
    static var node: EmulatedDevice.Node {
        environment["SWIFT_MOTION_SERVICE_BENCHMARK_NODE"] == "pty" ? .pty : .fifo
    }

    /// A buffered 6-axis IMU (accelerometer and gyroscope, no magnetometer) that runs at up to 1.6 kHz, with
    /// boot-clock timestamps in its scans.
    static func imu() -> EmulatedDevice {
        var device = EmulatedDevice.iio(name: "bmi160", number: 0, parent: "/devices/platform/bmi160", node: node)
        device.addSensor("accel", raw: (0, 0, 1024), scale: "0.009576", scanType: "le:s16/16>>0")
        device.addSensor("anglvel", raw: (0, 0, 0), scale: "0.001", scanType: "le:s16/16>>0", firstIndex: 3)
        device.addChannel("timestamp", scan: (6, "le:s64/64>>0"))
        device.set("current_timestamp_clock", "boottime")
        device.set("sampling_frequency", "100")
        device.set("sampling_frequency_available", "25 50 100 200 400 800 1000 1600")
        device.addBuffer(trigger: nil)
        return device.bufferOnly
    }

    /// 24-byte scans: six s16 channels, padding, the s64 timestamp at byte 16.
    static let encoder = ScanEncoder(channels: (0..<6).map { ($0, "le:s16/16>>0") } + [(6, "le:s64/64>>0")])

    /// The 50 streams of the CPU and latency benchmark, on 10 connections of 5 (a connection may not open the
    /// same request twice): every connection has one stream at each interval, all of one kind and format.
    static let streams: [(connection: Int, kind: String, interval: Double, format: String)] = (0..<50).map { i in
        let intervals = [0.001, 0.005, 0.01, 0.02, 0.1]
        let kinds = [("samples", "csv"), ("samples", "jsonl"), ("device-motion", "csv"), ("device-motion", "jsonl")]
        let (kind, format) = kinds[(i / 5) % 4]
        return (i / 5, kind, intervals[i % 5], format)
    }

    /// The 64 streams of the delivery-fidelity benchmark (issue 27), on 16 connections of 4: intervals from 1 ms
    /// to 1 s, each connection one kind and format, the four kinds and formats taking turns.
    static let fidelityStreams: [(connection: Int, kind: String, interval: Double, format: String)] = (0..<64).map { i in
        let intervals = [0.001, 0.002, 0.005, 0.01, 0.02, 0.04, 0.05, 0.1, 0.2, 0.25, 0.5, 1, 0.001, 0.003, 0.01, 0.1]
        let kinds = [("samples", "csv"), ("samples", "jsonl"), ("device-motion", "csv"), ("device-motion", "jsonl")]
        let connection = i / 4
        let (kind, format) = kinds[connection % 4]
        return (connection, kind, intervals[(i + connection) % intervals.count], format)
    }

    /// Starts the service; throws when it does not serve within 20 s.
    static func startService(_ bus: PrivateSystemBus) async throws -> ChildProcess {
        let service = try bus.start(executable, arguments)
        guard try await service.wait(timeout: 20, until: { $0.contains("serving net.hadess.SensorProxy and") }) else {
            service.stop()
            throw TestbedError("motiond did not start within 20 s: \(service.text)")
        }
        return service
    }

    @Test("50 streams at mixed intervals from one 1 kHz device: CPU shares and latency")
    func streams() async throws {
        try await measure(Self.streams)
    }

    @Test("64 streams at intervals from 1 ms to 1 s on 16 connections: every record, at its rate, CPU and latency")
    func fidelity() async throws {
        try await measure(Self.fidelityStreams)
    }

    /// Opens `streams` on a 1 kHz device, feeds it for the window, reads every stream, and prints the figures:
    /// CPU shares, latency, and per interval the records, the rate against 1/I and the records lost.
    func measure(_ streams: [(connection: Int, kind: String, interval: Double, format: String)]) async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(Self.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let service = try await Self.startService(bus)
            defer { service.stop() }
            let pid = service.process.processIdentifier
            var clients: [BusClient] = []
            for _ in 0..<(streams.map(\.connection).max()! + 1) { clients.append(try await BusClient(address: bus.address)) }
            var readers: [StreamReader] = []
            for stream in streams {
                readers.append(
                    try await clients[stream.connection].openStream(
                        stream.kind, interval: stream.interval, format: stream.format))
            }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            let frequency = testbed.attribute(path, "sampling_frequency") ?? "?"
            let watermarkPath = testbed.rootDirectory + path + "/buffer/watermark"

            let phase = Phase()
            let feeder = Feeder(
                descriptor: testbed.masterFileDescriptor(forNode: "/dev/iio:device0"), watermarkPath: watermarkPath,
                phase: phase)
            let reader = LatencyReader(descriptors: readers.map(\.descriptor), phase: phase)
            let feederThread = Thread { feeder.run() }
            feederThread.name = "feeder"
            let readerThread = Thread { reader.run() }
            readerThread.name = "clients"
            feederThread.start()
            readerThread.start()

            try await Task.sleep(for: .seconds(3))  // warm-up: the device runs, every stream has its header out
            let loadBefore = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
            let machineBefore = MachineCPU()
            let before = try ProcessCPU(pid: pid)
            let selfBefore = selfCPUSeconds()
            let start = monotonicSeconds()
            phase.value.store(1, ordering: .sequentiallyConsistent)
            try await Task.sleep(for: .seconds(Self.seconds))
            phase.value.store(2, ordering: .sequentiallyConsistent)
            let elapsed = monotonicSeconds() - start
            let after = try ProcessCPU(pid: pid)
            let selfAfter = selfCPUSeconds()
            let machineAfter = MachineCPU()
            let loadAfter = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
            while !(feeder.done.load(ordering: .sequentiallyConsistent) && reader.done.load(ordering: .sequentiallyConsistent)) {
                try await Task.sleep(for: .milliseconds(20))
            }

            var dropped: UInt64 = 0
            var delivered: UInt64 = 0
            for (stream, streamReader) in zip(streams, readers) {
                let counts = try await clients[stream.connection].call("StreamStatistics", [.uint32(streamReader.id)])
                if counts.count == 2, case .uint64(let d) = counts[0], case .uint64(let x) = counts[1] {
                    delivered += d
                    dropped += x
                }
            }
            let watermark = testbed.attribute(path, "buffer/watermark") ?? "?"
            let latencies = reader.latencies.sorted()
            func percentile(_ p: Double) -> Double {
                latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int(p * Double(latencies.count)))]
            }
            let core = { (seconds: Double) in String(format: "%.2f %%", 100 * seconds / elapsed) }
            var lines = [
                "service benchmark: motiond \(Self.executable) \(Self.arguments.joined(separator: " ")); node \(Self.environment["SWIFT_MOTION_SERVICE_BENCHMARK_NODE"] ?? "fifo"); sampling_frequency \(frequency) Hz, buffer/watermark \(watermark)",
                String(format: "window %.2f s; load average before %@, after %@; machine busy (all cores, /proc/stat) %.0f %% of 2 cores' time",
                    elapsed, loadBefore.trimmingCharacters(in: .whitespacesAndNewlines),
                    loadAfter.trimmingCharacters(in: .whitespacesAndNewlines), 100 * machineAfter.busyShare(since: machineBefore)),
                "scans fed in the window: \(feeder.fedInWindow) (ticks missed: \(feeder.missedInWindow)), writes \(feeder.writesInWindow)",
                "motiond CPU: ticks \(String(format: "%.2f", after.ticks - before.ticks)) s = \(core(after.ticks - before.ticks)) of one core; schedstat \(String(format: "%.3f", after.run - before.run)) s = \(core(after.run - before.run))",
                String(format: "motiond calls: read %.0f /s, write %.0f /s (/proc/<pid>/io)",
                    (after.readCalls - before.readCalls) / elapsed, (after.writeCalls - before.writeCalls) / elapsed),
                "feeder thread CPU: \(String(format: "%.3f", feeder.cpu)) s = \(core(feeder.cpu)); clients' reader thread CPU: \(String(format: "%.3f", reader.cpu)) s = \(core(reader.cpu)); whole test process (getrusage): \(core(selfAfter - selfBefore))",
                "records read in the window: \(latencies.count) (\(String(format: "%.0f", Double(latencies.count) / elapsed)) /s); all streams, whole run: delivered \(delivered), dropped \(dropped), dropped-event lines \(reader.droppedEvents)",
                String(format: "latency (feed → client's read): p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.3f ms; over 1 ms: %d",
                    percentile(0.5) * 1e3, percentile(0.9) * 1e3, percentile(0.99) * 1e3, percentile(0.999) * 1e3,
                    (latencies.last ?? .nan) * 1e3, latencies.filter { $0 > 0.001 }.count),
            ]
            for interval in Set(streams.map(\.interval)).sorted() {
                let indices = streams.indices.filter { streams[$0].interval == interval }
                let values = indices.flatMap { reader.latenciesByStream[$0] }.sorted()
                guard !values.isEmpty else { continue }
                // The rate: mean spacing of each stream's records against max(I, the device's period); the records
                // lost: those the grid had (the span over that spacing) that did not come.
                let period = max(interval, 0.001)
                var worstRateError = 0.0
                var lost = 0
                for index in indices {
                    let times = reader.timestampsByStream[index]
                    guard times.count > 1 else { continue }
                    let spacing = (times.last! - times.first!) / Double(times.count - 1)
                    worstRateError = max(worstRateError, abs(spacing / period - 1))
                    lost += max(0, Int(((times.last! - times.first!) / period).rounded()) + 1 - times.count)
                }
                lines.append(String(format: "  interval %.3f s: %d streams, %d records, p50 %.3f ms, p99 %.3f ms; rate within %.3f %% of 1/max(I, 1 ms); records missing from the grid %d",
                    interval, indices.count, values.count, values[values.count / 2] * 1e3,
                    values[min(values.count - 1, values.count * 99 / 100)] * 1e3, 100 * worstRateError, lost))
            }
            let report = lines.joined(separator: "\n")
            print(report)
            #expect(latencies.count > 1000)
            #expect(reader.latenciesByStream.allSatisfy { !$0.isEmpty }, "a stream got no record")
            for reader in readers { reader.close() }
            for client in clients { await client.close() }
        }
    }

    @Test("Resident memory of motiond over 10 M samples, with a client that never reads and one that reads")
    func memory() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(Self.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let service = try await Self.startService(bus)
            defer { service.stop() }
            let pid = service.process.processIdentifier
            let client = try await BusClient(address: bus.address)
            let stalled = try await client.openStream("samples", interval: 0.001, format: "jsonl")
            let reading = try await client.openStream("samples", interval: 0.001, format: "csv")
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            let phase = Phase()
            phase.value.store(1, ordering: .sequentiallyConsistent)
            let reader = LatencyReader(descriptors: [reading.descriptor], phase: phase, recordLatency: false)
            let readerThread = Thread { reader.run() }
            readerThread.start()

            let fd = testbed.masterFileDescriptor(forNode: "/dev/iio:device0")
            let chunk = 170  // scans per write: 4 080 bytes, one atomic pipe write
            let start = boottimeNanoseconds()
            var rows = [UInt8](repeating: 0, count: chunk * Self.encoder.scanSize)
            var report = ["memory benchmark: motiond \(Self.executable) \(Self.arguments.joined(separator: " ")); \(Self.samples) samples; load average \((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?")"]
            report.append("before: \(Self.memory(pid))")
            let began = monotonicSeconds()
            var sent = 0
            var nextReport = 1_000_000
            while sent < Self.samples {
                // As fast as the reading client takes them: at most 500 scans ahead of its lines (its stream's
                // buffer holds 1 024 records), so that it loses none; the other client's records are dropped.
                while sent - reader.lineCount.load(ordering: .relaxed) > 500 { usleep(50) }
                let count = min(chunk, Self.samples - sent)
                rows.withUnsafeMutableBytes { buffer in
                    for k in 0..<count {
                        Self.scan(start + Int64(sent + k) * 1_000_000, into: buffer.baseAddress! + k * Self.encoder.scanSize)
                    }
                }
                try Self.writeAll(fd, Array(rows[0..<count * Self.encoder.scanSize]))
                sent += count
                if sent >= nextReport {
                    report.append(String(format: "%2d M samples after %.1f s: %@; reading client %d lines",
                        sent / 1_000_000, monotonicSeconds() - began, Self.memory(pid), reader.lineCount.load(ordering: .relaxed)))
                    nextReport += 1_000_000
                }
            }
            try await Task.sleep(for: .seconds(2))
            phase.value.store(2, ordering: .sequentiallyConsistent)
            while !reader.done.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(20)) }
            for stream in [("never reads", stalled), ("reads", reading)] {
                let counts = try await client.call("StreamStatistics", [.uint32(stream.1.id)])
                report.append("client that \(stream.0): StreamStatistics \(counts)")
            }
            report.append("after 2 s: \(Self.memory(pid)); the service log has \(service.text.split(separator: "\n").count) lines")
            let text = report.joined(separator: "\n")
            print(text)
            #expect(reader.lineCount.load(ordering: .relaxed) > 0)
            stalled.close()
            reading.close()
            await client.close()
        }
    }

    /// One scan lying still face up (0, 0, 1024) with a rotation rate of (1, −2, 3) raw, at boot-clock time `stamp`.
    static let template = encoder.encode([[0], [0], [1024], [1], [-2], [3], [0]])

    /// Writes the scan at `stamp` (ns) at `out` (``encoder``'s `scanSize` bytes).
    static func scan(_ stamp: Int64, into out: UnsafeMutableRawPointer) {
        template.withUnsafeBytes { out.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        out.storeBytes(of: stamp.littleEndian, toByteOffset: 16, as: Int64.self)
    }

    /// `VmRSS` and `VmHWM` of `pid`.
    static func memory(_ pid: Int32) -> String {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func value(_ key: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(key) } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
        }
        return String(format: "RSS %d kB (%.2f MiB), peak %d kB", value("VmRSS:"), Double(value("VmRSS:")) / 1024, value("VmHWM:"))
    }

    /// Writes `bytes` to a non-blocking descriptor, waiting while it is full.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var request = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&request, 1, 1000)
                    continue
                }
                throw TestbedError("writing the scans failed: errno \(errno)")
            }
            done += written
        }
    }
}

/// 0: warming up, 1: measuring, 2: stop.
final class Phase: Sendable {
    let value = Atomic<Int>(0)
}

/// The emulated device's side: one scan every 1 ms (absolute CLOCK_MONOTONIC deadlines), stamped with
/// CLOCK_BOOTTIME when it is made, and handed to the node once `buffer/watermark` scans are waiting, in one write,
/// as the kernel wakes a reader once `watermark` scans are buffered. With a watermark of 1 every scan is written
/// at once. A tick that comes more than 1 ms late is skipped (counted), so that stamps stay the time of feeding.
final class Feeder: @unchecked Sendable {
    let descriptor: Int32
    let watermarkPath: String
    let phase: Phase
    let done = Atomic<Bool>(false)
    var fedInWindow = 0
    var missedInWindow = 0
    var writesInWindow = 0
    /// CPU time of this thread in the window, in seconds.
    var cpu = 0.0

    init(descriptor: Int32, watermarkPath: String, phase: Phase) {
        self.descriptor = descriptor
        self.watermarkPath = watermarkPath
        self.phase = phase
    }

    func readWatermark() -> Int {
        // libiio writes "50\0" (it counts the terminator): digits only.
        let text = ((try? String(contentsOfFile: watermarkPath, encoding: .utf8)) ?? "").prefix { $0.isNumber }
        return max(1, Int(text) ?? 1)
    }

    func run() {
        defer { done.store(true, ordering: .sequentiallyConsistent) }
        let scanSize = ServiceBenchmarkTests.encoder.scanSize
        var pending = [UInt8](repeating: 0, count: 4096 * scanSize)
        var pendingCount = 0
        var watermark = readWatermark()
        var next = monotonicNanoseconds()
        var index: Int64 = 0
        var measuring = false
        var cpuStart = 0.0
        while true {
            let now = phase.value.load(ordering: .relaxed)
            if now == 2 { break }
            if now == 1 && !measuring {
                measuring = true
                cpuStart = threadCPUSeconds()
            }
            next += 1_000_000
            var target = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
            let late = Int64(monotonicNanoseconds()) - Int64(next)
            if late > 1_000_000 {
                let skipped = Int(late / 1_000_000)
                next += UInt64(skipped) * 1_000_000
                if measuring { missedInWindow += skipped }
            }
            // One scan: accelerometer at (0, 0, 1 g), a small rotation rate, stamped now.
            let stamp = boottimeNanoseconds()
            pending.withUnsafeMutableBytes { buffer in
                ServiceBenchmarkTests.scan(stamp, into: buffer.baseAddress!.advanced(by: pendingCount * scanSize))
            }
            index += 1
            pendingCount += 1
            if measuring { fedInWindow += 1 }
            if index % 1000 == 0 { watermark = readWatermark() }
            if pendingCount >= watermark || pendingCount == 4096 {
                let bytes = pendingCount * scanSize
                var done = 0
                while done < bytes {
                    let written = pending.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, bytes - done) }
                    if written > 0 { done += written } else if errno != EINTR && errno != EAGAIN { break }
                }
                pendingCount = 0
                if measuring { writesInWindow += 1 }
            }
        }
        cpu = threadCPUSeconds() - cpuStart
    }
}

/// The clients' side: one thread reads every stream's socket (poll), and takes for each record (a CSV row or a
/// JSON Lines sample or attitude) the time of the read that returned it minus the record's `t`.
final class LatencyReader: @unchecked Sendable {
    let descriptors: [Int32]
    let phase: Phase
    let recordLatency: Bool
    let done = Atomic<Bool>(false)
    let lineCount = Atomic<Int>(0)
    var latencies: [Double] = []
    var latenciesByStream: [[Double]]
    /// Each stream's record times (`t`) read in the window.
    var timestampsByStream: [[Double]]
    var droppedEvents = 0
    var cpu = 0.0

    init(descriptors: [Int32], phase: Phase, recordLatency: Bool = true) {
        self.descriptors = descriptors
        self.phase = phase
        self.recordLatency = recordLatency
        latenciesByStream = Array(repeating: [], count: descriptors.count)
        timestampsByStream = Array(repeating: [], count: descriptors.count)
        latencies.reserveCapacity(4_000_000)
    }

    func run() {
        defer { done.store(true, ordering: .sequentiallyConsistent) }
        var polled = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let capacity = 1 << 18
        let buffers = descriptors.map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + 1) }
        defer { buffers.forEach { $0.deallocate() } }
        var filled = [Int](repeating: 0, count: descriptors.count)
        var measuring = false
        var cpuStart = 0.0
        var lines = 0
        while true {
            let now = phase.value.load(ordering: .relaxed)
            if now == 2 { break }
            if now == 1 && !measuring {
                measuring = true
                cpuStart = threadCPUSeconds()
            }
            let count = poll(&polled, nfds_t(polled.count), 10)
            guard count > 0 else { continue }
            for index in polled.indices where polled[index].revents != 0 {
                let buffer = buffers[index]
                while true {
                    let got = read(descriptors[index], buffer + filled[index], capacity - filled[index])
                    guard got > 0 else { break }
                    let readAt = Double(boottimeNanoseconds()) * 1e-9
                    let end = filled[index] + got
                    var start = 0
                    while start < end,
                        let newline = memchr(buffer + start, Int32(UInt8(ascii: "\n")), end - start)?
                            .assumingMemoryBound(to: UInt8.self)
                    {
                        let lineEnd = buffer.distance(to: newline)
                        lines += 1
                        if recordLatency && measuring, let t = Self.timestamp(buffer + start, count: lineEnd - start) {
                            if t.isNaN {
                                droppedEvents += 1
                            } else {
                                latencies.append(readAt - t)
                                latenciesByStream[index].append(readAt - t)
                                timestampsByStream[index].append(t)
                            }
                        }
                        start = lineEnd + 1
                    }
                    if start < end { memmove(buffer, buffer + start, end - start) }
                    filled[index] = end - start
                    if filled[index] == capacity { filled[index] = 0 }  // a line longer than the buffer: never here
                }
            }
            lineCount.store(lines, ordering: .relaxed)
        }
        lineCount.store(lines, ordering: .relaxed)
        if measuring { cpu = threadCPUSeconds() - cpuStart }
    }

    /// The `t` of a record line: the first CSV field, or the `"t":` of a JSON Lines sample or attitude; NaN for
    /// a `dropped` event; `nil` for other lines (metadata comments, the CSV header).
    static func timestamp(_ line: UnsafeMutablePointer<UInt8>, count: Int) -> Double? {
        guard count > 0 else { return nil }
        let first = line[0]
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") {
            return line.withMemoryRebound(to: CChar.self, capacity: count) { strtod($0, nil) }
        }
        guard first == UInt8(ascii: "{"), count > 12 else { return nil }
        // {"type":"sample","t":…  {"type":"attitude","t":…  {"type":"dropped","t":…
        switch line[9] {
        case UInt8(ascii: "d"): return .nan
        case UInt8(ascii: "s"), UInt8(ascii: "a"): break
        default: return nil
        }
        var i = 10
        while i + 4 < count {
            if line[i] == UInt8(ascii: "\"") && line[i + 1] == UInt8(ascii: "t") && line[i + 2] == UInt8(ascii: "\"")
                && line[i + 3] == UInt8(ascii: ":")
            {
                return (line + i + 4).withMemoryRebound(to: CChar.self, capacity: count - i - 4) { strtod($0, nil) }
            }
            i += 1
        }
        return nil
    }
}

/// CPU time of a process: clock ticks of `/proc/<pid>/stat` (utime + stime, all threads, 10 ms) and the run
/// time of its live threads (`/proc/<pid>/task/*/schedstat`, ns); and its read and write calls so far
/// (`syscr`, `syscw` of `/proc/<pid>/io`; 0 when that file cannot be read).
struct ProcessCPU {
    var ticks: Double
    var run: Double
    var readCalls = 0.0
    var writeCalls = 0.0

    init(pid: Int32) throws {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        ticks = (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
        run = 0
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let schedstat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            run += (Double(schedstat.split(separator: " ").first.map(String.init) ?? "") ?? 0) * 1e-9
        }
        for line in ((try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8)) ?? "").split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            if parts[0] == "syscr:" { readCalls = value }
            if parts[0] == "syscw:" { writeCalls = value }
        }
    }
}

/// The machine's CPU time from the first line of `/proc/stat`: busy and total, in ticks.
struct MachineCPU {
    var busy = 0.0
    var total = 0.0

    init() {
        guard let file = fopen("/proc/stat", "r") else { return }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 512)
        guard fgets(&line, Int32(line.count), file) != nil else { return }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let values = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).dropFirst().compactMap { Double($0) }
        guard values.count >= 5 else { return }
        total = values.prefix(8).reduce(0, +)
        busy = total - values[3] - values[4]  // idle, iowait
    }

    func busyShare(since before: MachineCPU) -> Double {
        let total = self.total - before.total
        return total > 0 ? (busy - before.busy) / total : .nan
    }
}

func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

func monotonicSeconds() -> Double { Double(monotonicNanoseconds()) * 1e-9 }

func boottimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// User + system CPU time of this process, all threads (`getrusage(RUSAGE_SELF)`), in seconds.
func selfCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
}

func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}
