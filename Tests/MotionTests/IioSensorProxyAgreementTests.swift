import Foundation
import IIOTestbed
import MotionAlgorithms
import MotionCore
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
}
