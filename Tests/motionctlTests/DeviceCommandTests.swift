import Foundation
import IIOTestbed
import MotionCore
import MotionTesting
import MotionTrace
import TestThreads
import Testing

/// A running `motionctl` child process whose output is collected as it comes (for live-device commands).
final class RunningMotionctl: @unchecked Sendable {
    let process = Process()
    private let out: PipeReader
    private let err: PipeReader

    /// Starts `motionctl arguments` (the built one, or `executable`), through `launcher` (such as
    /// `setpriv … --`) when given; stdin is `/dev/null`, or `stdin` (a pipe the test writes).
    init(
        _ arguments: [String], launcher: [String] = [], executable: URL = Motionctl.executable, stdin: Pipe? = nil
    ) throws {
        if let first = launcher.first {
            process.executableURL = URL(fileURLWithPath: first)
            process.arguments = Array(launcher.dropFirst()) + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.currentDirectoryURL = Motionctl.packageRoot
        process.standardInput = stdin ?? FileHandle.nullDevice
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        out = PipeReader(outPipe.fileHandleForReading)
        err = PipeReader(errPipe.fileHandleForReading)
        try process.run()
    }

    var stdout: String { out.text }
    var stderr: String { err.text }
    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Waits (up to `timeout` seconds) until `condition` holds for the output so far.
    func wait(timeout: Double = 10, until condition: (RunningMotionctl) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(self) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition(self)
    }

    /// Sends `signal` and waits for the exit status.
    func stop(_ signal: Int32 = SIGINT) async throws -> Int32 {
        if process.isRunning { kill(process.processIdentifier, signal) }
        return try await exitStatus()
    }

    func exitStatus(timeout: Double = 10) async throws -> Int32 {
        _ = try await wait(timeout: timeout) { !$0.process.isRunning }
        if process.isRunning {
            process.terminate()
            Issue.record("motionctl did not exit in \(timeout) s; stderr: \(stderr)")
        }
        await process.waitForExit()
        // Collect what is still in the pipes.
        for (name, pipe) in [("stdout", out), ("stderr", err)] {
            if try await !pipe.waitForEnd(timeout: 5) { Issue.record("motionctl's \(name) did not end within 5 s of its exit") }
        }
        return process.terminationStatus
    }
}

let lis3dhScans = ScanEncoder(
    channels: [(0, "le:s16/16>>0"), (1, "le:s16/16>>0"), (2, "le:s16/16>>0"), (3, "le:s64/64>>0")])

/// Scan i: x = i % 3, y = −1024, z = −(i % 5), t = 1 s + i × 10 ms (device timestamps, boottime).
func scans(_ range: Range<Int>) -> [UInt8] {
    lis3dhScans.encode(rows: range.map { i in [Int64(i % 3), -1024, -Int64(i % 5), 1_000_000_000 + Int64(i) * 10_000_000] })
}

func sampleLines(_ lines: [String]) -> [String] { lines.filter { $0.hasPrefix("{\"type\":\"sample\"") } }

/// `motionctl devices`, `stream --device` and `record` against emulated devices (umockdev testbed in this
/// process; the child inherits the preload and the testbed).
@Suite(.serialized, .requires(.umockdevPreload))
struct DeviceCommandTests {
    @Test func devicesListsPropertiesWithTheirSources() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 0")  // rejected: zero row
            device.set("in_accel_mount_matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            var base = EmulatedDevice.iio(name: "bma250", number: 1, node: nil)
            base.addSensor("accel", raw: (0, 0, 0), scale: "0.038")
            base.set("label", "accel-base")
            try testbed.add(base)

            let result = try await Motionctl.run(["devices"])
            #expect(result.status == 0)
            let text = result.stdout
            #expect(text.contains("iio:device0  lis3dh  (accelerometer)"))
            #expect(text.contains("  sysfs:     /sys/devices/platform/lis3dh-accel/iio:device0"))
            #expect(text.contains("  node:      /dev/iio:device0"))
            #expect(text.contains("  location:  display (default)"))
            #expect(text.contains("    mount matrix: 0, -1, 0; 1, 0, 0; 0, 0, 1 (sysfs in_accel_mount_matrix)"))
            #expect(text.contains("    scale:        0.009576 (sysfs in_accel_scale)"))
            #expect(text.contains("    offset:       0 (default)"))
            #expect(text.contains(
                "    rate:         100 Hz (sysfs sampling_frequency); available 1 10 25 50 100 200 400 (sysfs sampling_frequency_available)"))
            #expect(text.contains("candidates: lis3dh-trigger"))
            #expect(text.contains("  warning: ignored udev ACCEL_MOUNT_MATRIX: mount matrix \"0, 1, 0; 1, 0, 0; 0, 0, 0\" has an all-zero row for axis z"))
            #expect(text.contains("skipped: iio:device1 (bma250): base accelerometer (sysfs label)"))

            let withBase = try await Motionctl.run(["devices", "--include-base"])
            #expect(withBase.stdout.contains("iio:device1  bma250  (accelerometer)"))
            #expect(withBase.stdout.contains("  location:  base (sysfs label)"))
            #expect(withBase.stdout.contains("  buffer:    no (read by polling *_raw)"))
        }
    }

    @Test func devicesJSON() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh()
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, 1, 0; 1, 0, 0; 0, 0, 1")
            try testbed.add(device)
            let result = try await Motionctl.run(["devices", "--json"])
            #expect(result.status == 0)
            let root = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
            let devices = try #require(root["devices"] as? [[String: Any]])
            let first = try #require(devices.first)
            #expect(first["id"] as? String == "iio:device0")
            #expect(first["device_node"] as? String == "/dev/iio:device0")
            #expect(first["sensors"] as? [String] == ["accelerometer"])
            let channels = try #require(first["channels"] as? [[String: Any]])
            let matrix = try #require(channels.first?["mount_matrix"] as? [String: Any])
            #expect(matrix["source"] as? String == "udev ACCEL_MOUNT_MATRIX")
            #expect(matrix["rows"] as? [[Double]] == [[0, 1, 0], [1, 0, 0], [0, 0, 1]])
            let scale = try #require(channels.first?["scale"] as? [[String: Any]])
            #expect(scale.map { $0["value"] as? Double } == [0.009576, 0.009576, 0.009576])
            #expect((channels.first?["sampling_frequency"] as? [String: Any])?["value"] as? Double == 100)
            #expect(root["skipped"] as? [Any] != nil)
        }
    }

    /// Live JSON Lines from a pty-fed device; SIGTERM ends it cleanly and the buffer is disabled again.
    @Test func streamsLiveSamplesAndStopsCleanlyOnSIGTERM() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh().bufferOnly
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            let path = try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl(["stream", "--device", "auto", "--format", "jsonl", "--rate", "100"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<20))
            #expect(try await child.wait { sampleLines($0.lines).count == 20 })
            #expect(try await child.stop(SIGTERM) == 0)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            let samples = sampleLines(child.lines)
            #expect(samples.first == "{\"type\":\"sample\",\"t\":1,\"ax\":0.999915771440808,\"ay\":0,\"az\":0}")
            #expect(child.lines.first?.hasPrefix("{\"type\":\"metadata\"") == true)
            #expect(child.stdout.contains("\"key\":\"mount_matrix_accel\",\"value\":\"0, -1, 0; 1, 0, 0; 0, 0, 1 (udev ACCEL_MOUNT_MATRIX)\""))
            #expect(child.stdout.contains("\"key\":\"clock\",\"value\":\"boottime\""))
        }
    }

    /// `--device auto` survives a removal: a stderr line and a `disconnected` event, then it resumes with a
    /// `connected` event when the device is back. SIGINT then ends it with status 0.
    @Test func streamReportsRemovalAndResumes() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let child = try RunningMotionctl(["stream", "--device", "auto", "--format", "jsonl"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<5))
            #expect(try await child.wait { sampleLines($0.lines).count == 5 })
            testbed.remove(path)
            #expect(try await child.wait { $0.stdout.contains("{\"type\":\"disconnected\"") })
            #expect(child.stderr.contains("motionctl: iio:device0 (lis3dh)"))
            #expect(child.stderr.contains("waiting for a matching device"))

            try testbed.add(.lis3dh().bufferOnly)
            #expect(try await child.wait { $0.stdout.contains("{\"type\":\"connected\"") })
            #expect(child.stderr.contains("connected; resuming"))
            try testbed.feed("/dev/iio:device0", scans(5..<10))
            #expect(try await child.wait { sampleLines($0.lines).count == 10 })
            #expect(try await child.stop(SIGINT) == 0)
            let events = child.lines.filter { !$0.hasPrefix("{\"type\":\"sample\"") && !$0.hasPrefix("{\"type\":\"metadata\"") }
            #expect(events.count == 2)
            #expect(events.first?.contains("\"device\":\"iio:device0\",\"name\":\"lis3dh\"") == true)
        }
    }

    @Test func exitOnDisconnectEndsWithStatus69() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let child = try RunningMotionctl(["stream", "--device", "lis3dh", "--exit-on-disconnect"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<3))
            #expect(try await child.wait { $0.lines.filter { $0.first?.isNumber == true }.count == 3 })
            testbed.remove(path)
            #expect(try await child.exitStatus() == 69)
            #expect(child.stderr.contains("motionctl: error:"))
            // libiio's harmless "WARNING: High-speed mode not enabled" at the buffer's open is not shown.
            #expect(!child.stderr.contains("High-speed"), "\(child.stderr)")
        }
    }

    /// `record` never loses data: an existing --output is refused (73) before any device is looked for; with
    /// --overwrite it is replaced only once samples arrive, so a missing device (69) leaves it as it was, and no
    /// partial file stays behind.
    @Test func recordNeverDestroysAnExistingFile() async throws {
        try await Testbed.run { testbed in
            let file = try Motionctl.temporaryFile("precious\n", name: "walk.csv")
            let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
            func unchanged() throws -> Bool {
                try String(contentsOfFile: file, encoding: .utf8) == "precious\n"
                    && FileManager.default.contentsOfDirectory(atPath: folder) == ["walk.csv"]
            }
            let record = ["record", "--output", file, "--duration", "0.05", "--mode", "polled", "--rate", "100"]

            let refused = try await Motionctl.run(record)
            #expect(refused.status == 73)
            #expect(refused.stderr.contains("\(file): the file already exists; choose another file, or pass --overwrite"))
            #expect(try unchanged())
            let noDevice = try await Motionctl.run(record + ["--overwrite"])
            #expect(noDevice.status == 69, "\(noDevice.stderr)")
            #expect(try unchanged())

            try testbed.add(.lis3dh(node: .file(scans(0..<10))))
            #expect(try await Motionctl.run(record).status == 73)
            #expect(try unchanged())
            let replaced = try await Motionctl.run(record + ["--overwrite"])
            #expect(replaced.status == 0, "\(replaced.stderr)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("# source: motionctl record\n"))
            #expect(text.split(separator: "\n").contains { $0.first?.isNumber == true })
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["walk.csv"])
        }
    }

    /// Without a device, `record` creates no file at all.
    @Test func recordCreatesNoFileWithoutADevice() async throws {
        try await Testbed.run { _ in
            let file = try Motionctl.temporaryPath(name: "walk.csv")
            let result = try await Motionctl.run(["record", "--output", file, "--duration", "0.05"])
            #expect(result.status == 69)
            #expect(try FileManager.default.contentsOfDirectory(atPath: (file as NSString).deletingLastPathComponent)
                .isEmpty)
        }
    }

    /// `--sensors` naming a sensor the device lacks fails at once, naming the sensor and the device, as it does
    /// for a trace without the columns (`stream` used to stream the accelerometer alone, `record` to record it
    /// alone); the buffer is never enabled and `record` creates no file.
    @Test func streamAndRecordRefuseASensorTheDeviceLacks() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())
            let file = try Motionctl.temporaryPath(name: "walk.csv")
            for device in ["auto", "lis3dh"] {
                for command in [["stream"], ["record", "--output", file, "--duration", "1"]] {
                    let result = try await Motionctl.run(command + ["--device", device, "--sensors", "accel,gyro"])
                    #expect(result.status == 64, "\(command[0]): \(result.stderr)")
                    #expect(result.stderr.contains(
                        "--sensors asks for gyro, which --device \(device) does not have: iio:device0 (lis3dh) has "
                            + "accel; choose --sensors among those"), "\(command[0]): \(result.stderr)")
                    #expect(result.stdout.isEmpty)
                }
            }
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// `attitude --device` on an accelerometer-only device ends at once, naming the gyroscope it needs (it used to
    /// print its header and then nothing); the device is never started.
    @Test func attitudeNamesTheMissingGyroscope() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())
            let result = try await Motionctl.run(["attitude", "--device", "auto"])
            #expect(result.status == 69, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "device motion in the arbitrary frame cannot be delivered: the device auto has no gyro (it has accel)"),
                "\(result.stderr)")
            #expect(result.stdout.isEmpty, "\(result.stdout)")
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// A buffer that delivers nothing is given up after 0.5 s for polled reads (iio-sensor-proxy does the same):
    /// reported on stderr and in the metadata, and samples follow.
    @Test func streamFallsBackFromASilentBuffer() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())  // a pty nobody writes to
            let child = try RunningMotionctl(["stream", "--device", "lis3dh", "--rate", "100"])
            #expect(try await child.wait { $0.lines.filter { $0.first?.isNumber == true }.count >= 3 })
            #expect(try await child.stop() == 0)
            let reason = "the buffer of iio:device0 delivered nothing in 0.5 s"
            #expect(child.stderr.contains(
                "motionctl: warning: iio:device0: reading in_*_raw attributes instead of the buffer: \(reason)\n"))
            #expect(child.stdout.contains(
                "# capture_iio_device0: iio:device0 polled (instead of buffered: \(reason)) at 100 Hz, 1 scan"))
            let rows = child.lines.filter { $0.first?.isNumber == true }
            #expect(rows.allSatisfy { $0.hasSuffix(",0,-0.999915771440808,0") || $0.hasSuffix(",-0,-0.999915771440808,-0") })
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// A busy node (EBUSY on open, as while iio-sensor-proxy holds the buffer; here a pty in exclusive mode,
    /// which refuses a process without CAP_SYS_ADMIN): the device is polled instead, and the output says why.
    /// Runs the child as `nobody` (needs root and setpriv, as CI has).
    @Test(.requires(.root, .setpriv))
    func aBusyBufferFallsBackToPolling() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())
            try testbed.makeBusy("/dev/iio:device0")
            // Let `nobody` read and write the testbed, as the udev rule lets the group `iio`.
            let root = testbed.rootDirectory
            let node = try FileManager.default.destinationOfSymbolicLink(atPath: root + "/dev/iio:device0")
            let tree = FileManager.default.enumerator(atPath: root)
            chmod(root, 0o755)
            while let item = tree?.nextObject() as? String {
                var info = stat()
                guard lstat(root + "/" + item, &info) == 0, info.st_mode & S_IFMT != S_IFLNK else { continue }
                chmod(root + "/" + item, info.st_mode & S_IFMT == S_IFDIR ? 0o777 : 0o666)
            }
            chmod(node, 0o666)
            defer { chmod(node, 0o620) }
            let child = try RunningMotionctl(
                ["stream", "--device", "auto", "--rate", "100"],
                launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            #expect(try await child.wait { $0.lines.filter { $0.first?.isNumber == true }.count >= 3 }, "\(child.stderr)")
            #expect(try await child.stop() == 0)
            #expect(child.stderr.contains(
                "motionctl: warning: iio:device0: reading in_*_raw attributes instead of the buffer: "
                    + "iio:device0 is busy: another program (such as iio-sensor-proxy or iio_readdev) is capturing"),
                "\(child.stderr)")
            #expect(child.stdout.contains("# capture_iio_device0: iio:device0 polled (instead of buffered: iio:device0 is busy"))
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }

    /// --mount-matrix replaces the discovered matrix (metadata says "override"); --mode polled reads *_raw.
    @Test func mountMatrixOverrideAndPolledMode() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh(node: .file(scans(0..<10))))
            let file = try Motionctl.temporaryPath(name: "polled.csv")
            let result = try await Motionctl.run([
                "record", "--output", file, "--duration", "0.05", "--mode", "polled", "--rate", "100",
                "--mount-matrix=-1, 0, 0; 0, -1, 0; 0, 0, -1",  // '=' since the value starts with '-'

            ])
            #expect(result.status == 0, "\(result.stderr)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("# mount_matrix_accel: -1, 0, 0; 0, -1, 0; 0, 0, -1 (override)\n"))
            #expect(text.contains("iio:device0 polled at 100 Hz, 1 scan per wake-up,"))  // not "1 scans"
            // Raw y = −1024 (sysfs) negated by the override: +0.9999 g.
            let rows = text.split(separator: "\n").filter { $0.first?.isNumber == true }
            #expect(!rows.isEmpty)
            #expect(rows.allSatisfy { $0.hasSuffix(",0,0.999915771440808,0") || $0.hasSuffix(",-0,0.999915771440808,-0") })
            let bad = try await Motionctl.run(["stream", "--device", "auto", "--mount-matrix", "1, 0, 0; 0, 1, 0; 0, 0, 0"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("all-zero row for axis z"))
        }
    }

    /// Per-sensor overrides on a combined IMU (buffered): --gyro-mount-matrix rotates the gyroscope's readings
    /// and nothing else; --accel-mount-matrix (= --mount-matrix) and --mag-mount-matrix do the same for theirs.
    @Test func perSensorMountMatrixOverrides() async throws {
        try await Testbed.run { testbed in
            let encoder = ScanEncoder(channels: (0..<9).map { ($0, "le:s16/16>>0") } + [(9, "le:s64/64>>0")])
            let rows: [[Int64]] = (0..<20).map { i in
                [0, -1024, 0, 100, -200, 300, 10, 20, -30, 1_000_000_000 + Int64(i) * 10_000_000]
            }
            func record(_ options: [String]) async throws -> (TraceMetadata, [MotionSample]) {
                var device = EmulatedDevice.iio(name: "bmi160", number: 0, node: .file(encoder.encode(rows: rows)))
                device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576", scanType: "le:s16/16>>0")
                device.addSensor("anglvel", raw: (100, -200, 300), scale: "0.001", scanType: "le:s16/16>>0", firstIndex: 3)
                device.addSensor("magn", raw: (10, 20, -30), scale: "0.01", scanType: "le:s16/16>>0", firstIndex: 6)
                device.addChannel("timestamp", scan: (9, "le:s64/64>>0"))
                device.set("current_timestamp_clock", "boottime")
                device.set("sampling_frequency", "100")
                device.addBuffer(trigger: nil)
                let path = try testbed.add(device)
                defer { testbed.remove(path) }
                let file = try Motionctl.temporaryPath(name: "imu.csv")
                let result = try await Motionctl.run(
                    ["record", "--device", "bmi160", "--output", file, "--duration", "0.15"] + options)
                #expect(result.status == 0, "\(result.stderr)")
                let reader = try TraceReader(path: file)
                var samples: [MotionSample] = []
                while let sample = try reader.next() { samples.append(sample) }
                return (reader.metadata, samples)
            }
            let close = { (a: SIMD3<Double>?, b: SIMD3<Double>) in a.map { ((($0 - b) * ($0 - b)).sum()).squareRoot() < 1e-12 } ?? false }
            let accel = SIMD3<Double>(0, -1024 * 0.009576, 0) / 9.80665  // g
            let gyro = SIMD3<Double>(100, -200, 300) * 0.001  // rad/s
            let mag = SIMD3<Double>(10, 20, -30) * 0.01 * 100  // µT

            let (plainMetadata, plain) = try await record([])
            #expect(plain.count == 15)
            #expect(plainMetadata["mount_matrix_gyro"] == "1, 0, 0; 0, 1, 0; 0, 0, 1 (default)")
            #expect(plain.allSatisfy { close($0.rotationRate?.vector, gyro) && close($0.acceleration?.vector, accel) })

            // Gyroscope only: corrected = M · raw with a non-symmetric M; the other sensors are untouched.
            let (gyroMetadata, rotated) = try await record(["--gyro-mount-matrix", "0, -1, 0; 1, 0, 0; 0, 0, 1"])
            #expect(rotated.count == 15)
            #expect(gyroMetadata["mount_matrix_gyro"] == "0, -1, 0; 1, 0, 0; 0, 0, 1 (override)")
            #expect(gyroMetadata["mount_matrix_accel"] == "1, 0, 0; 0, 1, 0; 0, 0, 1 (default)")
            #expect(rotated.allSatisfy { close($0.rotationRate?.vector, SIMD3(-gyro.y, gyro.x, gyro.z)) })
            #expect(rotated.allSatisfy { close($0.acceleration?.vector, accel) && close($0.magneticField?.vector, mag) })

            // All three, the accelerometer through the --accel-mount-matrix spelling.
            let (allMetadata, all) = try await record([
                "--accel-mount-matrix=-1, 0, 0; 0, -1, 0; 0, 0, -1", "--gyro-mount-matrix", "0, 0, 1; 0, 1, 0; 1, 0, 0",
                "--mag-mount-matrix", "1, 0, 0; 0, 0, 1; 0, -1, 0",
            ])
            #expect(allMetadata["mount_matrix_mag"] == "1, 0, 0; 0, 0, 1; 0, -1, 0 (override)")
            #expect(all.count == 15)
            #expect(all.allSatisfy { close($0.acceleration?.vector, -accel) })
            #expect(all.allSatisfy { close($0.rotationRate?.vector, SIMD3(gyro.z, gyro.y, gyro.x)) })
            #expect(all.allSatisfy { close($0.magneticField?.vector, SIMD3(mag.x, mag.z, -mag.y)) })

            let bad = try await Motionctl.run(["stream", "--device", "auto", "--gyro-mount-matrix", "1, 0, 0; 0, 0, 0; 0, 0, 1"])
            #expect(bad.status == 64)
            #expect(bad.stderr.contains("--gyro-mount-matrix: "))
        }
    }

    @Test func streamExplainsAMissingDevice() async throws {
        try await Testbed.run { testbed in
            try testbed.add(.lis3dh().bufferOnly)
            let result = try await Motionctl.run(["stream", "--device", "bmi160"])
            #expect(result.status == 69)
            #expect(result.stderr.contains("no device matches \"bmi160\" for accel,gyro,mag"))
            #expect(result.stderr.contains("found iio:device0 (lis3dh)"))
            let usage = try await Motionctl.run(["stream", "--device", "auto", "--trace", "x.csv"])
            #expect(usage.status == 64)
        }
    }

    /// `record` writes the canonical trace with the device's metadata and stops after --duration seconds of
    /// samples; the trace reads back.
    @Test func recordsATraceWithDeviceMetadata() async throws {
        try await Testbed.run { testbed in
            var device = EmulatedDevice.lis3dh(node: .file(scans(0..<100)))
            device.setProperty("ACCEL_MOUNT_MATRIX", "0, -1, 0; 1, 0, 0; 0, 0, 1")
            try testbed.add(device)
            try testbed.add(.lis3dhTrigger)
            let file = try Motionctl.temporaryPath(name: "recording.csv")
            let result = try await Motionctl.run(["record", "--device", "lis3dh", "--output", file, "--duration", "0.195"])
            #expect(result.status == 0, "\(result.stderr)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.contains("# source: motionctl record\n"))
            #expect(text.contains("# device: lis3dh (iio:device0)\n"))
            #expect(text.contains("# clock: boottime\n"))
            #expect(text.contains("# rate_hz: 100\n"))
            #expect(text.contains("# mount_matrix_accel: 0, -1, 0; 1, 0, 0; 0, 0, 1 (udev ACCEL_MOUNT_MATRIX)\n"))
            #expect(text.contains("# scale_accel: 0.009576 (sysfs in_accel_scale)\n"))
            #expect(text.contains("trigger lis3dh-trigger"))
            #expect(text.contains("\nt,ax,ay,az\n1,0.999915771440808,0,0\n"))

            let reader = try TraceReader(path: file)
            var samples: [MotionSample] = []
            while let sample = try reader.next() { samples.append(sample) }
            #expect(samples.count == 20)  // 1.00 … 1.19: the samples less than 0.195 s after the first
            #expect(reader.metadata["mount_matrix_accel"] == "0, -1, 0; 1, 0, 0; 0, 0, 1 (udev ACCEL_MOUNT_MATRIX)")
        }
    }

    /// `stream --device --count N` ends by itself after N rows, `--duration S` after the samples less than S seconds
    /// after the first (device time).
    @Test(arguments: [(["--count", "7"], 7), (["--duration", "0.195"], 20), (["--duration", "0.5", "--count", "3"], 3)])
    func streamStopsAfterCountOrDuration(limit: [String], expected: Int) async throws {
        try await Testbed.run { testbed in
            try testbed.add(EmulatedDevice.lis3dh(node: .file(scans(0..<100))))
            try testbed.add(.lis3dhTrigger)
            let result = try await Motionctl.run(["stream", "--device", "lis3dh", "--format", "jsonl"] + limit)
            #expect(result.status == 0, "\(result.stderr)")
            let samples = sampleLines(result.lines)
            #expect(samples.count == expected)
            #expect(samples.first?.hasPrefix("{\"type\":\"sample\",\"t\":1,") == true)
        }
    }

    /// `orientation --device` prints each settled change of a live accelerometer (through MotionManager); SIGTERM
    /// ends it with status 0 and the buffer disabled.
    @Test func orientationFromALiveDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl(["orientation", "--device", "auto", "--format", "jsonl"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<200))  // y ≈ −1 g for 2 s: upright in portrait
            #expect(try await child.wait { $0.stdout.contains("\"orientation\":\"portrait\"") })
            #expect(try await child.stop(SIGTERM) == 0)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            #expect(child.lines.count == 1)
            #expect(child.lines.first?.hasPrefix("{\"type\":\"orientation\",\"t\":1.") == true)
            #expect(child.lines.first?.hasSuffix("\"orientation\":\"portrait\",\"previous\":\"unknown\"}") == true)

            let missing = try await Motionctl.run(["orientation", "--device", "bmi160"])
            #expect(missing.status == 69)
            #expect(missing.stderr.contains("no device matches \"bmi160\" for accel; found iio:device0 (lis3dh)"))

            let usage = try await Motionctl.run(["orientation", "--device", "auto", "--trace", "x.csv"])
            #expect(usage.status == 64)
            #expect(usage.stderr.contains("Choose one of --trace, --device, --service and --evaluate"))
        }
    }

    /// The event commands take the device options of the one input group: `orientation --device --mount-matrix`
    /// reads the device through the given matrix (x and y swapped: the portrait readings become landscape left).
    @Test func orientationTakesTheDeviceOptions() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl([
                "orientation", "--device", "auto", "--format", "jsonl", "--mount-matrix", "0, 1, 0; 1, 0, 0; 0, 0, 1",
            ])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<200))  // y ≈ −1 g: portrait without the matrix
            #expect(try await child.wait { $0.stdout.contains("\"orientation\":\"landscapeLeft\"") }, "\(child.stdout)")
            #expect(try await child.stop(SIGTERM) == 0)
            #expect(!child.stdout.contains("portrait"))
        }
    }

    /// `steps --device` counts a live accelerometer's steps through MotionManager (the device asked for 25 Hz),
    /// one row per step as they are counted; SIGTERM prints the total and ends with status 0, the buffer disabled.
    @Test func stepsFromALiveDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl(["steps", "--device", "auto", "--format", "jsonl"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            #expect(testbed.attribute(path, "sampling_frequency").flatMap { Double($0) }.map { $0 >= 50 } == true)
            // 20 s of walking at 1.9 steps/s between still seconds, as the device's 100 Hz scans (1024 per g).
            let walk = Array(
                try Simulation(scenario: .walking(duration: 20, cadence: 1.9), options: SimulationOptions(rate: 100, seed: 9)))
            let rows = walk.enumerated().map { i, sample -> [Int64] in
                let a = sample.acceleration!
                return [
                    Int64((a.x * 1024).rounded()), Int64((a.y * 1024).rounded()), Int64((a.z * 1024).rounded()),
                    1_000_000_000 + Int64(i) * 10_000_000,
                ]
            }
            try testbed.feed("/dev/iio:device0", lis3dhScans.encode(rows: rows))
            // At least the 32 steps the range below asks before stopping: lines are flushed at each batch the device
            // delivers, and the signal ends the count at once, whatever the fed scans not yet read.
            #expect(try await child.wait { $0.stdout.components(separatedBy: "\"type\":\"step\"").count > 32 })
            #expect(try await child.stop(SIGTERM) == 0)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            let steps = child.lines.filter { $0.hasPrefix("{\"type\":\"step\"") }
            #expect((32...44).contains(steps.count), "20 s at 1.9 steps/s: \(steps.count)")
            #expect(steps.first?.contains("\"steps\":1,") == true, "\(steps.prefix(1))")
            let total = try #require(child.lines.last)
            #expect(total.hasPrefix("{\"type\":\"total\"") && total.contains("\"steps\":\(steps.count),"), "\(total)")
        }
    }

    /// `attitude --device` fuses a live device's gyroscope and accelerometer through MotionManager: one row per
    /// update, the same values as `attitude --trace` of a recording of the same scans; SIGTERM ends it with status 0
    /// and the buffer disabled.
    @Test func attitudeFromALiveDevice() async throws {
        try await Testbed.run { testbed in
            let encoder = ScanEncoder(channels: (0..<6).map { ($0, "le:s16/16>>0") } + [(6, "le:s64/64>>0")])
            // Upright, turning about z at 0.3 rad/s with a small wobble in x: the attitude changes from row to row.
            let rows: [[Int64]] = (0..<40).map { i in
                [Int64(i % 7) - 3, -1024, 5, 40 + Int64(i % 3), -20, 300, 1_000_000_000 + Int64(i) * 10_000_000]
            }
            func addDevice() throws -> String {
                var device = EmulatedDevice.iio(name: "bmi160", number: 0, node: .pty)
                device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576", scanType: "le:s16/16>>0")
                device.addSensor("anglvel", raw: (0, 0, 0), scale: "0.001", scanType: "le:s16/16>>0", firstIndex: 3)
                device.addChannel("timestamp", scan: (6, "le:s64/64>>0"))
                device.set("current_timestamp_clock", "boottime")
                device.set("sampling_frequency", "100")
                device.addBuffer(trigger: nil)
                return try testbed.add(device.bufferOnly)
            }
            var path = try addDevice()
            let child = try RunningMotionctl(["attitude", "--device", "bmi160", "--format", "jsonl", "--all"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", encoder.encode(rows: rows))
            #expect(try await child.wait { $0.lines.count >= 1 + rows.count })
            #expect(try await child.stop(SIGTERM) == 0, "\(child.stderr)")
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            let live = child.lines.filter { $0.hasPrefix("{\"type\":\"attitude\"") }
            #expect(live.count == rows.count)
            #expect(child.lines.first?.contains("\"generator\"") == true)
            testbed.remove(path)

            // The same scans recorded, then fused from the trace: the rows after its leading identity rows are the
            // live ones.
            path = try addDevice()
            defer { testbed.remove(path) }
            let file = try Motionctl.temporaryPath(name: "imu.csv")
            let recorder = try RunningMotionctl(["record", "--device", "bmi160", "--output", file])
            #expect(try await recorder.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", encoder.encode(rows: rows))
            #expect(try await recorder.wait { _ in
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").filter { $0.first?.isNumber == true }.count == rows.count
            })
            #expect(try await recorder.stop(SIGTERM) == 0, "\(recorder.stderr)")
            let fused = try await Motionctl.run(["attitude", "--trace", file, "--format", "jsonl", "--all"])
            #expect(fused.status == 0, "\(fused.stderr)")
            let fromTrace = fused.lines.filter { $0.hasPrefix("{\"type\":\"attitude\"") }
            #expect(fromTrace == live)

            let usage = try await Motionctl.run(["attitude", "--device", "auto", "--speed", "2"])
            #expect(usage.status == 64)
            #expect(usage.stderr.contains("--speed applies to --trace only, not to --device."))
        }
    }

    /// `orientation --device` (a MotionManager on the device) waits through a removal and resumes with the device
    /// that comes back, saying so on stderr; with --exit-on-disconnect it exits with 69 instead.
    @Test func orientationWaitsForARemovedDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let child = try RunningMotionctl(["orientation", "--device", "auto", "--format", "jsonl"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<200))  // portrait
            #expect(try await child.wait { $0.stdout.contains("\"orientation\":\"portrait\"") })
            testbed.remove(path)
            #expect(try await child.wait { $0.stderr.contains("waiting for a matching device") }, "\(child.stderr)")
            try testbed.add(.lis3dh().bufferOnly)
            #expect(try await child.wait { $0.stderr.contains("motionctl: iio:device0 (lis3dh) connected; resuming") })
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            // Lying face up (z ≈ −1 g), stamped after the first device's scans.
            let rows = (0..<200).map { i -> [Int64] in [0, 0, -1024, 3_000_000_000 + Int64(i) * 10_000_000] }
            try testbed.feed("/dev/iio:device0", lis3dhScans.encode(rows: rows))
            #expect(try await child.wait { $0.stdout.contains("\"orientation\":\"faceUp\"") }, "\(child.stdout)")
            #expect(try await child.stop(SIGTERM) == 0)
            #expect(testbed.attribute(path, "buffer/enable") == "0")

            // The device that came back (same sysfs path) goes away again under --exit-on-disconnect.
            let exiting = try RunningMotionctl(["orientation", "--device", "auto", "--exit-on-disconnect"])
            #expect(try await exiting.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            testbed.remove(path)
            #expect(try await exiting.exitStatus() == 69, "\(exiting.stderr)")
            #expect(exiting.stderr.contains("motionctl: error:"))
            #expect(!exiting.stderr.contains("waiting for a matching device"))

            let usage = try await Motionctl.run(["orientation", "--trace", "x.csv", "--exit-on-disconnect"])
            #expect(usage.status == 64)
            #expect(usage.stderr.contains("--exit-on-disconnect applies to --device only, not to --trace."))
        }
    }

    /// `shake --device` prints began and ended for a 4 Hz, 1.5 g back-and-forth along x on a live device.
    @Test func shakeFromALiveDevice() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let child = try RunningMotionctl(["shake", "--device", "auto"])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            // 1 s still, 0.75 s of shaking (3 periods at 4 Hz, ±1536 LSB = ±1.5 g on x), 1.25 s still; 100 Hz.
            let rows = (0..<300).map { i -> [Int64] in
                let t = Double(i) * 0.01
                let shaking = t >= 1 && t < 1.75
                let x = shaking ? Int64((1536 * sin(2 * Double.pi * 4 * (t - 1))).rounded()) : 0
                return [x, -1024, 0, 1_000_000_000 + Int64(i) * 10_000_000]
            }
            try testbed.feed("/dev/iio:device0", lis3dhScans.encode(rows: rows))
            #expect(try await child.wait { $0.stdout.contains("Shake ended") })
            #expect(try await child.stop(SIGINT) == 0)
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            let events = child.lines
            #expect(events.count == 2)
            #expect(events.first?.contains("Shake began (axis x") == true)
            #expect(events.last?.contains("Shake ended (axis x") == true)
        }
    }

    /// The file is flushed every batch: after `kill -9` it holds whole lines, which read back.
    @Test func recordSurvivesKill9() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            let file = try Motionctl.temporaryPath(name: "killed.csv")
            let child = try RunningMotionctl(["record", "--output", file])
            #expect(try await child.wait { _ in testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<30))
            let rows = { (try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").filter { $0.first?.isNumber == true }.count ?? 0 }
            #expect(try await child.wait { _ in rows() == 30 })
            #expect(try await child.stop(SIGKILL) == SIGKILL)
            let text = try String(contentsOfFile: file, encoding: .utf8)
            #expect(text.hasSuffix("\n"))
            let reader = try TraceReader(path: file)
            var count = 0
            while try reader.next() != nil { count += 1 }
            #expect(count == 30)
        }
    }

    /// EACCES on the device node: the error names the file and the fix, status 77. Runs the child as
    /// `nobody`, so it needs root and setpriv (root itself can open anything).
    @Test(.requires(.root, .setpriv))
    func permissionErrorsNameTheFileAndTheFix() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh())
            // Let `nobody` into the testbed, but not into the node.
            let root = testbed.rootDirectory
            for directory in [root, root + "/dev", root + "/sys"] { chmod(directory, 0o755) }
            let node = root + "/dev/iio:device0"
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: node)
            chmod(target, 0o600)
            defer { chmod(target, 0o620) }
            let child = try RunningMotionctl(
                ["stream", "--device", "auto"],
                launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            let result = (status: try await child.exitStatus(), stderr: child.stderr)
            #expect(result.status == 77, "\(result.stderr)")
            #expect(result.stderr.contains("permission denied to open /dev/iio:device0"))
            #expect(result.stderr.contains("Support/udev/70-swift-motion.rules"))
            #expect(testbed.attribute(path, "buffer/enable") == "0")

            // The same error through a MotionManager (orientation --device): it reaches the subscription.
            let events = try RunningMotionctl(
                ["orientation", "--device", "auto"],
                launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            #expect(try await events.exitStatus() == 77, "\(events.stderr)")
            #expect(events.stderr.contains("permission denied to open /dev/iio:device0"))
            #expect(testbed.attribute(path, "buffer/enable") == "0")
        }
    }
}
