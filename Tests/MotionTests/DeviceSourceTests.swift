import Dispatch
import IIOTestbed
import MotionAlgorithms
import MotionCore
import Testing

@testable import Motion

/// The lis3dh fixture's scan: x, y, z as le:s16 at indices 0–2 and a le:s64 timestamp (ns) at index 3.
private let lis3dhScan = ScanEncoder(
    channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0"), (3, "le:s64/64>>0")])

/// Scan i: x = i, y = −1024, z = 0, t = 1 s + i × 10 ms.
private func scans(_ range: Range<Int>) -> [UInt8] {
    lis3dhScan.encode(rows: range.map { [Int64($0), -1024, 0, 1_000_000_000 + Int64($0) * 10_000_000] })
}

/// MotionManager on emulated IIO devices (umockdev; serialized with every other testbed user).
@Suite("MotionManager on a live device", .serialized, .requires(.umockdevPreload))
struct DeviceSourceTests {
    @Test("Subscriptions share one device at the fastest rate asked for, each on its own interval; the buffer runs only while someone listens")
    func sharedDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let manager = try MotionManager(source: .device())
            #expect(manager.isAccelerometerAvailable && !manager.isGyroAvailable && !manager.isMagnetometerAvailable)
            #expect(manager.availableAttitudeReferenceFrames.isEmpty)
            #expect(testbed.attribute(path, "buffer/enable") != "1", "nothing runs before a subscription")

            let fast = manager.accelerometerUpdates(interval: 1.0 / 150)  // asks for 150 Hz: the device gives 200
            let slow = manager.accelerometerUpdates(interval: 0.05)
            var fastIterator = fast.makeAsyncIterator()
            var slowIterator = slow.makeAsyncIterator()
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            #expect(testbed.attribute(path, "sampling_frequency") == "200")

            try testbed.feed("/dev/iio:device0", scans(0..<40))
            var fastTimes: [Double] = []
            while fastTimes.count < 40, let reading = try await fastIterator.next() {
                fastTimes.append(reading.timestamp)
                #expect(Int((reading.acceleration.x * 9.80665 / 0.009576).rounded()) == fastTimes.count - 1)
            }
            var slowTimes: [Double] = []
            while slowTimes.count < 8, let reading = try await slowIterator.next() { slowTimes.append(reading.timestamp) }
            #expect(fastTimes.enumerated().allSatisfy { abs($1 - (1 + Double($0) * 0.01)) < 1e-9 })
            #expect(slowTimes.enumerated().allSatisfy { abs($1 - (1 + Double($0) * 0.05)) < 1e-9 })

            slow.cancel()
            #expect(testbed.attribute(path, "buffer/enable") == "1", "the other subscription still listens")
            fast.cancel()
            await manager.engine.producerStopped()
            #expect(testbed.attribute(path, "buffer/enable") == "0", "the last subscription gone, the buffer is off")
        }
    }

    @Test("Orientation notifications run the accelerometer only between the first begin and the last end")
    func orientationNotificationsPowerTheDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let manager = try MotionManager(source: .device())
            manager.beginGeneratingDeviceOrientationNotifications()
            manager.beginGeneratingDeviceOrientationNotifications()
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<200))  // y ≈ −1 g for 2 s: portrait
            #expect(await eventually { manager.deviceOrientation == .portrait })
            manager.endGeneratingDeviceOrientationNotifications()
            #expect(manager.isGeneratingDeviceOrientationNotifications)
            #expect(testbed.attribute(path, "buffer/enable") == "1", "one begin is still open")
            manager.endGeneratingDeviceOrientationNotifications()
            await manager.engine.producerStopped()
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            #expect(manager.deviceOrientation == .unknown)
        }
    }

    @Test("A selector that matches nothing ends the subscription with deviceNotFound, naming what was found")
    func noMatchingDevice() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh())
            let manager = try MotionManager(source: .device("bmi160"))
            #expect(!manager.isAccelerometerAvailable)
            let error = await #expect(throws: MotionError.self) {
                for try await _ in manager.accelerometerUpdates() {}
            }
            #expect(error?.code == .deviceNotFound)
            #expect(error?.message.contains("no device matches \"bmi160\"") == true)
            #expect(error?.message.contains("found iio:device0 (lis3dh)") == true)
        }
    }

    @Test("A device that gives nothing and cannot be polled ends the updates with a clear error at the start timeout")
    func silentDevice() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()  // a pty nobody writes to
            for axis in ["x", "y", "z"] { device.remove("in_accel_\(axis)_raw") }
            let path = try testbed.add(device)
            let manager = try MotionManager(source: .device())
            let error = await #expect(throws: MotionError.self) {
                for try await _ in manager.accelerometerUpdates() {}
            }
            #expect(error?.code == .ioFailure)
            #expect(error?.message.hasPrefix("iio:device0 (lis3dh, buffered) delivered no sample within 5 s") == true)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    @Test("A silent buffer is given up for polled readings, which reach the subscription")
    func silentBufferFallsBackToPolling() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())  // a pty nobody writes to; in_accel_y_raw = -1024
            let manager = try MotionManager(source: .device())
            var readings: [AccelerometerData] = []
            for try await data in manager.accelerometerUpdates() {
                readings.append(data)
                if readings.count == 3 { break }
            }
            #expect(readings.allSatisfy { abs($0.acceleration.y + 0.9999) < 0.001 })
            #expect(testbed.attribute(path, "buffer/enable") == "0")  // polled
        }
    }

    @Test("A device that goes away ends the handler's updates with a disconnected error")
    func removal() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let manager = try MotionManager(source: .device())
            manager.accelerometerUpdateInterval = 0.01
            let readings = Recorder<Double>()
            let errors = Recorder<MotionError>()
            manager.startAccelerometerUpdates(to: .init(label: "handler")) { data, error in
                if let data { readings.append(data.timestamp) }
                if let error { errors.append(error) }
            }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            #expect(testbed.attribute(path, "sampling_frequency") == "100")
            try testbed.feed("/dev/iio:device0", scans(0..<5))
            #expect(await eventually { readings.count == 5 })
            testbed.remove(path)
            #expect(await eventually { errors.count == 1 })
            #expect(errors.all.first?.code == .disconnected)
            #expect(!manager.isAccelerometerActive)
            manager.stopAccelerometerUpdates()
        }
    }
}
