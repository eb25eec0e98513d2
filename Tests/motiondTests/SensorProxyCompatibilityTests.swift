import Foundation
import IIOTestbed
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `motiond` against iio-sensor-proxy's real clients: Debian's `monitor-sensor`, `busctl` and `gdbus`.
@Suite("motiond serves iio-sensor-proxy's clients", .serialized, .requires(.umockdevPreload, .dbusClients))
struct SensorProxyCompatibilityTests {
    @Test("monitor-sensor sees the accelerometer, follows each orientation change and notices the service leave")
    func monitorSensor() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }

            #expect(try await monitor.wait(timeout: 20) { $0.contains("=== Has accelerometer") }, "\(monitor.text)")
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" })
            for (raw, orientation) in ServiceFixture.poses {
                fixture.hold(raw)
                let seen = await eventually { MonitorSensor.orientations(in: monitor.text).last == orientation }
                #expect(seen, "\(orientation): \(monitor.text)")
            }
            let expected = ["normal"] + ServiceFixture.poses.map(\.1)
            #expect(Array(MonitorSensor.orientations(in: monitor.text).drop { $0 == "undefined" }) == expected)

            service.send(SIGTERM)
            #expect(try await service.waitForExit(timeout: 20) == 0, "\(service.text)")
            #expect(try await monitor.wait(timeout: 10) { $0.contains("--- iio-sensor-proxy vanished") })
            #expect(service.text.contains("signal 15: stopping"))
        }
    }

    @Test(
        "The same scripted device gives the same settled orientations as a running iio-sensor-proxy",
        .requires(.iioSensorProxy))
    func sameAsIioSensorProxy() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let poses = [((0, -1024, 0), "normal")] + ServiceFixture.poses
                + [((887, -512, 0), "normal"), ((1024, 0, 0), "left-up"), ((887, -512, 0), "left-up")]

            /// Runs the poses against one daemon and returns what monitor-sensor printed.
            func orientations(of daemon: ChildProcess) async throws -> [String] {
                defer { daemon.stop() }
                fixture.hold(poses[0].0)
                let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
                defer { monitor.stop() }
                for (raw, orientation) in poses {
                    fixture.hold(raw)
                    _ = await eventually(limit: 10) { MonitorSensor.orientations(in: monitor.text).last == orientation }
                    try await Task.sleep(for: .milliseconds(1500))  // longer than both daemons' reaction time
                }
                return Array(MonitorSensor.orientations(in: monitor.text).drop { $0 == "undefined" })
            }

            let proxy = try fixture.bus.start("/usr/sbin/iio-sensor-proxy")
            #expect(try await proxy.wait(timeout: 20) { _ in true })
            let theirs = try await orientations(of: proxy)
            _ = try await proxy.waitForExit(timeout: 5)
            let ours = try await orientations(of: try await fixture.startService())

            // 30° from normal towards left-up (887, −512) is in iio-sensor-proxy's keep-previous band and in our
            // dead zone: both keep the previous orientation.
            let expected = ["normal", "left-up", "bottom-up", "right-up", "normal", "left-up"]
            #expect(theirs == expected)
            #expect(ours == theirs)
        }
    }

    @Test(
        "--orientation-rules iio-sensor-proxy reproduces its rules, tilt sign included; the default has consistent signs",
        arguments: [("iio-sensor-proxy", "face-up"), ("swift-motion", "face-down")])
    func orientationRules(rules: String, flatTilt: String) async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService(["--orientation-rules", rules])
            defer { service.stop() }
            #expect(service.text.contains("orientation rules \(rules)"))
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")  // holds the claim
            defer { monitor.stop() }
            func tilt() async throws -> String {
                try await fixture.bus.busctl([
                    "get-property", "net.hadess.SensorProxy", "/net/hadess/SensorProxy", "net.hadess.SensorProxy",
                    "AccelerometerTilt",
                ]).output
            }
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" }, "\(monitor.text)")
            #expect(try await tilt() == "s \"vertical\"\n")
            // Lying flat, z = +1 g as read (Core Motion's sign: screen down): iio-sensor-proxy calls it face-up
            // (systemd#40119); swift-motion's rules, face-down. The orientation stays the last upright one.
            fixture.hold((0, 0, 1024))
            var last = ""
            for _ in 0..<200 where last != "s \"\(flatTilt)\"\n" {
                try await Task.sleep(for: .milliseconds(100))
                last = try await tilt()
            }
            #expect(last == "s \"\(flatTilt)\"\n")
            #expect(MonitorSensor.orientations(in: monitor.text).last == "normal")
        }
    }

    @Test("busctl: the properties of iio-sensor-proxy 3.x, and clear errors that change nothing for others")
    func busctl() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let bus = fixture.bus
            let main = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy"]

            let all = try await bus.busctl(["call"] + main + ["org.freedesktop.DBus.Properties", "GetAll", "s", "net.hadess.SensorProxy"])
            #expect(all.status == 0)
            for property in [
                "\"HasAccelerometer\" b true", "\"AccelerometerOrientation\" s \"undefined\"",
                "\"AccelerometerTilt\" s \"undefined\"", "\"HasAmbientLight\" b false", "\"LightLevelUnit\" s \"lux\"",
                "\"LightLevel\" d 0", "\"HasProximity\" b false", "\"ProximityNear\" b false",
            ] {
                #expect(all.output.contains(property), "\(property) in \(all.output)")
            }
            #expect(all.output.hasPrefix("a{sv} 8 "))

            let compass = try await bus.busctl([
                "get-property", "net.hadess.SensorProxy", "/net/hadess/SensorProxy/Compass",
                "net.hadess.SensorProxy.Compass", "HasCompass", "CompassHeading",
            ])
            #expect(compass.output == "b false\nd -1\n", "\(compass.output)")

            let release = try await bus.busctl(["call"] + main + ["net.hadess.SensorProxy", "ReleaseAccelerometer"])
            #expect(release.status != 0)
            #expect(release.output.contains("ReleaseAccelerometer without ClaimAccelerometer"), "\(release.output)")

            let unknown = try await bus.busctl(["call"] + main + ["net.hadess.SensorProxy", "ClaimGyroscope"])
            #expect(unknown.status != 0)
            #expect(unknown.output.contains("Unknown method"), "\(unknown.output)")

            // Light and proximity do not exist: a claim is accepted (as iio-sensor-proxy does), and released.
            let light = try await bus.busctl(["call"] + main + ["net.hadess.SensorProxy", "ClaimLight"])
            #expect(light.status == 0, "\(light.output)")

            // A client that claims meanwhile is unaffected by the refusals.
            let monitor = try bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" }, "\(monitor.text)")
            _ = try await bus.busctl(["call"] + main + ["net.hadess.SensorProxy", "ReleaseAccelerometer"])
            fixture.hold((1024, 0, 0))
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "left-up" }, "\(monitor.text)")
        }
    }

    @Test("Orientation changes go only to the clients that claimed the accelerometer")
    func unicast() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let watcher = try fixture.bus.start(
                "/usr/bin/gdbus", ["monitor", "--system", "--dest", "net.hadess.SensorProxy"])
            defer { watcher.stop() }
            #expect(try await watcher.wait(timeout: 10) { $0.contains("owned by") }, "\(watcher.text)")
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" })
            fixture.hold((1024, 0, 0))
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "left-up" })
            try await Task.sleep(for: .milliseconds(300))
            #expect(!watcher.text.contains("AccelerometerOrientation"), "\(watcher.text)")
        }
    }

    @Test("A claimer killed with SIGKILL is released; the sensor stops with the last claimer, others go on")
    func killedClaimer() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let first = try fixture.bus.start("/usr/bin/monitor-sensor")
            let second = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { second.stop() }
            #expect(await eventually { MonitorSensor.orientations(in: first.text).last == "normal" })
            #expect(await eventually { MonitorSensor.orientations(in: second.text).last == "normal" })
            #expect(await eventually { service.text.components(separatedBy: "claimed the accelerometer").count == 3 })

            kill(first.process.processIdentifier, SIGKILL)
            first.stop()
            #expect(await eventually { service.text.contains("left the bus: its accelerometer claim is released") })
            #expect(!service.text.contains("the accelerometer stopped"))
            fixture.hold((0, 1024, 0))
            #expect(await eventually { MonitorSensor.orientations(in: second.text).last == "bottom-up" })

            second.send(SIGKILL)
            #expect(await eventually { service.text.contains("the accelerometer stopped: no client claims it") })
        }
    }
}
