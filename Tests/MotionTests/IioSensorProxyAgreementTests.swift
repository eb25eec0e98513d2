import Foundation
import IIOTestbed
import MotionAlgorithms
import MotionCore
import MotionIIO
import Testing

@testable import Motion

/// The orientation of a running iio-sensor-proxy and ours, on the same emulated accelerometer and the same
/// settled readings (Docs/MotionEvents.md lists where we deliberately differ: none of these poses).
@Suite(
    "Orientation agrees with a running iio-sensor-proxy", .serialized,
    .requires(.umockdevPreload, .iioSensorProxy))
struct IioSensorProxyAgreementTests {
    @Test("Upright poses, straight and tilted by 30°: the same iio-sensor-proxy orientation, in the same order")
    func uprightPoses() async throws {
        try await Testbed.run { testbed in
            // A polled accelerometer, 1024 raw units ≈ 1 g (0.009576 m/s² per unit), identity mount matrix.
            var device = EmulatedDevice.iio(name: "bma250", number: 0, parent: "/devices/platform/bma250", node: nil)
            device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576")
            device.set("sampling_frequency", "100")
            device.setProperty("IIO_SENSOR_PROXY_TYPE", "iio-poll-accel")
            let path = try testbed.add(device)

            let session = try await IioSensorProxySession()
            defer { session.stop() }
            let manager = try MotionManager(source: .device())
            let ours = Recorder<DeviceOrientationChange>()
            manager.startDeviceOrientationUpdates(to: .init(label: "orientation")) { change, _ in
                if let change, change.iioSensorProxyOrientationChanged { ours.append(change) }
            }

            // (raw x, y, z) and the orientation both must report; each held until both have settled.
            let poses: [((Int, Int, Int), IIOSensorProxyOrientation)] = [
                ((0, -1024, 0), .normal),
                ((1024, 0, 0), .leftUp),
                ((887, -512, 0), .leftUp),  // still left-up, 30° towards normal: no change
                ((0, 1024, 0), .bottomUp),
                ((-1024, 0, 0), .rightUp),
                ((-512, -887, 0), .normal),  // 30° from normal
            ]
            var expected: [String] = []
            for (raw, orientation) in poses {
                testbed.setAttribute(path, "in_accel_x_raw", "\(raw.0)")
                testbed.setAttribute(path, "in_accel_y_raw", "\(raw.1)")
                testbed.setAttribute(path, "in_accel_z_raw", "\(raw.2)")
                if expected.last != orientation.rawValue { expected.append(orientation.rawValue) }
                let theirsSettled = try await session.monitor.wait(timeout: 10) { _ in
                    session.reportedOrientations.last == orientation.rawValue
                }
                #expect(theirsSettled, "iio-sensor-proxy for \(raw): \(session.reportedOrientations)")
                let oursSettled = await eventually { ours.all.last?.iioSensorProxyOrientation == orientation }
                #expect(oursSettled, "ours for \(raw): \(ours.all.map(\.iioSensorProxyOrientation))")
                // Held a little longer: neither may change again.
                try await Task.sleep(for: .milliseconds(800))
            }
            manager.stopDeviceOrientationUpdates()
            await manager.stopAllUpdates()
            // monitor-sensor may print iio-sensor-proxy's initial "undefined" (before its first reading) first.
            #expect(Array(session.reportedOrientations.drop { $0 == "undefined" }) == expected)
            #expect(ours.all.map(\.iioSensorProxyOrientation.rawValue) == expected)
        }
    }

    /// An emulated polled accelerometer from iio-sensor-proxy 3.9's own tests (commit 0085ddf8ecb1), with the
    /// readings it sets in turn and the orientation upstream asserts after each.
    struct UpstreamDevice: Sendable, CustomTestStringConvertible {
        let name: String
        let scale: String
        let matrix: String?
        let steps: [(raw: (String, String, String), expected: IIOSensorProxyOrientation)]
        var testDescription: String { name }
    }

    static let upstreamDevices: [UpstreamDevice] = [
        // src/test-orientation.c, /iio-sensor-proxy/quirking: hwdb matrix and scale of two tablets.
        .init(
            name: "Onda v975", scale: "0.019163", matrix: "0, -1, 0; -1, 0, 0; 0, 0, 1",
            steps: [(("523", "13", "5"), .normal), (("8", "521", "-67"), .rightUp)]),
        .init(
            name: "Winbook TW100", scale: "0.306457", matrix: "0, -1, 0; -1, 0, 0; 0, 0, 1",
            steps: [(("24", "0", "-21"), .normal), (("15", "-25", "-14"), .leftUp)]),
        // tests/integration-test.py, test_iio_poll_accel (its raw values are not integers: the daemon reads
        // −25, we read −25.6; the orientation is the same).
        .init(
            name: "test_iio_poll_accel", scale: "10", matrix: nil,
            steps: [(("0", "-25.6", "0"), .normal), (("-25.6", "0", "0"), .rightUp)]),
        // tests/integration-test.py, test_iio_scale_decimal_separator2.
        .init(
            name: "test_iio_scale_decimal_separator2", scale: "0.000001", matrix: nil,
            steps: [(("0", "-256000000", "0"), .normal), (("-256000000", "0", "0"), .rightUp)]),
    ]

    /// Each step: the running iio-sensor-proxy reports upstream's expected orientation, and so does
    /// `IIOSensorProxyReference` on our capture's reading; with a matrix, the daemon's corrected values are ours.
    @Test(arguments: upstreamDevices)
    func upstreamDevice(_ device: UpstreamDevice) async throws {
        try await Testbed.run { testbed in
            var emulated = EmulatedDevice.iio(
                name: "iio-test-accel", number: 0, parent: "/devices/platform/accel", node: nil)
            let first = device.steps[0].raw
            emulated.set("in_accel_x_raw", first.0)
            emulated.set("in_accel_y_raw", first.1)
            emulated.set("in_accel_z_raw", first.2)
            emulated.set("in_accel_scale", device.scale)
            emulated.set("sampling_frequency", "10")
            if let matrix = device.matrix { emulated.setProperty("ACCEL_MOUNT_MATRIX", matrix) }
            emulated.setProperty("IIO_SENSOR_PROXY_TYPE", "iio-poll-accel")
            let path = try testbed.add(emulated)

            let session = try await IioSensorProxySession()
            defer { session.stop() }
            let matrix = try MountMatrix.parse(device.matrix ?? "").get()
            var previous = IIOSensorProxyOrientation.undefined
            for (raw, expected) in device.steps {
                testbed.setAttribute(path, "in_accel_x_raw", raw.0)
                testbed.setAttribute(path, "in_accel_y_raw", raw.1)
                testbed.setAttribute(path, "in_accel_z_raw", raw.2)

                let theirs = try await session.monitor.wait(timeout: 10) { _ in
                    session.reportedOrientations.last == expected.rawValue
                }
                #expect(theirs, "iio-sensor-proxy for \(raw): \(session.reportedOrientations)")

                let sources = DeviceSelector.automatic.sources(from: try IIODeviceDiscovery.devices())
                let capture = try IIOCapture(sources: sources, configuration: .init(rate: 10))
                let acceleration = try #require(try await capture.next().first?.acceleration)
                capture.close()
                let reading = acceleration.vector * Acceleration.standardGravity  // M · raw × scale, m/s²
                let ours = IIOSensorProxyReference.orientation(reading: reading, previous: previous)
                #expect(ours == expected, "ours for \(raw): \(reading)")
                previous = ours

                if device.matrix != nil {
                    // "Accel sent by driver (quirk applied): a, b, c (scale: …)": M · raw, as integers.
                    let rawVector = SIMD3([raw.0, raw.1, raw.2].map { Double($0)! })
                    let corrected = matrix.apply(to: rawVector)
                    let values = [corrected.x, corrected.y, corrected.z].map { String(Int($0)) }
                    let line = "Accel sent by driver (quirk applied): " + values.joined(separator: ", ")
                    let logged = try await session.proxy.wait(timeout: 5) { $0.contains(line) }
                    #expect(logged, "\(line) not in the daemon's log")
                }
            }
        }
    }

    /// tests/integration-test.py, test_iio_buffer_accel (iio-sensor-proxy 3.9, commit 0085ddf8ecb1): its device
    /// (x, y, z `le:s16/32>>0` at indices 0–2, timestamp at 3, no scale, trigger `accel_3d-dev0`) and data files,
    /// the node holding orientation-normal.bin, then orientation-left-up.bin, then orientation-normal.bin again.
    /// Upstream asserts normal, left-up, normal. Ours: the last scan our buffered capture reads from each file
    /// (before the daemon starts, which then owns the buffer), through `IIOSensorProxyReference`.
    @Test func upstreamBufferedDevice() async throws {
        let files = [
            (IioSensorProxyUpstreamTests.orientationNormal, IIOSensorProxyOrientation.normal),
            (IioSensorProxyUpstreamTests.orientationLeftUp, .leftUp),
            (IioSensorProxyUpstreamTests.orientationNormal, .normal),
        ]
        try await Testbed.run { testbed in
            var device = EmulatedDevice.iio(
                name: "IIO Test Accelerometer", number: 0, parent: "/devices/platform/accel", node: .file([]))
            device.addBuffer()
            for (index, axis) in ["x", "y", "z"].enumerated() {
                device.addChannel("accel_\(axis)", scan: (index, "le:s16/32>>0"))
            }
            device.addChannel("timestamp", scan: (3, "le:s64/64>>0"))
            device.set("scan_elements/in_timestamp_en", "1")
            // Not in upstream's device: without it we leave the timestamp disabled, and a kernel would then send
            // 12-byte scans, not the files' 24-byte ones. The daemon ignores it.
            device.set("current_timestamp_clock", "boottime")
            device.setProperty("IIO_SENSOR_PROXY_TYPE", "iio-buffer-accel")
            let path = try testbed.add(device)
            try testbed.add(.trigger(name: "accel_3d-dev0", number: 0, parent: "/devices/platform/accel"))
            let node = testbed.rootDirectory + "/dev/iio:device0"
            func fill(_ hex: String) throws {
                let bytes = try #require(IioSensorProxyUpstreamTests.bytes(hex))
                #expect(FileManager.default.createFile(atPath: node, contents: Data(bytes)))
            }

            var previous = IIOSensorProxyOrientation.undefined
            for (hex, expected) in files {
                try fill(hex)
                let sources = DeviceSelector.automatic.sources(from: try IIODeviceDiscovery.devices())
                let capture = try IIOCapture(sources: sources, configuration: .init(rate: 10, batchDuration: 0.1))
                var last: Acceleration?
                while let samples = try? await capture.next(), !samples.isEmpty {
                    last = samples.last?.acceleration ?? last
                }
                capture.close()
                let reading = try #require(last).vector * Acceleration.standardGravity
                let ours = IIOSensorProxyReference.orientation(reading: reading, previous: previous)
                #expect(ours == expected, "ours: \(reading)")
                previous = ours
            }
            #expect(testbed.attribute(path, "buffer/enable") == "0")

            let session = try await IioSensorProxySession()
            defer { session.stop() }
            for (hex, expected) in files {
                try fill(hex)
                let theirs = try await session.monitor.wait(timeout: 10) { _ in
                    session.reportedOrientations.last == expected.rawValue
                }
                #expect(theirs, "iio-sensor-proxy: \(session.reportedOrientations)")
            }
            #expect(Array(session.reportedOrientations.drop { $0 == "undefined" }) == ["normal", "left-up", "normal"])
            #expect(session.proxy.text.contains("Found IIO buffer accelerometer"), "\(session.proxy.text)")
        }
    }
}
