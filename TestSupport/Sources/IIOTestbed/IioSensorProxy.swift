public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process with its output (stdout and stderr together) collected as it comes.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let lock = NSLock()
    private var output = Data()

    /// Starts `path arguments` with exactly `environment`.
    public init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
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

    /// Everything the child has written so far.
    public var text: String { lock.withLock { String(decoding: output, as: UTF8.self) } }

    /// Waits up to `timeout` seconds until `condition` holds for the output so far.
    public func wait(timeout: Double, until condition: (String) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(text)
    }

    /// Kills the child (SIGKILL: children of the test runner may start with SIGTERM blocked) and reaps it.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// iio-sensor-proxy and `monitor-sensor --accel` on a private, allow-all D-Bus "system" bus (no polkit, no
/// systemd), started inside the current testbed (children inherit the umockdev preload).
public final class IioSensorProxySession: @unchecked Sendable {
    /// `true` when iio-sensor-proxy, monitor-sensor and dbus-daemon are installed and the process is root.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/iio-sensor-proxy")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/monitor-sensor")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") && getuid() == 0
    }

    static let busConfiguration = """
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

    public let bus: ChildProcess
    /// iio-sensor-proxy, verbose (`-v`, `G_MESSAGES_DEBUG=all`): its log shows the values it read and used.
    public let proxy: ChildProcess
    /// `monitor-sensor --accel`: prints `Accelerometer orientation changed: …` and `Tilt changed: …`.
    public let monitor: ChildProcess
    private let configurationFile: URL

    /// Starts the bus, the proxy and the monitor; throws when the bus does not start within 5 s.
    public init() async throws {
        configurationFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "swift-motion-bus-\(getpid())-\(UUID().uuidString).conf")
        try Self.busConfiguration.write(to: configurationFile, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        bus = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(configurationFile.path)", "--nofork", "--print-address=1"],
            environment: environment)
        guard try await bus.wait(timeout: 5, until: { $0.contains("unix:") }) else {
            bus.stop()
            throw TestbedError("dbus-daemon did not start: \(bus.text)")
        }
        let address = bus.text.split(separator: "\n").first { $0.hasPrefix("unix:") }.map(String.init) ?? ""
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        environment["G_MESSAGES_DEBUG"] = "all"
        proxy = try ChildProcess("/usr/sbin/iio-sensor-proxy", ["-v"], environment: environment)
        monitor = try ChildProcess("/usr/bin/monitor-sensor", ["--accel"], environment: environment)
    }

    /// Stops the three processes and removes the bus configuration.
    public func stop() {
        monitor.stop()
        proxy.stop()
        bus.stop()
        try? FileManager.default.removeItem(at: configurationFile)
    }

    /// The orientations monitor-sensor has printed, in order (`normal`, `left-up`, …).
    public var reportedOrientations: [String] {
        monitor.text.split(separator: "\n").compactMap { line in
            line.range(of: "Accelerometer orientation changed: ").map { String(line[$0.upperBound...]) }
        }
    }
}
