import IIOTestbed
import MotionCore
@testable import MotionIIO
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The lis3dh fixture's scan layout: x, y, z as le:s16 at indices 0–2 and a le:s64 timestamp at index 3.
let lis3dhEncoder = ScanEncoder(
    channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0"), (3, "le:s64/64>>0")])

/// Scan i of the guide's fixture: x = i % 3, y = −1024, z = −(i % 5), t = 1 s + i × 10 ms.
func fixtureRows(_ count: Int, from first: Int = 0) -> [[Int64]] {
    (first..<first + count).map { i in [Int64(i % 3), -1024, -Int64(i % 5), 1_000_000_000 + Int64(i) * 10_000_000] }
}

/// What swift-motion must report for raw accelerometer values: M · ((raw + offset) × scale) / 9.80665, in g.
func expectedAcceleration(
    _ raw: SIMD3<Double>, matrix: MountMatrix = .identity, scale: Double = 0.009576, offset: Double = 0
) -> SIMD3<Double> {
    let ms2 = (raw + SIMD3(repeating: offset)) * scale
    let rotated = SIMD3(
        (matrix.xRow * ms2).sum(), (matrix.yRow * ms2).sum(), (matrix.zRow * ms2).sum())
    return rotated / 9.80665
}

func isClose(_ a: SIMD3<Double>?, _ b: SIMD3<Double>, tolerance: Double = 1e-12) -> Bool {
    guard let a else { return false }
    return ((a - b) * (a - b)).sum().squareRoot() <= tolerance
}

func sources(_ selector: DeviceSelector = .automatic, includeBase: Bool = false) throws -> [CaptureSource] {
    selector.sources(from: try IIODeviceDiscovery.devices(includeBase: includeBase))
}

/// Reads batches until the capture ends with an error; returns the samples and the error.
func drain(_ capture: IIOCapture, limit: Int = .max) async -> ([MotionSample], MotionError?) {
    var samples: [MotionSample] = []
    do {
        while samples.count < limit { samples += try await capture.next() }
        return (samples, nil)
    } catch {
        return (samples, error)
    }
}

/// Buffered and polled capture against emulated devices (umockdev; serialized).
@Suite(.serialized, .requires(.umockdevPreload))
struct CaptureTests {
    /// A gyroscope (iio:device1) with a buffer and boottime timestamps: x, y, z as le:s16, a le:s64 timestamp at
    /// index 3, 0.000153 rad/s per count; fed with the lis3dh encoder's rows.
    static var bufferedGyroscope: EmulatedDevice {
        var gyro = EmulatedDevice.iio(name: "l3g4200d", number: 1)
        gyro.addSensor("anglvel", raw: (0, 0, 0), scale: "0.000153", scanType: "le:s16/16>>0")
        gyro.addChannel("timestamp", scan: (3, "le:s64/64>>0"))
        gyro.set("current_timestamp_clock", "boottime")
        gyro.addBuffer(trigger: nil)
        return gyro
    }

    /// Every scan of a plain-file node is delivered, converted with a NON-symmetric mount matrix, on the
    /// device's timestamps; the device is configured as documented and buffer/enable goes back to 0.
    @Test func deliversEveryScanAndConfiguresTheDevice() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh(node: .file(lis3dhEncoder.encode(rows: fixtureRows(40))))
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            device.set("in_accel_offset", "3")
            let path = try testbed.add(device)
            try testbed.add(.lis3dhTrigger)

            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 150, batchDuration: 0.1))
            let details = try #require(capture.details.first)
            #expect(details.mode == .buffered)
            #expect(details.samplingFrequency == 200)  // the nearest available value at or above 150 Hz
            #expect(details.trigger == "lis3dh-trigger")
            #expect(details.batchSize == 20)  // 200 Hz × 0.1 s
            #expect(details.timestamps == .deviceTimestamps)
            #expect(details.warnings.isEmpty)
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            #expect(testbed.attribute(path, "sampling_frequency") == "200")
            #expect(testbed.attribute(path, "current_timestamp_clock") == "boottime")
            #expect(testbed.attribute(path, "trigger/current_trigger") == "lis3dh-trigger")
            #expect(testbed.attribute(path, "buffer/watermark") == "20")
            #expect(testbed.attribute(path, "buffer/length") == "80")  // libiio: 4 blocks of 20 scans
            for axis in ["x", "y", "z"] { #expect(testbed.attribute(path, "scan_elements/in_accel_\(axis)_en") == "1") }
            #expect(testbed.attribute(path, "scan_elements/in_timestamp_en") == "1")

            let (samples, error) = await drain(capture)
            #expect(samples.count == 40)
            let matrix = MountMatrix(xRow: [0, -1, 0], yRow: [1, 0, 0], zRow: [0, 0, 1])
            for (i, sample) in samples.enumerated() {
                let raw = SIMD3(Double(i % 3), -1024, -Double(i % 5))
                #expect(isClose(sample.acceleration?.vector, expectedAcceleration(raw, matrix: matrix, offset: 3)))
                #expect(abs(sample.timestamp - (1 + Double(i) * 0.01)) < 1e-12)
                #expect(sample.rotationRate == nil && sample.magneticField == nil)
            }
            // Raw y ≈ −1 g (portrait upright for this sensor) reads x ≈ +1 g after this matrix (row 1 takes −raw y).
            #expect(abs((samples.first?.acceleration?.x ?? 0) - 1) < 0.01)
            // The file ran out: the device "stopped", reported as a typed disconnection; the buffer is off.
            #expect(error?.code == .disconnected)
            #expect((error?.underlying as? IIOReadError)?.kind == .disconnected)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// Scans pushed through a pty as they would arrive from the kernel, including a scan split across two
    /// reads, arrive complete and in order; close() disables the buffer.
    @Test func streamsFromAPtyIncludingSplitScans() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 100))
            let bytes = lis3dhEncoder.encode(rows: fixtureRows(10))
            var received: [MotionSample] = []
            try testbed.feed("/dev/iio:device0", Array(bytes[0..<40]))  // 2.5 scans
            received += try await capture.next()
            #expect(received.count == 2)
            try testbed.feed("/dev/iio:device0", Array(bytes[40...]))
            while received.count < 10 { received += try await capture.next() }
            #expect(received.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
            #expect(received.map { $0.acceleration!.z * 9.80665 / 0.009576 }.map { $0.rounded() } == (0..<10).map { -Double($0 % 5) })
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            capture.close()
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            await #expect(throws: MotionError.self) { _ = try await capture.next() }
        }
    }

    /// A FIFO node behaves as a kernel IIO buffer node does for a reader: a non-blocking read of the empty node
    /// returns EAGAIN at once, each batch written arrives whole (one `next()` per batch, exactly the batch), a
    /// feed larger than PIPE_BUF arrives split at scan boundaries, and the capture ends with the `remove` uevent
    /// (a FIFO's reader sees no end of file).
    ///
    /// The time limit is a hang guard (`capture.next()` has no timeout of its own). It counts the wait for the
    /// process-wide testbed too, which the other emulated-device tests hold in turn: in a full `swift test` on two
    /// cores that wait has reached a minute (the suite takes 3–4 minutes), so the limit is five.
    @Test(.timeLimit(.minutes(5))) func streamsFromAFifoLikeAKernelBuffer() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh(node: .fifo).bufferOnly)
            try testbed.add(.lis3dhTrigger)

            // As libiio opens it: read-write, non-blocking; empty means EAGAIN, without waiting.
            let fd = open("/dev/iio:device0", O_RDWR | O_NONBLOCK | O_CLOEXEC)
            #expect(fd >= 0)
            var byte: UInt8 = 0
            let started = monotonicSeconds()
            let result = read(fd, &byte, 1)
            let code = errno
            #expect(monotonicSeconds() - started < 0.05)
            #expect(result == -1 && code == EAGAIN)
            close(fd)

            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 100))
            #expect(capture.details.first?.batchSize == 5)
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            let bytes = lis3dhEncoder.encode(rows: fixtureRows(315))
            var received: [MotionSample] = []
            for batch in 0..<3 {
                try testbed.feed("/dev/iio:device0", Array(bytes[batch * 80..<(batch + 1) * 80]), scanSize: 16)
                let samples = try await capture.next()
                #expect(samples.count == 5)
                received += samples
            }
            // 4800 bytes: written as 4096 + 704, both whole scans.
            try testbed.feed("/dev/iio:device0", Array(bytes[240..<5040]), scanSize: 16)
            while received.count < 315 { received += try await capture.next() }
            #expect(received.count == 315)
            #expect(received.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
            #expect(received.map { $0.acceleration!.z * 9.80665 / 0.009576 }.map { $0.rounded() } == (0..<315).map { -Double($0 % 5) })

            testbed.remove(path)
            let (_, error) = await drain(capture)
            #expect(error?.code == .disconnected)
            #expect(error?.message == "iio:device0 (lis3dh) was removed")
        }
    }

    /// The reactor watches a node edge-triggered (one registration per descriptor, not one per wait): a backlog
    /// larger than the buffer (5 scans at 100 Hz) is read to the end without new data, data that arrives while
    /// nobody waits is not missed, and a new capture whose node reuses the closed one's descriptor number works.
    /// The time limit: as `streamsFromAFifoLikeAKernelBuffer`'s.
    @Test(.timeLimit(.minutes(5))) func readsBacklogsAndDataThatCameWhileNotWaiting() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let bytes = lis3dhEncoder.encode(rows: fixtureRows(40))
            var capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 100))
            #expect(capture.details.first?.batchSize == 5)
            try testbed.feed("/dev/iio:device0", Array(bytes[0..<23 * 16]))  // 4.6 buffers, one edge
            var received: [MotionSample] = []
            while received.count < 23 { received += try await capture.next() }
            try testbed.feed("/dev/iio:device0", Array(bytes[23 * 16..<30 * 16]))  // nobody is waiting
            try await Task.sleep(for: .milliseconds(50))
            while received.count < 30 { received += try await capture.next() }
            capture.close()

            capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 100))
            try testbed.feed("/dev/iio:device0", Array(bytes[(30 * 16)...]))
            while received.count < 40 { received += try await capture.next() }
            capture.close()
            #expect(received.count == 40)
            #expect(received.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
        }
    }

    /// A device that goes away in the middle of a scan is a typed truncated-scan error. (libiio drops a
    /// partial read that ends in an error, so the pty delivers 2 scans and 11 bytes, then the device is removed,
    /// which closes the pty as unbinding a driver would.)
    @Test func reportsATruncatedScan() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let capture = try IIOCapture(sources: try sources())
            let bytes = lis3dhEncoder.encode(rows: fixtureRows(3))
            try testbed.feed("/dev/iio:device0", Array(bytes.dropLast(5)))
            var samples = try await capture.next()
            if samples.count < 2 { samples += try await capture.next() }
            #expect(samples.count == 2)
            testbed.remove(path)
            let (_, error) = await drain(capture)
            #expect(error?.code == .disconnected)
            #expect((error?.underlying as? IIOReadError)?.kind == .truncatedScan)
            // Whichever is seen first, the pty closing (EIO) or the udev event, the error says what was cut short.
            #expect(error?.message.contains("in the middle of a scan (11") == true)
        }
    }

    /// Cancelling the task that waits for data ends the wait at once and disables the buffer.
    @Test func cancellationStopsTheWaitAndTheBuffer() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let started = monotonicSeconds()
            let task = Task {
                try await IIOCapture.withCapture(from: try sources()) { capture in
                    _ = try await capture.next()
                }
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            task.cancel()
            let result = await task.result
            #expect(monotonicSeconds() - started < 1.5)
            #expect(throws: MotionError.self) { try result.get() }
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    @Test func reportsATimeout() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(timeout: 0.3))
            let started = monotonicSeconds()
            let (_, error) = await drain(capture)
            #expect(error?.code == .ioFailure)
            #expect((error?.underlying as? IIOReadError)?.kind == .timeout)
            #expect(monotonicSeconds() - started >= 0.29)
        }
    }

    /// A udev `remove` of the device in use ends the capture with a typed disconnection.
    @Test func reportsRemoval() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let capture = try IIOCapture(sources: try sources())
            try testbed.feed("/dev/iio:device0", lis3dhEncoder.encode(rows: fixtureRows(2)))
            #expect(try await capture.next().count == 2)
            testbed.remove(path)
            let (_, error) = await drain(capture)
            #expect(error?.code == .disconnected)
            #expect((error?.underlying as? IIOReadError)?.kind == .disconnected)
            // The udev event or the node's end (EIO), whichever the capture sees first.
            #expect(
                error?.message == "iio:device0 (lis3dh) was removed"
                    || error?.message == "iio:device0 (lis3dh) stopped delivering data (removed?)")
        }
    }

    /// A device found, then removed before it is opened (the last one: /sys/bus/iio/devices goes too): the
    /// capture says no device is there, the code a session waits on for the device to come back.
    @Test func aDeviceRemovedBeforeOpeningIsNotFound() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let found = try sources()
            #expect(found.count == 1)
            testbed.remove(path)
            let error = #expect(throws: MotionError.self) { _ = try IIOCapture(sources: found) }
            #expect(error?.code == .deviceNotFound, "\(String(describing: error))")
        }
    }

    /// Without current_timestamp_clock the batch is stamped at read time on CLOCK_BOOTTIME, spread back at
    /// the sampling period.
    @Test func stampsAtReadTimeWithoutATimestampClock() async throws {
        try await Testbed.run { testbed in
            // Without a usable clock the timestamp channel is not enabled: scans are x, y, z only (6 bytes).
            let encoder = ScanEncoder(channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0")])
            var device = EmulatedDevice.lis3dh(node: .file(encoder.encode(rows: fixtureRows(5).map { Array($0.prefix(3)) })))
            device.remove("current_timestamp_clock")
            try testbed.add(device)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 50, batchDuration: 0.1))
            #expect(capture.details.first?.timestamps == .readTime)
            #expect(capture.details.first?.warnings.first?.contains("no current_timestamp_clock") == true)
            let before = boottime()
            let batch = try await capture.next()
            let after = boottime()
            #expect(batch.count == 5)
            let steps = zip(batch, batch.dropFirst()).map { $1.timestamp - $0.timestamp }
            #expect(steps.allSatisfy { abs($0 - 0.02) < 1e-9 })
            let last = try #require(batch.last?.timestamp)
            #expect(last >= before && last <= after)
        }
    }

    /// A device whose current_timestamp_clock is read-only and not boottime: its timestamps are converted to
    /// CLOCK_BOOTTIME by the offset measured at start (boottime − that clock), keeping their spacing exactly.
    @Test(arguments: ["realtime", "monotonic"])
    func convertsTimestampsOfAClockThatCannotBeSet(clock: String) async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh().bufferOnly
            device.set("current_timestamp_clock", clock)
            let path = try testbed.add(device)
            try testbed.makeReadOnly(path, "current_timestamp_clock")
            let id = clock == "realtime" ? CLOCK_REALTIME : CLOCK_MONOTONIC

            // The offset brackets the capture's measurement (the two clocks advance together meanwhile).
            let offsetBefore = nanoseconds(CLOCK_BOOTTIME) - nanoseconds(id)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 100))
            let offsetAfter = nanoseconds(CLOCK_BOOTTIME) - nanoseconds(id)
            defer { capture.close() }
            #expect(testbed.attribute(path, "current_timestamp_clock") == clock)  // the write was refused
            let details = try #require(capture.details.first)
            guard case .convertedDeviceTimestamps(clock, let offset) = details.timestamps else {
                Issue.record("timestamps: \(details.timestamps)")
                return
            }
            #expect(offset * 1e9 >= Double(min(offsetBefore, offsetAfter)) - 1e3)
            #expect(offset * 1e9 <= Double(max(offsetBefore, offsetAfter)) + 1e3)
            #expect(details.timestamps.description.hasPrefix("device (\(clock), converted to boottime by "))
            #expect(details.warnings.contains { $0.contains("converting its timestamps") })
            #expect(testbed.attribute(path, "scan_elements/in_timestamp_en") == "1")

            // Scans stamped on the device's clock, 10 ms apart from now on.
            let start = nanoseconds(id)
            let rows = (0..<10).map { i in [Int64(i % 3), -1024, 0, start + Int64(i) * 10_000_000] }
            try testbed.feed("/dev/iio:device0", lis3dhEncoder.encode(rows: rows))
            var samples: [MotionSample] = []
            while samples.count < 10 { samples += try await capture.next() }
            for (i, sample) in samples.enumerated() {
                let onClock = Double(start + Int64(i) * 10_000_000) * 1e-9
                #expect(sample.timestamp >= onClock + Double(min(offsetBefore, offsetAfter)) * 1e-9 - 1e-6)
                #expect(sample.timestamp <= onClock + Double(max(offsetBefore, offsetAfter)) * 1e-9 + 1e-6)
            }
            #expect(zip(samples, samples.dropFirst()).allSatisfy { abs($1.timestamp - $0.timestamp - 0.01) < 1e-6 })
        }
    }

    /// Polled fallback: no device node; `(raw + offset) × scale` per axis, a fixed grid at the rate.
    @Test func pollsRawAttributesWithOffsetAndScale() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.iio(name: "mma8452", number: 0, node: nil)
            device.addSensor("accel", raw: (10, -2048, 5), scale: "0.0047884")
            device.set("in_accel_x_scale", "0.005")
            device.set("in_accel_offset", "-10")
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; -1, 0, 0; 0, 0, 1")
            let path = try testbed.add(device)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: 50))
            #expect(capture.details.first?.mode == .polled)
            #expect(capture.details.first?.timestamps == .pollTime)
            let first = try await capture.next()
            testbed.setAttribute(path, "in_accel_z_raw", "-500")
            let second = try await capture.next()
            let ms2 = SIMD3<Double>((10 - 10) * 0.005, (-2048 - 10) * 0.0047884, (5 - 10) * 0.0047884)
            let expected = SIMD3(ms2.y, -ms2.x, ms2.z) / 9.80665
            #expect(isClose(first.first?.acceleration?.vector, expected))
            #expect(abs((second.first?.acceleration?.z ?? 0) - (-510 * 0.0047884 / 9.80665)) < 1e-12)
            // The spacing of the polls is checked on given times in `polledReadsFollowAFixedGrid`.
            capture.close()
        }
    }

    /// The polled schedule on given times (no clock read by the test): a read is due at each deadline of a fixed
    /// grid of 1/rate; a read before it returns nothing; a late read keeps the grid while the grid is still ahead,
    /// and after a stall the grid restarts one interval later instead of catching up in a burst.
    @Test func polledReadsFollowAFixedGrid() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.iio(name: "mma8452", number: 0, node: nil)
            device.addSensor("accel", raw: (10, -2048, 5), scale: "0.0047884")
            try testbed.add(device)
            let source = try #require(try sources().first)
            let reader = try PolledReader(source: source, configuration: .init(rate: 50))
            let start = try #require(reader.nextDeadline)
            let interval: UInt64 = 20_000_000  // 50 Hz, in ns
            #expect(try reader.read(readable: false, now: start - 1).isEmpty)
            #expect(reader.nextDeadline == start)
            #expect(try reader.read(readable: false, now: start).count == 1)
            #expect(reader.nextDeadline == start + interval)
            // 5 ms late: the grid holds.
            #expect(try reader.read(readable: false, now: start + interval + 5_000_000).count == 1)
            #expect(reader.nextDeadline == start + 2 * interval)
            // A 100 ms stall: one read, then the grid restarts from it.
            let late = start + 2 * interval + 100_000_000
            #expect(try reader.read(readable: false, now: late).count == 1)
            #expect(reader.nextDeadline == late + interval)
            #expect(try reader.read(readable: false, now: late + interval - 1).isEmpty)
            reader.close()
            #expect(throws: MotionError.self) { try reader.read(readable: false, now: late + interval) }
        }
    }

    /// Two devices (a separate accelerometer and gyroscope) sampled on the same timestamps are merged
    /// into samples that carry both readings.
    @Test func mergesSeparateAccelerometerAndGyroscope() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh(node: .file(lis3dhEncoder.encode(rows: fixtureRows(30)))))
            var gyro = EmulatedDevice.iio(name: "l3g4200d", number: 1, node: .file([]))
            gyro.addSensor("anglvel", raw: (0, 0, 0), scale: "0.000153", scanType: "be:s16/16>>0")
            gyro.addChannel("timestamp", scan: (3, "le:s64/64>>0"))
            gyro.set("current_timestamp_clock", "boottime")
            gyro.addBuffer(trigger: nil)
            let gyroEncoder = ScanEncoder(
                channels: [(0, "be:s16/16>>0"), (1, "be:s16/16>>0"), (2, "be:s16/16>>0"), (3, "le:s64/64>>0")])
            let gyroRows: [[Int64]] = (0..<30).map { [Int64($0), 0, -100, 1_000_000_000 + Int64($0) * 10_000_000] }
            gyro.node = ("iio:device1", .file(gyroEncoder.encode(rows: gyroRows)))
            try testbed.add(gyro)

            let chosen = try sources()
            #expect(chosen.map(\.device.id) == ["iio:device0", "iio:device1"])
            let capture = try IIOCapture(sources: chosen)
            let (samples, error) = await drain(capture)
            #expect(error?.code == .disconnected)
            // Both sources end at 1.29 s: when the first one's data ends, everything held is still delivered.
            #expect(samples.count == 30)
            #expect(samples.allSatisfy { $0.sensors == [.accelerometer, .gyroscope] })
            #expect(samples.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
            #expect(samples.enumerated().allSatisfy { i, s in abs(s.rotationRate!.x - Double(i) * 0.000153) < 1e-12 })
            #expect(samples.allSatisfy { abs($0.rotationRate!.z - (-100 * 0.000153)) < 1e-12 })
        }
    }

    /// When one of two merged devices is removed, the samples the merger holds (the accelerometer's, waiting
    /// for gyroscope readings that will never come) are delivered, as accelerometer-only samples, before the
    /// disconnection error.
    @Test func deliversHeldSamplesBeforeAnError() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let gyroPath = try testbed.add(Self.bufferedGyroscope.bufferOnly)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(mergeTolerance: 0.001))
            #expect(capture.details.count == 2)

            // 10 accelerometer scans (1.00 … 1.09 s) and 5 gyroscope scans (1.00 … 1.04 s, raw x = 7).
            try testbed.feed("/dev/iio:device0", lis3dhEncoder.encode(rows: fixtureRows(10)))
            let gyroRows = fixtureRows(5).map { [7, 0, 0, $0[3]] }
            try testbed.feed("/dev/iio:device1", lis3dhEncoder.encode(rows: gyroRows))
            // Released up to the gyroscope's last timestamp; 1.04 s is held, it could still merge.
            var samples: [MotionSample] = []
            while samples.count < 4 { samples += try await capture.next() }
            #expect(samples.count == 4)
            #expect(samples.allSatisfy { $0.sensors == [.accelerometer, .gyroscope] })

            testbed.remove(gyroPath)
            let (rest, error) = await drain(capture)
            #expect(error?.code == .disconnected)
            #expect((error?.underlying as? IIOReadError)?.device == "iio:device1")
            samples += rest
            // Every scan read is delivered: 1.04 s merged, 1.05 … 1.09 s accelerometer only.
            #expect(samples.count == 10)
            #expect(samples.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
            #expect(samples.compactMap(\.rotationRate).count == 5)
            #expect(samples.compactMap(\.rotationRate).allSatisfy { abs($0.x - 7 * 0.000153) < 1e-12 })
            #expect(samples.suffix(5).allSatisfy { $0.sensors == [.accelerometer] })
            #expect(samples.prefix(5).allSatisfy { $0.sensors == [.accelerometer, .gyroscope] })
        }
    }

    /// Cancelling the task while the merger holds samples delivers them first; the next call ends the stream.
    @Test func deliversHeldSamplesOnCancellation() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(Self.bufferedGyroscope.bufferOnly)
            // Accelerometer at 1.00, 1.01, 1.02 s; gyroscope at 1.00, 1.01 s.
            try testbed.feed("/dev/iio:device0", lis3dhEncoder.encode(rows: fixtureRows(3)))
            try testbed.feed("/dev/iio:device1", lis3dhEncoder.encode(rows: fixtureRows(2)))
            let (firstBatch, signal) = AsyncStream.makeStream(of: Int.self)
            let task = Task {
                try await IIOCapture.withCapture(from: try sources()) { capture in
                    var batches: [[MotionSample]] = []
                    for try await batch in capture.batches {
                        batches.append(batch)
                        signal.yield(batch.count)
                    }
                    return batches
                }
            }
            // The first batch is 1.00 s; 1.01 s (merged) and 1.02 s (accelerometer only) are then held.
            for await _ in firstBatch { break }
            task.cancel()
            let samples = try await task.value.flatMap { $0 }
            #expect(samples.map(\.sensors) == [
                [.accelerometer, .gyroscope], [.accelerometer, .gyroscope], [.accelerometer],
            ])
            #expect(samples.enumerated().allSatisfy { i, s in abs(s.timestamp - (1 + Double(i) * 0.01)) < 1e-12 })
        }
    }

    /// Automatic mode: a buffer that delivers nothing within `bufferStartTimeout` is given up for polled reads,
    /// which arrive and say why; the buffer is disabled again.
    @Test func aSilentBufferFallsBackToPolling() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())  // a pty nobody writes to
            let started = boottime()
            let capture = try IIOCapture(
                sources: try sources(), configuration: .init(rate: 100, bufferStartTimeout: 0.2))
            defer { capture.close() }
            #expect(capture.details.first?.mode == .buffered && capture.details.first?.fallback == nil)
            #expect(testbed.attribute(path, "buffer/enable") == "1")
            let batch = try await capture.next()
            let first = try #require(batch.first)
            #expect(first.timestamp >= started + 0.2)  // not before the buffer was given up
            #expect(abs((first.acceleration?.y ?? 0) + 0.9999) < 0.001)  // in_accel_y_raw = -1024
            let details = try #require(capture.details.first)
            #expect(details.mode == .polled)
            #expect(details.fallback == "the buffer of iio:device0 delivered nothing in 0.2 s")
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// Buffered mode, as asked, never falls back: the silent buffer ends in the read timeout.
    @Test func bufferedModeNeverFallsBack() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let capture = try IIOCapture(
                sources: try sources(),
                configuration: .init(rate: 100, mode: .buffered, timeout: 0.4, bufferStartTimeout: 0.1))
            let (samples, error) = await drain(capture)
            #expect(samples.isEmpty)
            #expect((error?.underlying as? IIOReadError)?.kind == .timeout)
            #expect(capture.details.first?.mode == .buffered && capture.details.first?.fallback == nil)
        }
    }

    /// A device that gives nothing and cannot be polled: a clear error once the start timeout has passed.
    @Test func aDeviceThatGivesNothingFailsAtTheStartTimeout() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            for axis in ["x", "y", "z"] { device.remove("in_accel_\(axis)_raw") }
            let path = try testbed.add(device)
            let capture = try IIOCapture(
                sources: try sources(), configuration: .init(rate: 100, bufferStartTimeout: 0.1, startTimeout: 0.3))
            let (samples, error) = await drain(capture)
            #expect(samples.isEmpty)
            #expect(error?.code == .ioFailure)
            #expect((error?.underlying as? IIOReadError)?.kind == .timeout)
            #expect(error?.message.hasPrefix("iio:device0 (lis3dh, buffered) delivered no sample within 0.3 s") == true)
            #expect(capture.details.first?.mode == .buffered)  // nothing to fall back to
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// Without a rate asked for, a device below 10 Hz is raised as iio-sensor-proxy does
    /// (iio_fixup_sampling_frequency, peers.md §2): the smallest available value ≥ 10 Hz, else the largest, else
    /// 10; an explicit rate is taken as asked.
    @Test(arguments: [
        ("5.2", "1 5.2 10 25", nil, "10"),  // iio-sensor-proxy's test_iio_poll_accel: 5.2 Hz becomes 10
        ("0", nil, nil, "10"),  // no list: 10
        ("1", "1 2 5", nil, "5"),  // nothing ≥ 10: the largest
        ("25", "1 10 25", nil, "25"),  // at or above 10: left alone
        ("25", "1 5 10 25", 5, "5"),  // asked for: taken
    ] as [(String, String?, Double?, String)])
    func raisesSlowDevicesAsIioSensorProxyDoes(current: String, available: String?, rate: Double?, expected: String)
        async throws
    {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh(node: nil)
            device.set("sampling_frequency", current)
            if let available { device.set("sampling_frequency_available", available) } else {
                device.remove("sampling_frequency_available")
            }
            let path = try testbed.add(device)
            let capture = try IIOCapture(sources: try sources(), configuration: .init(rate: rate, mode: .polled))
            defer { capture.close() }
            #expect(testbed.attribute(path, "sampling_frequency") == expected)
            #expect(capture.details.first?.samplingFrequency == Double(expected))
        }
    }

    @Test func explainsBuffersThatCannotBeUsed() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.iio(name: "pollonly", number: 0, node: nil)
            device.addSensor("accel", raw: (0, 0, 0), scale: "0.01")
            try testbed.add(device)
            #expect {
                _ = try IIOCapture(sources: try sources(), configuration: .init(mode: .buffered))
            } throws: { error in
                (error as? MotionError)?.code == .unsupported
            }
            #expect(throws: MotionError.self) { _ = try IIOCapture(sources: []) }
            #expect(throws: MotionError.self) { _ = try IIOCapture(sources: try sources(), configuration: .init(rate: 0)) }
        }
    }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

func boottime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

func nanoseconds(_ clock: clockid_t) -> Int64 {
    var now = timespec()
    clock_gettime(clock, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}
