import Foundation
import IIOTestbed
import MotionCore
import MotionStore
import TestFiles
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `motiond --history DIR` records the accelerometer at 50 Hz into a store that `motionctl history` reads: while
/// it runs, after a SIGKILL (nothing written is lost, nothing damaged), and across a restart.
@Suite("motiond --history", .serialized, .requires(.umockdevPreload, .dbusClients, .setpriv, .root))
struct HistoryTests {
    static let motionctl = (ServiceFixture.executable as NSString).deletingLastPathComponent + "/motionctl"

    /// `motionctl history --store DIR arguments…`: its status, its CSV rows (no metadata, no header) and stderr.
    static func history(_ directory: String, _ arguments: [String] = [], launcher: [String] = []) async throws
        -> (status: Int32, rows: [String], errors: String)
    {
        let command = launcher + [motionctl, "history", "--store", directory] + arguments
        let errorFile = ScratchFolder.path("history-stderr")
        defer { try? FileManager.default.removeItem(atPath: errorFile) }
        let (status, output) = try await Process.output(
            of: "/bin/sh", ["-c", "exec \"$@\" 2>\(errorFile)", "sh"] + command, mergingStandardError: false)
        let errors = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        let rows = output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.hasPrefix("t,") }
        return (status, rows, errors)
    }

    /// A new folder for a test's history: the parent (the caller removes it) and the store's path in it.
    static func historyFolder() throws -> (parent: String, directory: String) {
        let parent = try ScratchFolder.folder("motiond-history")
        return (parent, parent + "/history")
    }

    /// Feeds `batches` batches of 10 scans (100 Hz device time) from scan `first` on, `pause` apart, once the
    /// device's buffer is on.
    static func feed(_ fixture: ServiceFixture, from first: Int = 0, batches: Int, pause: Duration = .milliseconds(20))
        async throws
    {
        #expect(await eventually { fixture.testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
        for batch in 0..<batches {
            let start = first + batch * 10
            try fixture.feed(start..<start + 10)
            try await Task.sleep(for: pause)
        }
    }

    /// The device times of `rows` (t in Unix seconds minus the first row's), in seconds.
    static func relativeTimes(_ rows: [String]) -> [Double] {
        let times = rows.compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }
        return times.map { $0 - (times.first ?? 0) }
    }

    @Test("Recorded while running, kept whole through SIGKILL, continued after a restart; one writer; rights")
    func recordsSurvivesKillAndRestarts() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let (parent, directory) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }

            let first = try await fixture.startService(["--history", directory])
            defer { first.stop() }
            #expect(first.text.contains("history: recording accel every 0.02 s into \(directory)"), "\(first.text)")
            // A second service on the same history is refused at once, naming why.
            let second = try fixture.bus.start(ServiceFixture.executable, ["--history", directory])
            defer { second.stop() }
            #expect(try await second.waitForExit(timeout: 20) == 1, "\(second.text)")
            #expect(second.text.contains("another process is writing this store"), "\(second.text)")

            // 3 s of device time at 100 Hz: the history keeps every second sample (50 Hz), 150 of them.
            try await HistoryTests.feed(fixture, batches: 30)
            var seen: (status: Int32, rows: [String], errors: String) = (0, [], "")
            for _ in 0..<100 where seen.rows.count < 150 {
                seen = try await Self.history(directory)
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(seen.status == 0 && seen.errors.isEmpty, "\(seen.errors)")
            #expect(seen.rows.count == 150, "\(seen.rows.count) rows while running; \(first.text)")

            first.send(SIGKILL)
            _ = try await first.waitForExit(timeout: 20)
            let afterKill = try await Self.history(directory)
            #expect(afterKill.status == 0 && afterKill.errors.isEmpty, "\(afterKill.errors)")
            #expect(afterKill.rows == seen.rows, "what was written before the SIGKILL is all there")
            // Every 20 ms of device time, and the readings as fed (upright: y = −1024 × 0.009576 m/s² in g).
            let times = Self.relativeTimes(afterKill.rows)
            #expect(zip(times, times.dropFirst()).allSatisfy { abs($1 - $0 - 0.02) < 1e-4 }, "\(times.prefix(5))")
            #expect(afterKill.rows.first.map { $0.hasSuffix(",0,-1,0") || $0.contains(",0,-0.99") } ?? false, "\(afterKill.rows.prefix(2))")

            // A restart continues the same store in a new segment.
            let restarted = try await fixture.startService(["--history", directory])
            defer { restarted.stop() }
            try await HistoryTests.feed(fixture, from: 300, batches: 10)
            try await Task.sleep(for: .milliseconds(300))
            restarted.send(SIGTERM)
            #expect(try await restarted.waitForExit(timeout: 20) == 0, "\(restarted.text)")
            let afterRestart = try await Self.history(directory)
            #expect(afterRestart.errors.isEmpty, "\(afterRestart.errors)")
            #expect(afterRestart.rows.count == 200, "\(afterRestart.rows.count) rows; \(restarted.text)")
            #expect(Array(afterRestart.rows.prefix(150)) == seen.rows)
            let segments = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("segment-") }
            #expect(segments.count == 2, "\(segments)")

            // The store is root's (mode 0700): another user cannot read it.
            let nobody = try await Self.history(
                directory, launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
            #expect(nobody.status == 77, "\(nobody.status): \(nobody.errors)")
            #expect(nobody.errors.contains(directory) && nobody.rows.isEmpty, "\(nobody.errors)")
        }
    }

    @Test("A damaged store is reported, and the rest printed")
    func damageIsReported() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let (parent, directory) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            let service = try await fixture.startService(["--history", directory])
            defer { service.stop() }
            try await HistoryTests.feed(fixture, batches: 20, pause: .milliseconds(60))  // several frames
            try await Task.sleep(for: .milliseconds(300))
            service.send(SIGTERM)
            #expect(try await service.waitForExit(timeout: 20) == 0, "\(service.text)")
            let whole = try await Self.history(directory)
            #expect(whole.rows.count == 100 && whole.errors.isEmpty, "\(whole.rows.count) rows; \(whole.errors)")
            let segment = directory + "/" + (try FileManager.default.contentsOfDirectory(atPath: directory)
                .first { $0.hasPrefix("segment-") } ?? "")
            var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
            bytes[bytes.count - 10] ^= 0xFF  // in the last frame's samples
            try bytes.write(to: URL(fileURLWithPath: segment))
            let damaged = try await Self.history(directory)
            #expect(damaged.status == 0)
            #expect(damaged.errors.contains("warning: \(segment): bytes") && damaged.errors.contains("checksum"), "\(damaged.errors)")
            #expect(!damaged.rows.isEmpty && damaged.rows.count < 100)
            #expect(Array(whole.rows.prefix(damaged.rows.count)) == damaged.rows)
        }
    }
}

/// `OpenHistory` (`motionctl history --service`): the history through the service, with the stream rights.
@Suite("motiond's OpenHistory", .serialized, .requires(.umockdevPreload, .dbusClients, .setpriv, .root))
struct HistoryQueryTests {
    static let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// The rows of `motionctl history --service arguments…` run on the fixture's bus (as `launcher`'s user).
    static func query(_ fixture: ServiceFixture, _ arguments: [String] = [], launcher: [String] = []) async throws
        -> (status: Int32, rows: [String], output: String)
    {
        let command = launcher + [HistoryTests.motionctl, "history", "--service"] + arguments
        let (status, output) = try await fixture.bus.run(command[0], Array(command.dropFirst()), timeout: 30)
        let rows = output.split(separator: "\n").map(String.init).filter { $0.first?.isNumber == true }
        return (status, rows, output)
    }

    @Test("Root gets the recorded rate, another user 25 Hz; a bad range and a service without history are refused")
    func rightsRangesAndRefusals() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let (parent, directory) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            let service = try await fixture.startService(["--history", directory])
            defer { service.stop() }
            try await HistoryTests.feed(fixture, batches: 30)
            var stored: [String] = []
            for _ in 0..<100 where stored.count < 150 {
                stored = try await HistoryTests.history(directory).rows
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(stored.count == 150)

            let root = try await Self.query(fixture)
            #expect(root.status == 0, "\(root.output)")
            #expect(root.rows == stored, "\(root.rows.count) rows through the service, \(stored.count) in the store")
            #expect(root.output.contains("# generator: motiond history") && root.output.contains("# clock: unix"))

            // uid 65534: the 50 Hz history on a 25 Hz grid, every second sample.
            let other = try await Self.query(fixture, launcher: Self.nobody)
            #expect(other.status == 0, "\(other.output)")
            #expect(other.rows.count == 75, "\(other.rows.count) rows for uid 65534")
            #expect(other.rows == stride(from: 0, to: 150, by: 2).map { stored[$0] })
            #expect(other.output.contains("# update_interval_s: 0.04"))

            // A range: the middle second (Unix time of the rows).
            let times = stored.compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }
            let middle = try await Self.query(
                fixture, ["--from", "\(times[50])", "--to", "\(times[99])", "--format", "jsonl"])
            #expect(middle.status == 0, "\(middle.output)")
            let records = middle.output.split(separator: "\n").filter { $0.hasPrefix("{\"type\":\"sample\"") }
            #expect(records.count == 50, "\(middle.output.prefix(400))")

            // Hostile arguments: refused with the reason, and the service goes on.
            let nan = try await fixture.bus.busctl([
                "call", "org.swiftmotion.Motion1", "/org/swiftmotion/Motion1", "org.swiftmotion.Motion1",
                "OpenHistory", "ddsa{sv}", "nan", "0", "csv", "0",
            ])
            #expect(nan.status != 0 && nan.output.contains("from and to are Unix times"), "\(nan.output)")
            let options = try await fixture.bus.busctl([
                "call", "org.swiftmotion.Motion1", "/org/swiftmotion/Motion1", "org.swiftmotion.Motion1",
                "OpenHistory", "ddsa{sv}", "0", "1", "csv", "1", "interval", "d", "0.001",
            ])
            #expect(options.status != 0 && options.output.contains("unknown option 'interval'"), "\(options.output)")
            let again = try await Self.query(fixture)
            #expect(again.rows == stored)
        }
    }

    /// A store of `count` accelerometer samples at 100 Hz ending now, more than a pipe holds as CSV even on the
    /// 25 Hz grid: a query of it stays running while its client reads nothing.
    static func fillStore(_ directory: String, count: Int) throws {
        let store = try MotionStore(directory: directory)
        let end = Double(clockNanoseconds(CLOCK_BOOTTIME)) / 1e9
        for i in 0..<count {
            let t = end - Double(count - i) * 0.01
            _ = store.append(MotionSample(timestamp: t, acceleration: Acceleration(x: 0.01 * Double(i % 100), y: 0, z: -1)))
        }
        try store.close()
    }

    static func clockNanoseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    @Test("A flood of history queries from one user stops at its limit; root's query and the user's later ones are served")
    func queryFlood() async throws {
        try await Self.withHistoryService(prepare: { try Self.fillStore($0, count: 20_000) }) { fixture, service in
            // uid 65534: 3 connections × 3 queries, none read: 2 run, the other 7 are refused with the limit named.
            let attacker = try HostileClient.start(fixture.bus, ["history", "3", "3"])
            defer { attacker.stop() }
            let report = try await HostileClient.report(attacker)
            #expect(report["opened"] as? Int == 2, "\(report)")
            let refused = report["refused"] as? [String: Int] ?? [:]
            #expect(refused["org.freedesktop.DBus.Error.LimitsExceeded"] == 7, "\(report)")
            #expect((report["message"] as? String)?.contains("uid 65534 has 2 history queries running") == true, "\(report)")
            // While they hang: root's query gets the whole store, and the same user is still refused.
            let root = try await Self.query(fixture)
            #expect(root.status == 0, "\(root.output.suffix(400))")
            #expect(root.rows.count >= 20_000, "\(root.rows.count) rows")
            let again = try HostileClient.start(fixture.bus, ["history", "1", "1"])
            defer { again.stop() }
            #expect((try await HostileClient.report(again)["opened"]) as? Int == 0)
            again.stop()
            // The attacker gone, its queries end (their pipes closed) and the user is served again: the 25 Hz grid.
            attacker.stop()
            var later = (status: Int32(-1), rows: [String](), output: "")
            for _ in 0..<50 {
                later = try await Self.query(fixture, launcher: Self.nobody)
                if later.status == 0 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(later.status == 0, "\(later.output.suffix(400))")
            #expect(later.rows.count >= 4_900 && later.rows.count <= 5_100, "\(later.rows.count) rows at 25 Hz")
            #expect(service.process.isRunning)
        }
    }

    /// `count` scans of the 9-axis IMU from scan `first`, 10 ms apart, with the accelerometer's raw reading `accel`
    /// (1024 ≈ 1 g) and a steady gyroscope bias and field; fed 10 at a time.
    static func feedIMU(_ testbed: Testbed, from first: Int, count: Int, accel: (Int64, Int64, Int64)) async throws {
        for batch in stride(from: first, to: first + count, by: 10) {
            let rows = (batch..<batch + 10).map { i in
                [accel.0, accel.1, accel.2, 10, -20, 30, 2200, 0, -4000, 1_000_000_000 + Int64(i) * 10_000_000]
            }
            try testbed.feed(
                "/dev/iio:device0", CalibrationPersistenceTests.encoder.encode(rows: rows),
                scanSize: CalibrationPersistenceTests.encoder.scanSize, timeout: 10)
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("Device motion and events recorded beside the samples, read from the store and through the service, with rights")
    func deviceMotionAndEvents() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(CalibrationPersistenceTests.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let fixture = ServiceFixture(testbed: testbed, bus: bus, accelerometer: path)
            let (parent, directory) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            // All three sensors recorded: the device opens with all nine channels from the start, as the scans have.
            let service = try await fixture.startService([
                "--history", directory, "--history-sensors", "accel,gyro,mag", "--history-device-motion", "magnetic-north",
                "--history-events",
            ])
            defer { service.stop() }
            #expect(service.text.contains("accel,gyro,mag, device motion (magnetic-north), events"), "\(service.text)")
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            // 3 s face up, then 3 s upright in portrait: an orientation change.
            try await Self.feedIMU(testbed, from: 0, count: 300, accel: (0, 0, 1024))
            try await Self.feedIMU(testbed, from: 300, count: 300, accel: (0, -1024, 0))
            var motion: [String] = []
            var events: [String] = []
            for _ in 0..<50 {
                motion = try await HistoryTests.history(directory, ["--kind", "device-motion"]).rows
                events = try await HistoryTests.history(directory, ["--kind", "events", "--format", "jsonl"]).rows
                if motion.count >= 290 && events.contains(where: { $0.contains("portrait") }) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            // 6 s at the history's 50 Hz; the columns of motionctl attitude --all; gravity first down the z axis.
            #expect(motion.count >= 290 && motion.count <= 301, "\(motion.count) rows")
            // Every row's attitude a rotation and its gravity a unit vector (the columns of motionctl attitude --all:
            // t, qw…qz, roll, pitch, yaw, rx…rz, gravx…gravz, …); the device turned between the first and last row.
            let rows = motion.map { $0.split(separator: ",").compactMap { Double($0) } }
            #expect(rows.allSatisfy { $0.count == 22 }, "\(motion.first ?? "none")")
            if let firstRow = rows.first, let lastRow = rows.last, rows.allSatisfy({ $0.count == 22 }) {
                func norm(_ row: [Double], _ range: ClosedRange<Int>) -> Double { row[range].reduce(0) { $0 + $1 * $1 }.squareRoot() }
                #expect(rows.allSatisfy { abs(norm($0, 1...4) - 1) < 1e-9 && abs(norm($0, 11...13) - 1) < 1e-6 })
                let turned = zip(firstRow[11...13], lastRow[11...13]).reduce(0) { $0 + ($1.0 - $1.1) * ($1.0 - $1.1) }.squareRoot()
                #expect(turned > 0.5, "gravity \(firstRow[11...13]) then \(lastRow[11...13])")
            }
            #expect(
                events.contains { $0.contains("\"type\":\"orientation\"") && $0.contains("\"orientation\":\"portrait\"") },
                "\(events); \(service.text)")
            let header = try await Process.output(
                of: HistoryTests.motionctl, ["history", "--store", directory, "--kind", "device-motion"], mergingStandardError: false).1
            #expect(header.contains("t,qw,qx,qy,qz,roll,pitch,yaw"), "\(header.prefix(600))")

            // Through the service: root as recorded, uid 65534 on the 25 Hz grid; events for both.
            let root = try await HistoryQueryTests.query(fixture, ["--kind", "device-motion"])
            #expect(root.status == 0 && root.rows.count == motion.count, "\(root.rows.count) rows: \(root.output.suffix(300))")
            let other = try await HistoryQueryTests.query(fixture, ["--kind", "device-motion"], launcher: HistoryQueryTests.nobody)
            #expect(other.status == 0, "\(other.output.suffix(300))")
            #expect(abs(other.rows.count - motion.count / 2) <= 2, "\(other.rows.count) rows for uid 65534 of \(motion.count)")
            let otherEvents = try await HistoryQueryTests.query(
                fixture, ["--kind", "events", "--format", "jsonl"], launcher: HistoryQueryTests.nobody)
            #expect(otherEvents.output.contains("\"orientation\":\"portrait\""), "\(otherEvents.output.suffix(400))")
            let bogus = try await fixture.bus.busctl([
                "call", "org.swiftmotion.Motion1", "/org/swiftmotion/Motion1", "org.swiftmotion.Motion1",
                "OpenHistory", "ddsa{sv}", "0", "1", "csv", "1", "kind", "s", "steps",
            ])
            #expect(bogus.status != 0 && bogus.output.contains("use samples, device-motion or events"), "\(bogus.output)")
        }
    }

    /// Runs `body` with motiond recording a history (`--history DIR arguments…`) on the buffered accelerometer;
    /// `prepare` gets the store's folder before the service starts.
    static func withHistoryService(
        _ arguments: [String] = [], prepare: (String) throws -> Void = { _ in },
        _ body: (ServiceFixture, ChildProcess) async throws -> Void
    ) async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let (parent, directory) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            try prepare(directory)
            let service = try await fixture.startService(["--history", directory] + arguments)
            defer { service.stop() }
            try await body(fixture, service)
        }
    }

    @Test("Device motion or events not recorded: the query says which option records them")
    func kindNotRecorded() async throws {
        try await Self.withHistoryService { fixture, _ in
            let motion = try await Self.query(fixture, ["--kind", "device-motion"])
            #expect(motion.status != 0 && motion.output.contains("--history-device-motion"), "\(motion.output)")
            let events = try await Self.query(fixture, ["--kind", "events"])
            #expect(events.status != 0 && events.output.contains("--history-events"), "\(events.output)")
        }
    }

    @Test("A service without --history says so")
    func noHistory() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let answer = try await Self.query(fixture)
            #expect(answer.status != 0 && answer.output.contains("keeps no history"), "\(answer.output)")
        }
    }
}
