import Foundation
import IIOTestbed
import MotionCore
import MotionIIO
import Testing

/// A child process with its output collected as it comes.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let lock = NSLock()
    private var output = Data()

    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.lock.withLock { self?.output.append(data) }
        }
        try process.run()
    }

    var text: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

    func wait(timeout: Double, until condition: (String) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(text)
    }

    /// Kills the child (SIGKILL: children of the test runner may start with SIGTERM blocked) and reaps it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A private, allow-all D-Bus "system" bus for iio-sensor-proxy (no polkit, no systemd).
let privateBusConfiguration = """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <listen>unix:tmpdir=/tmp</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/>
        <allow own="*"/>
        <allow send_type="method_call"/>
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
      </policy>
    </busconfig>
    """

/// iio-sensor-proxy, run on the same emulated device, applies the same mount matrix to the same raw values.
/// The matrix is NOT symmetric, so `M · raw` and `raw · M` (the transpose) give different orientations.
@Suite(
    .serialized,
    .enabled(if: Testbed.isEnabled && FileManager.default.isExecutableFile(atPath: "/usr/sbin/iio-sensor-proxy")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/monitor-sensor")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && getuid() == 0))
struct IioSensorProxyComparisonTests {
    @Test func sameMountMatrixCorrectedValuesAsIioSensorProxy() async throws {
        try await Testbed.run { testbed in
            // A tilted tablet: raw (100, −1000, 30) at 0.009576 m/s² per unit; M = rows (0,−1,0), (1,0,0), (0,0,1).
            var device = EmulatedDevice.iio(name: "bma250", number: 0, parent: "/devices/platform/bma250", node: nil)
            device.addSensor("accel", raw: (100, -1000, 30), scale: "0.009576")
            device.set("sampling_frequency", "100")
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            device.setProperty("IIO_SENSOR_PROXY_TYPE", "iio-poll-accel")
            try testbed.add(device)

            // Ours: discovery + a polled capture.
            let sources = DeviceSelector.automatic.sources(from: try IIODeviceDiscovery.devices())
            let capture = try IIOCapture(sources: sources, configuration: .init(rate: 10))
            let ours = try #require(try await capture.next().first?.acceleration)
            capture.close()
            let corrected = SIMD3<Double>(1000, 100, 30)  // M · raw
            #expect(abs(ours.x - corrected.x * 0.009576 / 9.80665) < 1e-12)
            #expect(abs(ours.y - corrected.y * 0.009576 / 9.80665) < 1e-12)
            #expect(abs(ours.z - corrected.z * 0.009576 / 9.80665) < 1e-12)

            // Theirs: iio-sensor-proxy on a private bus, in this testbed (children inherit the preload).
            let configuration = FileManager.default.temporaryDirectory.appendingPathComponent("swift-motion-bus-\(getpid()).conf")
            try privateBusConfiguration.write(to: configuration, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: configuration) }
            var environment = ProcessInfo.processInfo.environment
            #expect(environment["UMOCKDEV_DIR"] != nil)
            let bus = try ChildProcess(
                "/usr/bin/dbus-daemon", ["--config-file=\(configuration.path)", "--nofork", "--print-address=1"],
                environment: environment)
            defer { bus.stop() }
            #expect(try await bus.wait(timeout: 5) { $0.contains("unix:") })
            let address = bus.text.split(separator: "\n").first { $0.hasPrefix("unix:") }.map(String.init) ?? ""
            environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
            environment["G_MESSAGES_DEBUG"] = "all"
            let proxy = try ChildProcess("/usr/sbin/iio-sensor-proxy", ["-v"], environment: environment)
            defer { proxy.stop() }
            let monitor = try ChildProcess("/usr/bin/monitor-sensor", ["--accel"], environment: environment)
            defer { monitor.stop() }

            #expect(try await monitor.wait(timeout: 10) { $0.contains("orientation changed") })
            #expect(try await proxy.wait(timeout: 5) { $0.contains("Accel sent by driver") })
            // The proxy's own log: the raw values it read and the mount-matrix-corrected values it used.
            #expect(proxy.text.contains("Accel read from IIO on 'bma250': 100, -1000, 30"))
            let sent = proxy.text.split(separator: "\n").first { $0.contains("Accel sent by driver") }
            // "… Accel sent by driver (quirk applied): 1000, 100, 30 (scale: 0.009576)"
            let numbers = sent.flatMap { line in
                line.range(of: "applied): ").map { start in
                    line[start.upperBound...].prefix { $0 != "(" }.split(separator: ",").compactMap {
                        Int($0.trimmingCharacters(in: .whitespaces))
                    }
                }
            }
            #expect(numbers == [Int(corrected.x), Int(corrected.y), Int(corrected.z)], "\(sent ?? "")")
            // Corrected x ≈ +1 g is "left-up" for iio-sensor-proxy; the transpose would have said "right-up".
            #expect(monitor.text.contains("Accelerometer orientation changed: left-up"), "\(monitor.text)")
            #expect(ours.x > 0.9)
        }
    }
}
