public import Foundation
import TestThreads
import TestFiles

#if canImport(Glibc)
import Glibc
#endif

/// A child process with its output (stdout and stderr together) collected as it comes (``PipeReader``).
public final class ChildProcess: Sendable {
    public let process = Process()
    private let output: PipeReader

    /// Starts `path arguments` with exactly `environment`.
    public init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        output = PipeReader(pipe.fileHandleForReading)
        try process.run()
    }

    /// Everything the child has written so far.
    public var text: String { output.text }

    /// Waits up to `timeout` seconds until `condition` holds for the output so far.
    public func wait(timeout: Double, until condition: (String) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(text) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition(text)
    }

    /// Waits up to `timeout` seconds until the output has ended (every writer has closed it: the child has exited
    /// and left no process behind that holds it); whether it has.
    public func waitForOutputEnd(timeout: Double) async throws -> Bool {
        try await output.waitForEnd(timeout: timeout)
    }

    /// Sends `signal` to the child.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits up to `timeout` seconds for the child to exit; its exit status, or `nil` while it still runs. Once it
    /// has exited, ``text`` holds all it wrote (its output is read to its end, for at most 5 s more: a process it
    /// left behind may hold the pipe).
    public func waitForExit(timeout: Double) async throws -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        _ = try await output.waitForEnd(timeout: 5)
        return process.terminationStatus
    }

    /// Kills the child (SIGKILL: children of the test runner may start with SIGTERM blocked) and reaps it.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A private, allow-all D-Bus "system" bus (`dbus-daemon`, no polkit, no systemd) for a test, and the
/// environment its clients need (`DBUS_SYSTEM_BUS_ADDRESS`). Children started with ``environment`` inherit the
/// umockdev preload of the test process too.
public final class PrivateSystemBus: @unchecked Sendable {
    /// `true` when dbus-daemon is installed.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon") }

    /// The bus's configuration, its socket in `folder`.
    static func configuration(folder: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <listen>unix:dir=\(folder)</listen>
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
    }

    /// The dbus-daemon.
    public let daemon: ChildProcess
    /// The bus address, `unix:path=…`.
    public let address: String
    /// The test process's environment with `DBUS_SYSTEM_BUS_ADDRESS` set to this bus.
    public let environment: [String: String]
    /// The folder of the bus's configuration and socket (the tests' scratch folder), removed by ``stop()``: the
    /// daemon is killed, so it cannot remove its socket itself.
    private let folder: String

    /// Starts the bus; throws when it does not start within 5 s.
    public init() async throws {
        folder = try ScratchFolder.folder("bus")
        // dbus-daemon names its socket `dbus-` and 10 characters; a socket's path has at most 107 bytes.
        guard folder.utf8.count + 16 <= 107 else {
            throw TestbedError("The bus socket's folder \(folder) is too long for a socket path: set TMPDIR shorter.")
        }
        let configurationFile = folder + "/bus.conf"
        try Self.configuration(folder: folder).write(toFile: configurationFile, atomically: true, encoding: .utf8)
        daemon = try ChildProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(configurationFile)", "--nofork", "--print-address=1"],
            environment: ProcessInfo.processInfo.environment)
        guard try await daemon.wait(timeout: 5, until: { $0.contains("unix:") }) else {
            daemon.stop()
            try? FileManager.default.removeItem(atPath: folder)
            throw TestbedError("dbus-daemon did not start within 5 s: \(daemon.text)")
        }
        address = daemon.text.split(separator: "\n").first { $0.hasPrefix("unix:") }.map(String.init) ?? ""
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        self.environment = environment
    }

    /// Starts `path arguments` as a client of this bus.
    public func start(_ path: String, _ arguments: [String] = [], extra: [String: String] = [:]) throws -> ChildProcess {
        try ChildProcess(path, arguments, environment: environment.merging(extra) { $1 })
    }

    /// Runs `busctl --system arguments…` on this bus to its end (at most `timeout` seconds) and returns its exit
    /// status and output (stdout and stderr together).
    public func busctl(_ arguments: [String], timeout: Double = 10) async throws -> (status: Int32, output: String) {
        try await run("/usr/bin/busctl", ["--system"] + arguments, timeout: timeout)
    }

    /// Runs `path arguments…` as a client of this bus to its end (at most `timeout` seconds) and returns its exit
    /// status and output (stdout and stderr together).
    public func run(_ path: String, _ arguments: [String], timeout: Double = 10) async throws -> (status: Int32, output: String) {
        let child = try start(path, arguments)
        let deadline = Date().addingTimeInterval(timeout)
        while child.process.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if child.process.isRunning {
            child.stop()
            throw TestbedError("\(path) \(arguments.joined(separator: " ")) did not end within \(timeout) s")
        }
        child.process.waitUntilExit()
        guard try await child.waitForOutputEnd(timeout: 5) else {
            throw TestbedError("\(path) \(arguments.joined(separator: " ")) ended, but its output did not within 5 s")
        }
        return (child.process.terminationStatus, child.text)
    }

    /// Stops the bus and removes its folder (configuration and socket).
    public func stop() {
        daemon.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// iio-sensor-proxy and `monitor-sensor --accel` on a ``PrivateSystemBus``, started inside the current testbed
/// (children inherit the umockdev preload).
public final class IioSensorProxySession: @unchecked Sendable {
    /// `true` when iio-sensor-proxy, monitor-sensor and dbus-daemon are installed and the process is root.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/iio-sensor-proxy")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/monitor-sensor")
            && PrivateSystemBus.isAvailable && getuid() == 0
    }

    public let bus: PrivateSystemBus
    /// iio-sensor-proxy, verbose (`-v`, `G_MESSAGES_DEBUG=all`): its log shows the values it read and used.
    public let proxy: ChildProcess
    /// `monitor-sensor --accel`: prints `Accelerometer orientation changed: …` and `Tilt changed: …`.
    public let monitor: ChildProcess

    /// Starts the bus, the proxy and the monitor; throws when the bus does not start within 5 s.
    public init() async throws {
        bus = try await PrivateSystemBus()
        proxy = try bus.start("/usr/sbin/iio-sensor-proxy", ["-v"], extra: ["G_MESSAGES_DEBUG": "all"])
        monitor = try bus.start("/usr/bin/monitor-sensor", ["--accel"])
    }

    /// Stops the three processes and removes the bus configuration.
    public func stop() {
        monitor.stop()
        proxy.stop()
        bus.stop()
    }

    /// The orientations monitor-sensor has printed, in order (`normal`, `left-up`, …).
    public var reportedOrientations: [String] { MonitorSensor.orientations(in: monitor.text) }
}

/// What `monitor-sensor` prints.
public enum MonitorSensor {
    /// The orientations in `output`, in order (`normal`, `left-up`, …).
    public static func orientations(in output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            line.range(of: "Accelerometer orientation changed: ").map { String(line[$0.upperBound...]) }
        }
    }
}
