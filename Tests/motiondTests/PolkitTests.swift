import Foundation
import IIOTestbed
import Testing

/// Who may claim and stream when polkit decides (python-dbusmock's polkitd stands in for polkit).
@Suite("motiond asks polkit", .serialized, .requires(.umockdevPreload, .dbusClients, .dbusmock, .setpriv))
struct PolkitTests {
    /// gdbus, as `user` (`root`, or uid 65534 with no groups), calling `method` of `object` with `arguments`.
    static func call(
        _ bus: PrivateSystemBus, as user: String = "root", _ destination: String, _ object: String, _ method: String,
        _ arguments: [String] = []
    ) async throws -> (status: Int32, output: String) {
        let gdbus = ["/usr/bin/gdbus", "call", "--system", "--dest", destination, "--object-path", object, "--method", method]
        if user == "root" { return try await bus.run(gdbus[0], Array(gdbus.dropFirst()) + arguments) }
        return try await bus.run("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups"] + gdbus + arguments)
    }

    static func allow(_ bus: PrivateSystemBus, _ actions: [String]) async throws {
        let list = "[" + actions.map { "'\($0)'" }.joined(separator: ", ") + "]"
        let result = try await call(
            bus, "org.freedesktop.PolicyKit1", "/org/freedesktop/PolicyKit1/Authority",
            "org.freedesktop.DBus.Mock.SetAllowed", [list])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(
        "Claims need iio-sensor-proxy's claim-sensor, streams org.swiftmotion.Motion1's; high rates its high-rate action, outside the group"
    )
    func decisions() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let polkit = try fixture.bus.start("/usr/bin/python3", ["-m", "dbusmock", "--template", "polkitd", "--system"])
            defer { polkit.stop() }
            // The mock owns its name a moment after it starts.
            var owned = false
            for _ in 0..<200 where !owned {
                let answer = try await Self.call(
                    fixture.bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                    ["org.freedesktop.PolicyKit1"])
                owned = answer.output.contains("true")
                if !owned { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(owned, "\(polkit.text)")
            let service = try await fixture.startService()
            defer { service.stop() }
            let proxy = ("net.hadess.SensorProxy", "/net/hadess/SensorProxy")
            let motion = ("org.swiftmotion.Motion1", "/org/swiftmotion/Motion1")

            // Nothing allowed: claims and streams are refused, with polkit's action named.
            let claim = try await Self.call(fixture.bus, proxy.0, proxy.1, "net.hadess.SensorProxy.ClaimAccelerometer")
            #expect(claim.status != 0)
            #expect(claim.output.contains("AccessDenied") && claim.output.contains("Not Authorized: net.hadess.SensorProxy.claim-sensor"), "\(claim.output)")
            let stream = try await Self.call(
                fixture.bus, motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", ["orientation", "1.0", "jsonl", "{}"])
            #expect(stream.status != 0 && stream.output.contains("Not Authorized"), "\(stream.output)")

            // iio-sensor-proxy's claim-sensor allowed (its suite's polkitd allows only that): monitor-sensor works;
            // streams still need org.swiftmotion.Motion1's.
            try await Self.allow(fixture.bus, ["net.hadess.SensorProxy.claim-sensor"])
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" }, "\(monitor.text)")
            #expect(!monitor.text.contains("Failed to claim"))
            let refused = try await Self.call(
                fixture.bus, motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", ["orientation", "1.0", "jsonl", "{}"])
            #expect(refused.status != 0 && refused.output.contains("Not Authorized: org.swiftmotion.Motion1.claim-sensor"), "\(refused.output)")

            // Both claim-sensor actions allowed: high rates only for root (or the group), not uid 65534.
            try await Self.allow(fixture.bus, ["net.hadess.SensorProxy.claim-sensor", "org.swiftmotion.Motion1.claim-sensor"])
            let fast = ["samples", "0.01", "csv", "{}"]
            let root = try await Self.call(fixture.bus, motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", fast)
            #expect(root.status == 0, "\(root.output)")
            let nobody = try await Self.call(fixture.bus, as: "nobody", motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", fast)
            #expect(nobody.status != 0 && nobody.output.contains("org.swiftmotion.Motion1.high-rate"), "\(nobody.output)")
            let slow = try await Self.call(
                fixture.bus, as: "nobody", motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", ["samples", "0.04", "csv", "{}"])
            #expect(slow.status == 0, "\(slow.output)")

            // The high-rate action allowed: uid 65534 may too.
            try await Self.allow(
                fixture.bus,
                ["net.hadess.SensorProxy.claim-sensor", "org.swiftmotion.Motion1.claim-sensor", "org.swiftmotion.Motion1.high-rate"])
            let granted = try await Self.call(fixture.bus, as: "nobody", motion.0, motion.1, "org.swiftmotion.Motion1.OpenStream", fast)
            #expect(granted.status == 0, "\(granted.output)")
        }
    }

    @Test("--polkit on without polkit: claims are refused and say why")
    func required() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService(["--polkit", "on"])
            defer { service.stop() }
            let claim = try await Self.call(
                fixture.bus, "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy.ClaimLight")
            #expect(claim.status != 0 && claim.output.contains("polkit is not running, and motiond runs with --polkit on"), "\(claim.output)")
            // The log line is written before the reply, but read from the service's stderr by another thread.
            #expect(await eventually { service.text.contains("polkit is not running: refusing") }, "\(service.text)")
        }
    }
}
