import Foundation
import IIOTestbed
import MotionCore
import MotionDBus
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What a local user could do to motiond, tried: each attack hurts only its author (Docs/Service.md, "Limits").
/// The attacker is another process (``HostileClient``), as uid 65534 with no groups unless it needs root's rights.
@Suite(
    "motiond holds against hostile and clumsy clients", .serialized,
    .requires(.umockdevPreload, .dbusClients, .dbusmock, .setpriv, .root))
struct HostileClientTests {
    /// `VmRSS` of `pid`, in kB.
    static func residentKB(_ pid: Int32) -> Int {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0
    }

    /// The context switches of every thread of `pid`, voluntary and not, added up.
    static func contextSwitches(_ pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var total = 0
        for task in tasks {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") where line.contains("ctxt_switches:") {
                total += Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).last ?? "") ?? 0
            }
        }
        return total
    }

    /// The rows of `times` that do not follow the one before by `interval` seconds: (the row's time, its step).
    static func gaps(in times: [Double], every interval: Double) -> [(Double, Double)] {
        zip(times.dropFirst(), times).filter { abs($0 - $1 - interval) >= 1e-6 }.map { ($0, $0 - $1) }
    }

    static func descriptors(_ pid: Int32) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []).count
    }

    @Test("A flood of streams from one user stops at its limits; another user's stream goes on without a gap")
    func streamFlood() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let client = try await BusClient(address: fixture.bus.address)
            let good = try await client.openStream("samples", interval: 0.01, format: "csv", options: [("buffer", .uint32(8192))])
            defer { good.close() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            #expect(await good.read { _ in good.csvTimestamps.count >= 20 })
            // 6 connections × 20 streams: 16 per connection, 64 for the user in all.
            let attacker = try HostileClient.start(fixture.bus, ["open", "6", "20", "orientation", "1"])
            defer { attacker.stop() }
            let report = try await HostileClient.report(attacker)
            #expect(report["opened"] as? Int == 64, "\(report)")
            let refused = report["refused"] as? [String: Int] ?? [:]
            #expect(refused["org.freedesktop.DBus.Error.LimitsExceeded"] == 56, "\(report)")
            #expect((report["message"] as? String)?.contains("uid 65534 has 64 streams open") == true, "\(report)")
            let again = try HostileClient.start(fixture.bus, ["open", "1", "1", "orientation", "1"])
            defer { again.stop() }
            #expect((try await HostileClient.report(again)["opened"]) as? Int == 0)
            // motiond holds what the limits allow, no more: the streams, the bus, the device, its own few.
            let pid = service.process.processIdentifier
            #expect(Self.descriptors(pid) < 64 + 1 + 64, "\(Self.descriptors(pid)) descriptors")
            // The other user's stream never missed a scan: device times 10 ms apart throughout.
            let before = good.csvTimestamps.count
            #expect(await good.read { _ in good.csvTimestamps.count >= before + 100 })
            let gaps = Self.gaps(in: good.csvTimestamps, every: 0.01)
            #expect(gaps.isEmpty, "\(gaps.prefix(5)) of \(good.csvTimestamps.count) rows: \(service.text)")
            #expect(service.process.isRunning)
            await client.close()
        }
    }

    @Test("At a low open-file limit, a flood of streams never takes the descriptors a device reopening needs")
    func descriptorReserve() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            // 300 files: 256 kept for the bus, the devices and udev, so 44 streams in all. The per-client and per-user
            // limits are raised past the file limit, so that only the cap in all stands between a flood and it.
            let service = try await fixture.startService(
                ["--max-streams-per-client", "1000", "--max-streams-per-user", "1000"],
                launcher: ["/usr/bin/prlimit", "--nofile=300:300", "--"])
            defer { service.stop() }
            #expect(service.text.contains("at most 44 streams in all"), "\(service.text)")
            let client = try await BusClient(address: fixture.bus.address)
            let good = try await client.openStream("samples", interval: 0.01, format: "csv", options: [("buffer", .uint32(8192))])
            defer { good.close() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            #expect(await good.read { _ in good.csvTimestamps.count >= 20 })
            // Slow sample streams (root's: no shared grid, so the device's demand stays the good stream's 10 ms).
            let attacker = try HostileClient.start(fixture.bus, ["open", "4", "100", "samples", "1"], asRoot: true)
            defer { attacker.stop() }
            let report = try await HostileClient.report(attacker)
            #expect(report["opened"] as? Int == 43, "\(report)")
            #expect((report["message"] as? String)?.contains("the service has 44 streams open, its limit") == true, "\(report)")
            let gaps = Self.gaps(in: good.csvTimestamps, every: 0.01)
            #expect(gaps.isEmpty, "\(gaps.prefix(5)) of \(good.csvTimestamps.count) rows")
            // At the cap, the good client trades its stream for a faster one: the demand changes, the device reopens
            // with the descriptors kept for it, and the new stream's records come without a gap.
            let opened = service.text.components(separatedBy: "(lis3dh) opened").count
            _ = try await client.call("CloseStream", [.uint32(good.id)])
            let faster = try await client.openStream(
                "samples", interval: 0.005, format: "csv", options: [("buffer", .uint32(8192))])
            defer { faster.close() }
            #expect(await eventually { service.text.components(separatedBy: "(lis3dh) opened").count > opened }, "\(service.text)")
            #expect(await faster.read { _ in faster.csvTimestamps.count >= 200 })
            let fasterGaps = Self.gaps(in: faster.csvTimestamps, every: 0.01)
            #expect(fasterGaps.isEmpty, "\(fasterGaps.prefix(5)) of \(faster.csvTimestamps.count) rows")
            #expect(!service.text.contains("Too many open files"), "\(service.text)")
            #expect(service.process.isRunning)
            await client.close()
        }
    }

    @Test("120 connections of one user, each claiming four sensors and opening a stream: limits, one bus watch, the service serves on")
    func claimFlood() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            // Each claim and stream used to add a match rule: the bus allows 512 per connection, and sd-bus dropped
            // the service's connection at the limit (it then exited with status 0).
            let attacker = try HostileClient.start(fixture.bus, ["claims", "120"])
            defer { attacker.stop() }
            let report = try await HostileClient.report(attacker, limit: 120)
            // 64 claims and 64 streams, the most one user may hold; the rest refused, naming the limit.
            #expect(report["claimed"] as? Int == 64, "\(report)")
            #expect(report["streams"] as? Int == 64, "\(report)")
            #expect((report["refused"] as? [String: Int])?["org.freedesktop.DBus.Error.LimitsExceeded"] == 416 + 56, "\(report)")
            #expect(service.process.isRunning, "\(service.text.suffix(2000))")
            // Another client is served: a property, and a claim.
            let property = try await fixture.bus.busctl([
                "get-property", "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
                "HasAccelerometer",
            ])
            #expect(property.output.contains("b true"), "\(property.output)")
            let claim = try await fixture.bus.busctl([
                "call", "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
                "ClaimAccelerometer",
            ])
            #expect(claim.status == 0, "\(claim.output)")
            // The attacker gone, every claim of its is released: the sensor stops with its last claimer.
            attacker.stop()
            #expect(await eventually { service.text.contains("the accelerometer stopped: no client claims it") })
            #expect(service.process.isRunning)
        }
    }

    @Test("A user's slow streams, all together, carry no more than 25 Hz, however their grids would fall")
    func rateRightIsPerUser() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            // 12 streams at 0.04 s on 12 connections, opened one after another, so their grids would start on
            // different scans of the 100 Hz device: once merged to 94.6 Hz.
            let attacker = try HostileClient.start(fixture.bus, ["open", "12", "1", "samples", "0.04", "read", "4"])
            defer { attacker.stop() }
            #expect((try await HostileClient.report(attacker)["opened"]) as? Int == 12)
            // The grid takes every sample, yet the device is asked for the streams' rate: 25 Hz of its
            // 1 10 25 50 100 200 400 (it was left at 100).
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "sampling_frequency") == "25" })
            let reading = try await HostileClient.report(attacker, 2)
            let union = reading["union"] as? Int ?? 0
            let span = reading["span"] as? Double ?? 0
            #expect(span > 2, "\(reading)")
            #expect(Double(union - 1) / span <= 25 * 1.001, "\(union) distinct samples in \(span) s: \(reading)")
            // Each stream still gets every sample of the 25 Hz grid over the time it was read: all of them read the
            // same samples. (Each from its own first row: on a loaded machine the last connection opened 0.6 s
            // after the first, whose stream had buffered the samples since.)
            let rows = reading["rows"] as? [Int] ?? []
            let spans = reading["spans"] as? [Double] ?? []
            #expect(rows.count == 12 && spans.count == 12, "\(reading)")
            #expect(spans.allSatisfy { $0 > 2 }, "\(reading)")
            #expect(zip(rows, spans).allSatisfy { Double($0 - 1) >= $1 * 25 - 0.5 }, "\(reading)")
        }
    }

    @Test("Streams nobody reads cost their buffers and no CPU time; a reading client gets every record")
    func unreadStreams() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let pid = service.process.processIdentifier
            let idle = try await BusClient(address: fixture.bus.address)
            var unread: [StreamReader] = []
            for interval in 0..<16 {
                unread.append(try await idle.openStream("samples", interval: 0.01 + Double(interval) * 1e-6, format: "jsonl"))
            }
            let client = try await BusClient(address: fixture.bus.address)
            let good = try await client.openStream("samples", interval: 0.01, format: "csv", options: [("buffer", .uint32(16384))])
            defer {
                good.close()
                unread.forEach { $0.close() }
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            let memoryBefore = Self.residentKB(pid)
            // 50 s of scans at once: far more than the 16 unread sockets hold (about 256 KiB each), so they fill.
            for batch in 0..<50 {
                try fixture.feed(batch * 100..<batch * 100 + 100)
                good.poll()
            }
            #expect(await good.read(limit: 60) { _ in good.csvTimestamps.count >= 5000 })
            #expect(good.csvTimestamps.count == 5000, "\(good.csvTimestamps.count) rows")
            try await Task.sleep(for: .milliseconds(500))
            // Full sockets, nothing new to send: the service sleeps. (Waiting in 5 ms steps, as it once did, is
            // 200 wake-ups a second per stream: 6,400 in these 2 s.)
            let switchesBefore = Self.contextSwitches(pid)
            try await Task.sleep(for: .seconds(2))
            let switches = Self.contextSwitches(pid) - switchesBefore
            #expect(switches < 400, "\(switches) context switches in 2 s with 16 full streams")
            let memoryAfter = Self.residentKB(pid)
            #expect(memoryAfter - memoryBefore < 64 * 1024, "RSS \(memoryBefore) → \(memoryAfter) kB")
            await idle.close()
            await client.close()
        }
    }

    @Test("A client at the device's own period, with jittering timestamps, gets every sample")
    func intervalEqualToThePeriod() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            // uid 65534 at 0.04 s (its 25 Hz grid, then its own interval) on a 25 Hz device whose timestamps
            // jitter by up to ±8 ms (20 % of the period).
            let client = try HostileClient.start(fixture.bus, ["open", "1", "1", "samples", "0.04", "read", "6"])
            defer { client.stop() }
            #expect((try await HostileClient.report(client)["opened"]) as? Int == 1)
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            let jitter: [Int64] = [0, 8, -8, 5, -3, 7, -6, 2, -8, 8]
            for batch in 0..<20 {
                let rows = (batch * 5..<batch * 5 + 5).map { i in
                    [0, -1024, 0, 1_000_000_000 + Int64(i) * 40_000_000 + jitter[i % jitter.count] * 1_000_000]
                }
                try testbed.feed("/dev/iio:device0", ServiceFixture.encoder.encode(rows: rows), timeout: 10)
                try await Task.sleep(for: .milliseconds(50))
            }
            let reading = try await HostileClient.report(client, 2)
            #expect(reading["rows"] as? [Int] == [100], "\(reading)")
        }
    }

    @Test("A polkit that answers slowly, flooded by one client: the flood is refused at its limit, others are served")
    func polkitFlood() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let polkit = try await Self.startSlowPolkit(fixture.bus)
            defer { polkit.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let attacker = try HostileClient.start(fixture.bus, ["flood", "300"])
            defer { attacker.stop() }
            try await Task.sleep(for: .milliseconds(500))
            // While the flood waits for polkit: root's stream and a claim, each asked of polkit too.
            let client = try await BusClient(address: fixture.bus.address)
            let stream = try await client.openStream("orientation", interval: 1, format: "jsonl")
            stream.close()
            let claim = try await fixture.bus.busctl(
                ["call", "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy", "ClaimLight"],
                timeout: 30)
            #expect(claim.status == 0, "\(claim.output)")
            let report = try await HostileClient.report(attacker, limit: 90)
            #expect(report["answered"] as? Int == 300, "\(report)")
            let refused = report["refused"] as? [String: Int] ?? [:]
            #expect((refused["org.freedesktop.DBus.Error.LimitsExceeded"] ?? 0) >= 300 - 4, "\(report)")
            #expect((report["opened"] as? Int ?? 0) <= 4, "\(report)")
            #expect(service.process.isRunning)
            await client.close()
        }
    }

    @Test("Calls carrying descriptors, held while polkit answers slowly: the service holds a bounded number of them")
    func descriptorFlood() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let polkit = try await Self.startSlowPolkit(fixture.bus)
            defer { polkit.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let pid = service.process.processIdentifier
            let before = Self.descriptors(pid)
            // 16 connections × 16 calls, each with 16 descriptors attached: 4,096 descriptors, if all were held.
            let attacker = try HostileClient.start(fixture.bus, ["fdflood", "16", "16"])
            defer { attacker.stop() }
            _ = try await HostileClient.report(attacker)
            var most = 0
            for _ in 0..<40 {  // while polkit sits on the questions (3 s)
                most = max(most, Self.descriptors(pid))
                try await Task.sleep(for: .milliseconds(50))
            }
            // At most 128 calls are held unanswered (4 per client while the bus says who it is, then 16 polkit
            // questions of 4 calls per user): 2,048 descriptors, where 4,096 came.
            #expect(most - before <= 128 * 16 + 64, "motiond held \(most - before) more descriptors")
            let report = try await HostileClient.report(attacker, 2, limit: 90)
            #expect(report["answered"] as? Int == 256, "\(report)")
            #expect(((report["refused"] as? [String: Int])?["org.freedesktop.DBus.Error.LimitsExceeded"] ?? 0) >= 256 - 128, "\(report)")
            // Afterwards: the streams polkit let open (64 at most, one descriptor each), and nothing held.
            #expect(await eventually { Self.descriptors(pid) <= before + 64 + 16 }, "\(Self.descriptors(pid)) descriptors after")
            #expect(service.process.isRunning)
        }
    }

    /// Starts ``slowPolkit`` on `bus` and waits (at most 20 s) until it serves.
    static func startSlowPolkit(_ bus: PrivateSystemBus) async throws -> ChildProcess {
        let polkit = try bus.start("/usr/bin/python3", ["-c", slowPolkit])
        guard try await polkit.wait(timeout: 20, until: { $0.contains("polkit ready") }) else {
            polkit.stop()
            throw TestbedError("the slow polkit did not start within 20 s: \(polkit.text)")
        }
        return polkit
    }

    /// A polkit authority that allows everything, each answer 3 s late.
    static let slowPolkit = #"""
        import dbus, dbus.service
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib
        DBusGMainLoop(set_as_default=True)
        bus = dbus.SystemBus()
        class Authority(dbus.service.Object):
            @dbus.service.method("org.freedesktop.PolicyKit1.Authority", in_signature="(sa{sv})sa{ss}us",
                                 out_signature="(bba{ss})", async_callbacks=("reply", "error"))
            def CheckAuthorization(self, subject, action, details, flags, cancel, reply, error):
                GLib.timeout_add(3000, lambda: reply((True, False, dbus.Dictionary({}, signature="ss"))) and False)
        name = dbus.service.BusName("org.freedesktop.PolicyKit1", bus)
        Authority(bus, "/org/freedesktop/PolicyKit1/Authority")
        print("polkit ready", flush=True)
        GLib.MainLoop().run()
        """#

    @Test("An options dictionary of 200,000 entries is refused at once, unread, naming the limit")
    func hugeOptions() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let attacker = try HostileClient.start(fixture.bus, ["options", "200000"])
            defer { attacker.stop() }
            let report = try await HostileClient.report(attacker, limit: 120)
            #expect(report["error"] as? String == "org.freedesktop.DBus.Error.LimitsExceeded", "\(report)")
            #expect((report["message"] as? String)?.contains("at most 256 values") == true, "\(report)")
            // 200 more over the limit, one after another: each refusal is forgotten, none counts as held.
            let repeated = try HostileClient.start(fixture.bus, ["options", "300", "200"])
            defer { repeated.stop() }
            let repeatedReport = try await HostileClient.report(repeated, limit: 120)
            #expect(
                (repeatedReport["refused"] as? [String: Int])?["org.freedesktop.DBus.Error.LimitsExceeded"] == 200,
                "\(repeatedReport)")
            let devices = try await fixture.bus.busctl([
                "call", "org.swiftmotion.Motion1", "/org/swiftmotion/Motion1", "org.swiftmotion.Motion1", "ListDevices",
            ])
            #expect(devices.status == 0 && devices.output.contains("bma250"), "\(devices.output)")
            #expect(service.process.isRunning)
        }
    }

    @Test("The bus going away ends the service with a failure status, so that systemd restarts it")
    func busLoss() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            fixture.bus.daemon.stop()
            let status = try await service.waitForExit(timeout: 20)
            #expect(status == 1, "exit status \(status.map(String.init) ?? "none: still running"): \(service.text)")
            #expect(service.text.contains("the D-Bus connection was lost"), "\(service.text)")
        }
    }
}
