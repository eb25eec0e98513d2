import Foundation
import Dispatch
import IIOTestbed
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace
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
            // The scans are fed once the test has seen the buffer enabled. Under load (every suite of a plain
            // `swift test` starting at once on two cores) the test may see it seconds later: a long start
            // timeout instead of the default 5 s, which would end the capture first.
            let capture = CaptureConfiguration(startTimeout: 120)
            let manager = try MotionManager(source: .device(configuration: DeviceSourceConfiguration(capture: capture)))
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

    @Test("The source's start timeout reaches the capture: a device that gives nothing fails within it")
    func silentDeviceWithAShorterStartTimeout() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()  // a pty nobody writes to
            for axis in ["x", "y", "z"] { device.remove("in_accel_\(axis)_raw") }
            let path = try testbed.add(device)
            let capture = CaptureConfiguration(startTimeout: 1)
            let manager = try MotionManager(source: .device(configuration: .init(capture: capture)))
            let error = await #expect(throws: MotionError.self) {
                for try await _ in manager.accelerometerUpdates() {}
            }
            #expect(error?.code == .ioFailure)
            #expect(error?.message.hasPrefix("iio:device0 (lis3dh, buffered) delivered no sample within 1 s") == true)
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

    @Test("With endOnDisconnect, a device that goes away ends the handler's updates with a disconnected error")
    func removal() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let manager = try MotionManager(source: .device(configuration: .init(reconnect: .endOnDisconnect)))
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

    @Test("By default a subscription survives unplug and replug: later samples follow, nothing goes back in time")
    func reconnection() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let events = Recorder<IIODeviceEvent>()
            let manager = try MotionManager(
                source: .device(configuration: .init()) { events.append($0) })
            let updates = manager.accelerometerUpdates(interval: 0)  // every sample
            var iterator = updates.makeAsyncIterator()
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<5))
            var readings: [AccelerometerData] = []
            while readings.count < 5, let reading = try await iterator.next() { readings.append(reading) }

            testbed.remove(path)
            #expect(await eventually { events.all.contains { if case .disconnected = $0 { true } else { false } } })
            let replugged = try testbed.add(.lis3dh().bufferOnly)
            #expect(await eventually { testbed.attribute(replugged, "buffer/enable") == "1" })
            // The replugged chip's clock restarted: 3 scans stamped before the last sample, then 2 after it.
            let rows: [[Int64]] = (0..<5).map { i in
                [Int64(10 + i), -1024, 0, (i < 3 ? 500_000_000 : 2_000_000_000) + Int64(i) * 10_000_000]
            }
            try testbed.feed("/dev/iio:device0", lis3dhScan.encode(rows: rows))
            while readings.count < 10, let reading = try await iterator.next() { readings.append(reading) }
            updates.cancel()

            let raw = readings.map { Int(($0.acceleration.x * 9.80665 / 0.009576).rounded()) }
            #expect(raw == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14])
            let times = readings.map(\.timestamp)
            #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 }, "\(times)")
            #expect(times[5...7].allSatisfy { $0 == times[4] }, "the early scans take the last timestamp: \(times)")
            #expect(abs(times[8] - 2.03) < 1e-9 && abs(times[9] - 2.04) < 1e-9)
            let kinds = events.all.map { event in
                switch event {
                case .opened: "opened"
                case .detailsChanged: "detailsChanged"
                case .disconnected(let disconnection): "disconnected \(disconnection.device?.id ?? "?")"
                case .reconnected(let details, _): "reconnected \(details.map(\.device.id))"
                case .monitorUnavailable(let error): "monitorUnavailable \(error)"
                }
            }
            // A device still being removed may be found and lost once more before the wait: a second disconnection.
            #expect(kinds.first == "opened" && kinds.last == "reconnected [\"iio:device0\"]", "\(kinds)")
            #expect(kinds.count >= 3 && kinds.dropFirst().dropLast().allSatisfy { $0 == "disconnected iio:device0" })
        }
    }

    @Test("Stopping a subscription that waits for its device ends the wait at once")
    func stopWhileWaitingForTheDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let events = Recorder<IIODeviceEvent>()
            let manager = try MotionManager(source: .device(configuration: .init()) { events.append($0) })
            manager.startAccelerometerUpdates()
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            testbed.remove(path)
            #expect(await eventually { events.count >= 2 })  // opened, disconnected
            manager.stopAccelerometerUpdates()
            let stopped = Recorder<Bool>()
            let waiter = Task {
                await manager.engine.producerStopped()
                stopped.append(true)
            }
            #expect(await eventually(limit: 10) { stopped.count == 1 }, "the producer still waits for a device")
            waiter.cancel()
        }
    }

    @Test("The source's mode and mount-matrix override reach the capture: polled sysfs readings, rotated")
    func polledModeAndMountMatrixOverride() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())  // a pty nobody writes to; in_accel_y_raw = -1024
            let flip = try MountMatrix.parse("-1, 0, 0; 0, -1, 0; 0, 0, -1").get()
            let events = Recorder<IIODeviceEvent>()
            let capture = CaptureConfiguration(mode: .polled, mountMatrixOverrides: [.accelerometer: flip])
            let manager = try MotionManager(
                source: .device("lis3dh", configuration: .init(capture: capture)) { events.append($0) })
            var readings: [AccelerometerData] = []
            for try await data in manager.accelerometerUpdates(interval: 0) {
                readings.append(data)
                if readings.count == 3 { break }
            }
            #expect(readings.allSatisfy { abs($0.acceleration.y - 0.9999) < 0.001 }, "raw y −1024 flipped: +1 g")
            guard case .opened(let details) = events.all.first else {
                Issue.record("expected an opened event first, got \(events.all)")
                return
            }
            #expect(details.first?.mode == .polled)
            #expect(details.first?.fallback == nil, "polled as asked, not after a silent buffer")
            #expect(details.first?.device.sensor(.accelerometer)?.mountMatrix.source == .override)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    @Test("The source's read timeout reaches the capture: a device that stops ends the updates with a timeout")
    func readTimeout() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let capture = CaptureConfiguration(timeout: 0.3)
            let manager = try MotionManager(source: .device(configuration: .init(capture: capture)))
            let readings = Recorder<Double>()
            let errors = Recorder<MotionError>()
            manager.accelerometerUpdateInterval = 0
            manager.startAccelerometerUpdates(to: .init(label: "handler")) { data, error in
                if let data { readings.append(data.timestamp) }
                if let error { errors.append(error) }
            }
            #expect(await eventually { manager.isAccelerometerActive })
            try await Task.sleep(for: .milliseconds(100))
            try testbed.feed("/dev/iio:device0", scans(0..<3))
            #expect(await eventually { errors.count == 1 })
            #expect(errors.all.first?.code == .ioFailure)
            #expect((errors.all.first?.underlying as? IIOReadError)?.kind == .timeout)
            #expect(errors.all.first?.message.contains("delivered no data for 0.3 s") == true, "\(errors.all)")
            manager.stopAccelerometerUpdates()
        }
    }
}
