import Foundation
import IIOTestbed
import Testing

/// CPU time and wake-ups of `motionctl stream --device auto` reading an emulated device for 60 s, at 100 Hz and
/// 1 kHz, with the device node backed by a FIFO (as a kernel IIO buffer node behaves for its reader: whole batches,
/// an empty read returns EAGAIN at once) and by a pty (whose tty layer makes an empty read wait for its kernel
/// worker now and then). Opt-in (it takes four minutes): `SWIFT_MOTION_DEVICE_BENCHMARK=1 swift test --filter
/// DeviceBenchmarkTests`; set `SWIFT_MOTION_DEVICE_BENCHMARK_SECONDS` to run shorter,
/// `SWIFT_MOTION_DEVICE_BENCHMARK_NODES` to `fifo` or `pty` to run one backing only, and `SWIFT_MOTION_MOTIONCTL`
/// to measure another build (such as `.build/release/motionctl`). Figures are printed and recorded in
/// Docs/Performance.md.
///
/// The feeder writes one batch (rate × 0.05 s of scans, the watermark motionctl sets) every 50 ms, on absolute
/// CLOCK_MONOTONIC deadlines, as a kernel buffer with that watermark would wake its reader; each batch is one
/// write (≤ 800 bytes, below PIPE_BUF, so a FIFO hands it over whole).
@Suite(.serialized, .enabled(if: Testbed.isEnabled && ProcessInfo.processInfo.environment["SWIFT_MOTION_DEVICE_BENCHMARK"] != nil))
struct DeviceBenchmarkTests {
    static var seconds: Double {
        ProcessInfo.processInfo.environment["SWIFT_MOTION_DEVICE_BENCHMARK_SECONDS"].flatMap(Double.init) ?? 60
    }

    /// The node backings to measure (`SWIFT_MOTION_DEVICE_BENCHMARK_NODES`, comma-separated; both by default).
    static var nodes: Set<String> {
        Set((ProcessInfo.processInfo.environment["SWIFT_MOTION_DEVICE_BENCHMARK_NODES"] ?? "fifo,pty")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// `SWIFT_MOTION_MOTIONCTL` (such as a release build), or the motionctl built with the tests.
    static var executable: URL {
        ProcessInfo.processInfo.environment["SWIFT_MOTION_MOTIONCTL"].map { URL(fileURLWithPath: $0) }
            ?? Motionctl.executable
    }

    @Test(arguments: ["fifo", "pty"], [100, 1000])
    func streamCPUTime(node: String, rate: Int) async throws {
        guard Self.nodes.contains(node) else { return }
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh(node: node == "fifo" ? .fifo : .pty)
            device.set("sampling_frequency_available", "1 10 25 50 100 200 400 1000")
            let path = try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl(
                ["stream", "--device", "auto", "--rate", "\(rate)", "--format", "csv"], executable: Self.executable)
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            let batch = rate / 20
            let start = monotonicNow()
            let before = try ProcessFigures(pid: child.process.processIdentifier)
            var sent = 0
            var next = start
            let end = start + Self.seconds
            while next < end {
                let rows: [[Int64]] = (sent..<sent + batch).map { i in
                    [Int64(i % 3), -1024, -Int64(i % 5), 1_000_000_000 + Int64(i) * 1_000_000_000 / Int64(rate)]
                }
                try testbed.feed("/dev/iio:device0", lis3dhScans.encode(rows: rows), scanSize: lis3dhScans.scanSize)
                sent += batch
                next += 0.05
                sleepUntil(next)
            }
            _ = try await child.wait(timeout: 5) { $0.lines.filter { $0.first?.isNumber == true }.count >= sent }
            let after = try ProcessFigures(pid: child.process.processIdentifier)
            let elapsed = monotonicNow() - start
            #expect(try await child.stop(SIGINT) == 0)
            let delivered = child.lines.filter { $0.first?.isNumber == true }.count
            #expect(delivered == sent)
            let cpu = after.cpuSeconds - before.cpuSeconds
            let runTime = after.runSeconds - before.runSeconds
            let switches = after.voluntarySwitches - before.voluntarySwitches
            let batches = sent / batch
            let byThread = after.byThread.map { key, value in (key, value - (before.byThread[key] ?? 0)) }
            let waiting = byThread.max { $0.1 < $1.1 } ?? ("?", 0)
            let report = String(
                format: "device benchmark (%@ node): %d Hz for %.1f s: %d scans sent, %d delivered; CPU %.3f s = %.3f %% of one core (schedstat run time %.4f s = %.3f %%); %d voluntary context switches (%.1f /s, %d batches sent); busiest thread %@: %d = %.3f per batch",
                node, rate, elapsed, sent, delivered, cpu, 100 * cpu / elapsed, runTime, 100 * runTime / elapsed,
                switches, Double(switches) / elapsed, batches, waiting.0, waiting.1, Double(waiting.1) / Double(batches))
            if node == "fifo" {
                // The goal: one wake-up per batch (a FIFO node stands for a kernel buffer; a pty's tty worker adds
                // some, Docs/Performance.md). Two spare for the batches at the edges of the measured window.
                #expect(waiting.1 <= batches + 2, "\(waiting.1) wake-ups of the waiting thread for \(batches) batches")
            }
            let threads = byThread.map { "\($0.0) \($0.1)" }.sorted()
            print(report + "; by thread: " + threads.joined(separator: ", "))
            FileHandle.standardError.write(Data((report + "\n").utf8))
        }
    }
}

/// CPU time (user + system, all threads, in clock ticks; and run time of the live threads from schedstat) and
/// voluntary context switches (all threads) of a process, from /proc.
struct ProcessFigures {
    var cpuSeconds: Double
    /// Time on a CPU of the live threads, in ns precision (`/proc/<pid>/task/<tid>/schedstat`, first field).
    var runSeconds: Double = 0
    var voluntarySwitches: Int
    /// Voluntary context switches by thread (`comm` name and id).
    var byThread: [String: Int] = [:]

    init(pid: Int32) throws {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the ")" that ends the command name: state is field 3; utime 14, stime 15.
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        cpuSeconds = (Double(fields[11])! + Double(fields[12])!) / ticks
        var switches = 0
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            let schedstat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            runSeconds += Double(schedstat.split(separator: " ").first.map(String.init) ?? "").map { $0 * 1e-9 } ?? 0
            let name = status.split(separator: "\n").first { $0.hasPrefix("Name:") }?.split(separator: "\t").last ?? "?"
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:") {
                let count = Int(line.split(separator: "\t").last.map(String.init) ?? "") ?? 0
                switches += count
                byThread["\(name)/\(task)"] = count
            }
        }
        voluntarySwitches = switches
    }
}

func monotonicNow() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

func sleepUntil(_ deadline: Double) {
    let seconds = deadline.rounded(.down)
    var target = timespec(tv_sec: Int(seconds), tv_nsec: Int((deadline - seconds) * 1e9))
    while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
}
