import IIOTestbed
import MotionCore
import MotionIIO
import Testing

/// Hot-plug through libudev's monitor: umockdev delivers add/change/remove uevents in-process.
@Suite(.serialized, .requires(.umockdevPreload))
struct DeviceMonitorTests {
    @Test func reportsAddedChangedAndRemovedDevices() async throws {
        try await Testbed.run { testbed in
            let monitor = try IIODeviceMonitor()
            try testbed.add(.lis3dhTrigger)  // triggers are not reported
            var light = EmulatedDevice.iio(name: "als", number: 3, node: nil)
            light.set("in_illuminance_raw", "1")
            try testbed.add(light)  // nor devices without motion channels
            let path = try testbed.add(.lis3dh())

            guard case .added(let added) = try await monitor.next() else {
                Issue.record("expected an add event")
                return
            }
            #expect(added.id == "iio:device0")
            #expect(added.name == "lis3dh")
            #expect(added.triggers == ["lis3dh-trigger"])
            #expect(added.canBuffer)

            testbed.setProperty(path, "ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 1")
            testbed.uevent(path, "change")
            guard case .changed(let changed) = try await monitor.next() else {
                Issue.record("expected a change event")
                return
            }
            #expect(changed.sensor(.accelerometer)?.mountMatrix.source == .udevProperty("ACCEL_MOUNT_MATRIX"))

            testbed.remove(path)
            #expect(try await monitor.next() == .removed(id: "iio:device0", sysfsPath: path))
        }
    }

    @Test func leavesOutBaseAccelerometersUnlessAsked() async throws {
        try await Testbed.run { testbed in
            let monitor = try IIODeviceMonitor()
            let everything = try IIODeviceMonitor(includeBase: true)
            var base = EmulatedDevice.lis3dh()
            base.setProperty("ACCEL_LOCATION", "base")
            try testbed.add(base)
            var display = EmulatedDevice.iio(name: "bma250", number: 1, node: nil)
            display.addSensor("accel", raw: (0, 0, 0), scale: "0.01")
            try testbed.add(display)
            guard case .added(let first) = try await monitor.next() else {
                Issue.record("expected an add event")
                return
            }
            #expect(first.id == "iio:device1")
            guard case .added(let base1) = try await everything.next() else {
                Issue.record("expected an add event")
                return
            }
            #expect(base1.id == "iio:device0")
            #expect(base1.location.value == .base)
        }
    }

    @Test func cancellationEndsTheSequence() async throws {
        try await Testbed.run { _ in
            let task = Task {
                var count = 0
                for try await _ in try IIODeviceMonitor() { count += 1 }
                return count
            }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            #expect(try await task.value == 0)
        }
    }
}
