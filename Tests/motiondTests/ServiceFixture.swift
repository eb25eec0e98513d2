import Foundation
import IIOTestbed

/// The built `motiond` (next to the test binary) on a private system bus, inside a umockdev testbed.
struct ServiceFixture {
    static let executable: String = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = exe.deletingLastPathComponent()
        if folder.pathExtension == "xctest" { folder = folder.deletingLastPathComponent() }
        return folder.appendingPathComponent("motiond").path
    }()

    let testbed: Testbed
    let bus: PrivateSystemBus
    /// The emulated polled accelerometer's sysfs path.
    let accelerometer: String

    /// A polled accelerometer (as iio-sensor-proxy's `iio-poll-accel`), 1024 raw units ≈ 1 g, lying upright in
    /// portrait (`normal`), and a private bus.
    static func make(_ testbed: Testbed) async throws -> ServiceFixture {
        var device = EmulatedDevice.iio(name: "bma250", number: 0, parent: "/devices/platform/bma250", node: nil)
        device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576")
        device.set("sampling_frequency", "100")
        device.setProperty("IIO_SENSOR_PROXY_TYPE", "iio-poll-accel")
        let path = try testbed.add(device)
        return ServiceFixture(testbed: testbed, bus: try await PrivateSystemBus(), accelerometer: path)
    }

    /// A buffered accelerometer fed through a pty (lis3dh, 100 Hz scans with their own timestamps: scan i at
    /// 1 s + i × 10 ms), and a private bus.
    static func makeBuffered(_ testbed: Testbed) async throws -> ServiceFixture {
        let path = try testbed.add(.lis3dh().bufferOnly)
        try testbed.add(.lis3dhTrigger)
        return ServiceFixture(testbed: testbed, bus: try await PrivateSystemBus(), accelerometer: path)
    }

    static let encoder = ScanEncoder(
        channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0"), (3, "le:s64/64>>0")])

    /// Feeds scans `range` of the buffered accelerometer, lying upright: t = 1 s + i × 10 ms.
    /// Waits at most `timeout` seconds while nobody reads the device, then throws.
    func feed(_ range: Range<Int>, timeout: Double = 10) throws {
        try testbed.feed(
            "/dev/iio:device0",
            Self.encoder.encode(rows: range.map { i in [0, -1024, 0, 1_000_000_000 + Int64(i) * 10_000_000] }),
            timeout: timeout)
    }

    /// Feeds scans of the buffered accelerometer: for each scan number i, its raw (x, y, z), at 1 s + i × 10 ms.
    func feed(_ range: Range<Int>, raw: (Int) -> (Int64, Int64, Int64)) throws {
        try testbed.feed(
            "/dev/iio:device0",
            Self.encoder.encode(rows: range.map { i in
                let (x, y, z) = raw(i)
                return [x, y, z, 1_000_000_000 + Int64(i) * 10_000_000]
            }),
            timeout: 10)
    }

    /// Feeds the buffered accelerometer in real time: 10 scans every 0.1 s (a 100 Hz device), whenever its node
    /// exists (not while it is unplugged), until the task is cancelled.
    func feedInRealTime() -> Task<Void, Never> {
        Self.feedInRealTime { try feed($0, timeout: 0.05) }
    }

    /// Calls `feed` with the next 10 scan numbers every 0.1 s; numbers that could not be fed are fed again.
    /// `feed` must not wait long (a bounded write): the task runs on the shared pool, and a write that waits for
    /// a reader that has stopped would hold one of its few threads for ever.
    static func feedInRealTime(_ feed: @escaping @Sendable (Range<Int>) throws -> Void) -> Task<Void, Never> {
        Task {
            var next = 0
            while !Task.isCancelled {
                if (try? feed(next..<next + 10)) != nil { next += 10 }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Starts motiond with `arguments` and waits (at most 20 s) until it serves the bus name.
    /// `launcher` runs before the service's executable (such as `prlimit --nofile=300:300 --`).
    func startService(_ arguments: [String] = [], launcher: [String] = []) async throws -> ChildProcess {
        let command = launcher + [Self.executable] + arguments
        let service = try bus.start(command[0], Array(command.dropFirst()))
        guard try await service.wait(timeout: 20, until: { $0.contains("serving net.hadess.SensorProxy and") }) else {
            service.stop()
            throw TestbedError("motiond did not start within 20 s: \(service.text)")
        }
        return service
    }

    /// Holds the accelerometer still with raw readings `raw` (x, y, z; 1024 ≈ 1 g).
    func hold(_ raw: (Int, Int, Int)) {
        testbed.setAttribute(accelerometer, "in_accel_x_raw", "\(raw.0)")
        testbed.setAttribute(accelerometer, "in_accel_y_raw", "\(raw.1)")
        testbed.setAttribute(accelerometer, "in_accel_z_raw", "\(raw.2)")
    }

    /// Upright poses and the orientation each gives in both rule sets, in an order where each changes it.
    static let poses: [((Int, Int, Int), String)] = [
        ((1024, 0, 0), "left-up"),
        ((0, 1024, 0), "bottom-up"),
        ((-1024, 0, 0), "right-up"),
        ((0, -1024, 0), "normal"),
    ]

    func stop() { bus.stop() }
}

/// Waits up to `limit` seconds for `condition`, checking every 50 ms.
func eventually(limit: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(limit)
    while Date() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}
