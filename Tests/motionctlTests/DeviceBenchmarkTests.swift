import Foundation
import IIOTestbed
import Testing

/// CPU time and wake-ups of `motionctl stream --device auto` reading an emulated device fed through a pty for
/// 60 s, at 100 Hz and 1 kHz. Opt-in (it takes two minutes): `SWIFT_MOTION_DEVICE_BENCHMARK=1 swift test
/// --filter DeviceBenchmarkTests`; set `SWIFT_MOTION_DEVICE_BENCHMARK_SECONDS` to run shorter and
/// `SWIFT_MOTION_MOTIONCTL` to measure another build (such as `.build/release/motionctl`). Figures are printed and
/// recorded in Docs/Performance.md.
///
/// The feeder writes one batch (rate × 0.05 s of scans, the watermark motionctl sets) every 50 ms, on absolute
/// CLOCK_MONOTONIC deadlines, as a kernel buffer with that watermark would wake its reader.
@Suite(.serialized, .enabled(if: Testbed.isEnabled && ProcessInfo.processInfo.environment["SWIFT_MOTION_DEVICE_BENCHMARK"] != nil))
struct DeviceBenchmarkTests {
    static var seconds: Double {
        ProcessInfo.processInfo.environment["SWIFT_MOTION_DEVICE_BENCHMARK_SECONDS"].flatMap(Double.init) ?? 60
    }

    /// `SWIFT_MOTION_MOTIONCTL` (such as a release build), or the motionctl built with the tests.
    static var executable: URL {
        ProcessInfo.processInfo.environment["SWIFT_MOTION_MOTIONCTL"].map { URL(fileURLWithPath: $0) }
            ?? Motionctl.executable
    }

    @Test(arguments: [100, 1000])
    func streamCPUTime(rate: Int) async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
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
                try testbed.feed("/dev/iio:device0", lis3dhScans.encode(rows: rows))
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
            let switches = after.voluntarySwitches - before.voluntarySwitches
            let report = String(
                format: "device benchmark: %d Hz for %.1f s: %d scans sent, %d delivered; CPU %.3f s = %.3f %% of one core; %d voluntary context switches (%.1f /s, %d batches sent)",
                rate, elapsed, sent, delivered, cpu, 100 * cpu / elapsed, switches, Double(switches) / elapsed, sent / batch)
            let threads = after.byThread.map { key, value in "\(key) \(value - (before.byThread[key] ?? 0))" }.sorted()
            print(report + "; by thread: " + threads.joined(separator: ", "))
            FileHandle.standardError.write(Data((report + "\n").utf8))
        }
    }
}

/// CPU time (user + system, all threads) and voluntary context switches (all threads) of a process, from /proc.
struct ProcessFigures {
    var cpuSeconds: Double
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
