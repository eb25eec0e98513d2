import Foundation
import IIOTestbed
import Motion
import MotionAlgorithms
import MotionCore
import MotionDBus
import TestFiles
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The gyroscope bias and magnetometer calibration survive a restart of the service.
@Suite("motiond with a 9-axis IMU: calibration across restarts, compass", .serialized, .requires(.umockdevPreload, .dbusClients))
struct CalibrationPersistenceTests {
    /// A buffered 9-axis IMU on a pty: accelerometer, gyroscope (raw × 0.001 rad/s) and magnetometer (raw × 0.01
    /// gauss = raw µT), scans with their own timestamps.
    static func imu() -> EmulatedDevice {
        var device = EmulatedDevice.iio(name: "bmi160", number: 0, parent: "/devices/platform/bmi160", node: .fifo)
        device.addSensor("accel", raw: (0, 0, 1024), scale: "0.009576", scanType: "le:s16/16>>0")
        device.addSensor("anglvel", raw: (0, 0, 0), scale: "0.001", scanType: "le:s16/16>>0", firstIndex: 3)
        device.addSensor("magn", raw: (0, 0, 0), scale: "0.01", scanType: "le:s16/16>>0", firstIndex: 6)
        device.addChannel("timestamp", scan: (9, "le:s64/64>>0"))
        device.set("current_timestamp_clock", "boottime")
        device.set("sampling_frequency", "100")
        device.set("sampling_frequency_available", "25 50 100 200")
        device.addBuffer(trigger: nil)
        return device.bufferOnly
    }

    static let encoder = ScanEncoder(channels: (0..<9).map { ($0, "le:s16/16>>0") } + [(9, "le:s64/64>>0")])

    /// Scans `range`, lying still face up with a gyroscope bias of (0.01, −0.02, 0.03) rad/s, 10 ms apart.
    /// Feeds `seconds` of ``still(_:)`` scans (device time), 10 to a batch.
    static func feedStill(_ testbed: Testbed, seconds: Int) async throws {
        for batch in 0..<seconds * 10 {
            try testbed.feed(
                "/dev/iio:device0", still(batch * 10..<batch * 10 + 10), scanSize: encoder.scanSize, timeout: 10)
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    static func still(_ range: Range<Int>) -> [UInt8] {
        encoder.encode(rows: range.map { i in
            [0, 0, 1024, 10, -20, 30, 2200, 0, -4000, 1_000_000_000 + Int64(i) * 10_000_000]
        })
    }

    @Test("SIGTERM saves what device motion learned; a restart restores it; a damaged file is reported and ignored")
    func saveAndRestore() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(Self.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let directory = try ScratchFolder.folder("motiond-state")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let fixture = ServiceFixture(testbed: testbed, bus: bus, accelerometer: path)
            let file = directory + "/calibration.json"

            let first = try await fixture.startService(["--state-directory", directory])
            defer { first.stop() }
            #expect(!first.text.contains("calibration restored"))
            let client = try await BusClient(address: bus.address)
            // The magnetic-north frame uses all nine channels, so the capture enables all of them: the scans fed
            // below have them all, as the kernel would pack them.
            let stream = try await client.openStream(
                "device-motion", interval: 0.1, format: "csv", options: [("frame", .string("magnetic-north"))])
            defer { stream.close() }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try await Self.feedStill(testbed, seconds: 10)
            #expect(await stream.read { $0.count >= 100 }, "\(stream.lines.count) lines: \(stream.lines.suffix(3)); \(first.text)")
            first.send(SIGTERM)
            #expect(try await first.waitForExit(timeout: 20) == 0, "\(first.text)")
            #expect(first.text.contains("calibration saved to \(file)"), "\(first.text)")
            let saved = try #require(try CalibrationFile.load(from: file))
            let bias = saved.gyroscopeBias
            #expect(abs(bias.x - 0.01) < 0.002 && abs(bias.y + 0.02) < 0.002 && abs(bias.z - 0.03) < 0.002, "\(bias)")
            await client.close()

            let second = try await fixture.startService(["--state-directory", directory])
            #expect(second.text.contains("calibration restored from \(file)"), "\(second.text)")
            second.send(SIGTERM)
            #expect(try await second.waitForExit(timeout: 20) == 0)
            // Nothing ran: what was restored is saved again, unchanged.
            #expect(try CalibrationFile.load(from: file)?.gyroscopeBias == bias)

            try "{\"format\": \"swift-motion calibration\", \"version\": 1, \"state\": {\"trunc".write(
                toFile: file, atomically: false, encoding: .utf8)
            let third = try await fixture.startService(["--state-directory", directory])
            defer { third.stop() }
            #expect(third.text.contains("ignoring the saved calibration"), "\(third.text)")
            #expect(third.text.contains(file), "\(third.text)")
        }
    }

    /// A calibration file with a NaN in the gyroscope bias: restored, it made every device-motion stream end at once
    /// (and was saved again at the stop). It is reported with the field and ignored; device motion works, and the
    /// stop replaces it with what was learned.
    @Test("A state file with a NaN is reported and ignored: device motion streams, and the stop saves a valid one")
    func aNaNStateIsIgnored() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(Self.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let directory = try ScratchFolder.folder("motiond-state")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let file = directory + "/calibration.json"
            // A valid file (the state of a filter that saw nothing), with the bias's x made NaN.
            let encoder = JSONEncoder()
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            var state = try #require(
                try JSONSerialization.jsonObject(with: try encoder.encode(DeviceMotionFilter().state)) as? [String: Any])
            var estimator = try #require(state["estimator"] as? [String: Any])
            estimator["bias"] = ["nan", 0.0, 0.0]
            state["estimator"] = estimator
            let contents: [String: Any] = ["format": "swift-motion calibration", "version": 2, "state": state]
            try JSONSerialization.data(withJSONObject: contents).write(to: URL(fileURLWithPath: file))

            let fixture = ServiceFixture(testbed: testbed, bus: bus, accelerometer: path)
            let service = try await fixture.startService(["--state-directory", directory])
            defer { service.stop() }
            #expect(service.text.contains("ignoring the saved calibration"), "\(service.text)")
            #expect(service.text.contains(file) && service.text.contains("estimator.bias.x is nan"), "\(service.text)")
            #expect(!service.text.contains("calibration restored"), "\(service.text)")

            let client = try await BusClient(address: bus.address)
            let stream = try await client.openStream(
                "device-motion", interval: 0.1, format: "csv", options: [("frame", .string("magnetic-north"))])
            defer { stream.close() }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try await Self.feedStill(testbed, seconds: 5)
            #expect(await stream.read { $0.count >= 40 }, "\(stream.lines.count) lines: \(stream.lines.suffix(3)); \(service.text)")
            #expect(!stream.ended, "\(service.text)")
            let rows = stream.lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("t,") }
            #expect(!rows.isEmpty && rows.allSatisfy { !$0.lowercased().contains("nan") }, "\(rows.suffix(3))")
            await client.close()

            service.send(SIGTERM)
            #expect(try await service.waitForExit(timeout: 20) == 0, "\(service.text)")
            #expect(service.text.contains("calibration saved to \(file)"), "\(service.text)")
            let saved = try #require(try CalibrationFile.load(from: file))
            #expect(saved.gyroscopeBias.x.isFinite && saved.gyroscopeBiasUncertainty.isFinite)
        }
    }

    @Test("The compass of a 9-axis IMU: HasCompass, ClaimCompass answered with the first heading, CompassHeading")
    func compass() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(Self.imu())
            let bus = try await PrivateSystemBus()
            defer { bus.stop() }
            let fixture = ServiceFixture(testbed: testbed, bus: bus, accelerometer: path)
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = ServiceFixture.feedInRealTime { range in
                try testbed.feed("/dev/iio:device0", Self.still(range), scanSize: Self.encoder.scanSize, timeout: 0.05)
            }
            defer { feeder.cancel() }
            let client = try await BusClient(address: bus.address)
            let compass = ("/net/hadess/SensorProxy/Compass", "net.hadess.SensorProxy.Compass")
            func property(_ name: String) async throws -> DBusValue? {
                try await client.call(
                    "Get", [.string(compass.1), .string(name)], interface: "org.freedesktop.DBus.Properties",
                    path: compass.0, destination: "net.hadess.SensorProxy"
                ).first
            }
            #expect(try await property("HasCompass") == .variant(.boolean(true)))
            #expect(try await property("CompassHeading") == .variant(.double(-1)))
            // The reply waits for the first heading, so the property is known right after it.
            _ = try await client.call("ClaimCompass", interface: compass.1, path: compass.0, destination: "net.hadess.SensorProxy")
            guard case .variant(.double(let heading))? = try await property("CompassHeading") else {
                Issue.record("no heading")
                return
            }
            #expect(heading >= 0 && heading < 360, "\(heading)")
            #expect(await eventually { service.text.contains("claimed the compass") }, "\(service.text)")
            _ = try await client.call("ReleaseCompass", interface: compass.1, path: compass.0, destination: "net.hadess.SensorProxy")
            #expect(await eventually { service.text.contains("the compass stopped: no client claims it") })
            await client.close()
        }
    }
}
