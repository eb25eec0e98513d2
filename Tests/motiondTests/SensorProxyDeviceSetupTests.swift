import Foundation
import IIOTestbed
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What motiond does as iio-sensor-proxy does, where iio-sensor-proxy's own suite looks
/// (Scripts/check-sensor-proxy-suite.sh runs that suite): the devices readied at start, before any claim; its test
/// sensors and recorded scans; `--replace` against Debian's iio-sensor-proxy 3.0.
@Suite("motiond readies devices and takes its name as iio-sensor-proxy", .serialized, .requires(.umockdevPreload, .dbusClients))
struct SensorProxyDeviceSetupTests {
    /// A polled accelerometer at `frequency`, with `available` frequencies when given, and a private bus.
    static func polled(_ testbed: Testbed, frequency: String, available: String?) async throws -> ServiceFixture {
        var device = EmulatedDevice.iio(name: "bma250", number: 0, parent: "/devices/platform/bma250", node: nil)
        device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576")
        device.set("sampling_frequency", frequency)
        if let available { device.set("sampling_frequency_available", available) }
        let path = try testbed.add(device)
        return ServiceFixture(testbed: testbed, bus: try await PrivateSystemBus(), accelerometer: path)
    }

    @Test(
        "At start, before any claim, a sampling frequency below 10 Hz is raised to the nearest available at or above 10 Hz",
        arguments: [
            ("5.2", nil, "10"),
            ("5.2", "3 6 12 25 50 100 200 400 800 1600", "12"),
            ("5.2", "800.000000 400.000000 200.000000 100.000000 50.000000 12.500000 6.250000 1.560000", "12.5"),
            ("0", "1 5 8", "8"),
            ("25", "1 10 25 50", "25\n"),  // 10 Hz or more: not written (the testbed's file, newline included)
        ] as [(String, String?, String)])
    func rateAtStart(frequency: String, available: String?, expected: String) async throws {
        try await Testbed.run { testbed in
            let fixture = try await Self.polled(testbed, frequency: frequency, available: available)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            // Written before the bus name is taken: exactly the value, as iio-sensor-proxy writes it.
            #expect(testbed.rawAttribute(fixture.accelerometer, "sampling_frequency") == expected)
        }
    }

    @Test("At start, a buffered accelerometer's scan elements are enabled and its buffer left off until a claim")
    func scanElementsAtStart() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh().bufferOnly
            device.set("sampling_frequency", "5")
            let path = try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            let fixture = ServiceFixture(testbed: testbed, bus: try await PrivateSystemBus(), accelerometer: path)
            defer { fixture.stop() }
            #expect(testbed.attribute(path, "scan_elements/in_accel_x_en") == "0")
            let service = try await fixture.startService()
            defer { service.stop() }
            for channel in ["accel_x", "accel_y", "accel_z", "timestamp"] {
                #expect(testbed.attribute(path, "scan_elements/in_\(channel)_en") == "1", "\(channel)")
            }
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            #expect(testbed.rawAttribute(path, "sampling_frequency") == "10")
        }
    }

    @Test("FAKE_COMPASS and FAKE_LIGHT_SENSOR: iio-sensor-proxy's test sensors, counting on while claimed")
    func fakeSensors() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try fixture.bus.start(
                ServiceFixture.executable, [], extra: ["FAKE_COMPASS": "1", "FAKE_LIGHT_SENSOR": "1"])
            defer { service.stop() }
            #expect(try await service.wait(timeout: 20) { $0.contains("compass present") }, "\(service.text)")
            let main = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy"]
            let compass = ["net.hadess.SensorProxy", "/net/hadess/SensorProxy/Compass"]
            func get(_ object: [String], _ interface: String, _ property: String) async throws -> String {
                try await fixture.bus.busctl(["get-property"] + object + [interface, property]).output
            }
            #expect(try await get(main, "net.hadess.SensorProxy", "HasAmbientLight") == "b true\n")
            #expect(try await get(compass, "net.hadess.SensorProxy.Compass", "HasCompass") == "b true\n")

            // A busctl claim is released when busctl leaves: each claim starts the sensor again, and its reply
            // waits for the first value. The light counts on from one claim to the next.
            for (claims, level) in ["d 0\n", "d 1\n"].enumerated() {
                #expect(try await fixture.bus.busctl(["call"] + main + ["net.hadess.SensorProxy", "ClaimLight"]).status == 0)
                #expect(try await get(main, "net.hadess.SensorProxy", "LightLevel") == level)
                #expect(await eventually { service.text.components(separatedBy: "the light stopped").count == claims + 2 })
            }
            let claim = try await fixture.bus.busctl(["call"] + compass + ["net.hadess.SensorProxy.Compass", "ClaimCompass"])
            #expect(claim.status == 0, "\(claim.output)")
            #expect(try await get(compass, "net.hadess.SensorProxy.Compass", "CompassHeading") == "d 10\n")
        }
    }

    @Test("Recorded scans in $UMOCKDEV_DIR/iio-dev-data.bin are read in place of a buffered device's node, as iio-sensor-proxy's")
    func recordedScans() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let file = testbed.rootDirectory + "/iio-dev-data.bin"
            defer { unlink(file) }
            func record(_ x: Int64, _ y: Int64) throws {
                try Data(ServiceFixture.encoder.encode(rows: [[x, y, 0, 1_000_000_000]])).write(to: URL(fileURLWithPath: file))
            }
            try record(0, -1024)
            let service = try await fixture.startService(["--orientation-rules", "iio-sensor-proxy"])
            defer { service.stop() }
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "normal" }, "\(monitor.text)")
            try record(1024, 0)
            #expect(await eventually { MonitorSensor.orientations(in: monitor.text).last == "left-up" }, "\(monitor.text)")
            unlink(file)  // no file: the last orientation stands
            try await Task.sleep(for: .milliseconds(1500))
            #expect(MonitorSensor.orientations(in: monitor.text).last == "left-up")
        }
    }

    @Test(
        "--replace with Debian's iio-sensor-proxy 3.0, both ways: motiond says why it cannot, and keeps its name",
        .requires(.iioSensorProxy))
    func replaceIioSensorProxy() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            func owner() async throws -> String {
                try await fixture.bus.busctl([
                    "call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                    "GetConnectionUnixProcessID", "s", "net.hadess.SensorProxy",
                ]).output
            }

            // iio-sensor-proxy 3.0 owns the name without allowing replacement: motiond --replace fails and says so.
            let proxy = try fixture.bus.start("/usr/sbin/iio-sensor-proxy")
            defer { proxy.stop() }
            var owned = false
            for _ in 0..<200 where !owned {
                owned = try await owner() == "u \(proxy.process.processIdentifier)\n"
                if !owned { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(owned, "\(proxy.text)")
            let refused = try fixture.bus.start(ServiceFixture.executable, ["--replace"])
            defer { refused.stop() }
            #expect(try await refused.waitForExit(timeout: 20) == 1, "\(refused.text)")
            #expect(refused.text.contains("is owned by /usr/sbin/iio-sensor-proxy (pid \(proxy.process.processIdentifier))")
                || refused.text.contains("is owned by iio-sensor-prox (pid \(proxy.process.processIdentifier))"), "\(refused.text)")
            #expect(refused.text.contains("which does not let another process take it over"), "\(refused.text)")
            #expect(refused.text.contains("systemctl stop iio-sensor-proxy"), "\(refused.text)")
            #expect(try await owner() == "u \(proxy.process.processIdentifier)\n")
            proxy.stop()

            // motiond owns it: iio-sensor-proxy 3.0 (which has no --replace) leaves at once, and motiond serves on.
            let service = try await fixture.startService()
            defer { service.stop() }
            let late = try fixture.bus.start("/usr/sbin/iio-sensor-proxy", ["--replace"])
            defer { late.stop() }
            #expect(try await late.waitForExit(timeout: 20) == 0, "\(late.text)")
            #expect(try await owner() == "u \(service.process.processIdentifier)\n")
            #expect(!service.text.contains("another process took"))
        }
    }
}

extension Testbed {
    /// The attribute file's exact contents (trailing newline included): what a writer left there.
    func rawAttribute(_ sysfsPath: String, _ name: String) -> String? {
        try? String(contentsOfFile: rootDirectory + sysfsPath + "/" + name, encoding: .utf8)
    }
}
