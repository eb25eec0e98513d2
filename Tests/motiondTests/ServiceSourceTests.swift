import Foundation
import IIOTestbed
import Motion
import MotionAlgorithms
import MotionClient
import MotionCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `MotionSource.service()` and `motionctl … --service`: the service's samples through the same engine as a
/// device's, so the same API and outputs.
@Suite("Reading through the service", .serialized, .requires(.umockdevPreload, .dbusClients))
struct ServiceSourceTests {
    /// The built `motionctl`, beside motiond.
    static let motionctl = URL(fileURLWithPath: ServiceFixture.executable).deletingLastPathComponent()
        .appendingPathComponent("motionctl").path

    @Test("A MotionManager on the service: readings at its interval, equal to the device's, and orientation events")
    func managerOnTheService() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            let manager = try MotionManager(source: .service(busAddress: fixture.bus.address))
            #expect(manager.isAccelerometerAvailable && !manager.isGyroAvailable)
            var readings: [AccelerometerData] = []
            for try await data in manager.accelerometerUpdates(interval: 0.05) {
                readings.append(data)
                if readings.count == 20 { break }
            }
            // The lis3dh's scans: y = −1024 × 0.009576 m/s² = −0.99991577 g, exactly as read from the device.
            #expect(readings.allSatisfy { $0.acceleration.y == -1024 * 0.009576 / 9.80665 && $0.acceleration.x == 0 })
            let steps = zip(readings.dropFirst(), readings).map { $0.timestamp - $1.timestamp }
            #expect(steps.allSatisfy { abs($0 - 0.05) < 1e-9 }, "\(steps)")
            var orientation: DeviceOrientation?
            for try await change in manager.deviceOrientationChanges() {
                orientation = change.orientation
                break
            }
            #expect(orientation == .portrait)
            await manager.stopAllUpdates()
            #expect(await eventually { service.text.contains("ended: the client closed its end") || service.text.contains("ended: the client left the bus") }, "\(service.text)")
        }
    }

    @Test("motionctl stream --service and orientation --service print the device's samples, exactly, and its orientation")
    func commandsOnTheService() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            let stream = try fixture.bus.start(Self.motionctl, ["stream", "--service", "--interval", "0.1", "--format", "jsonl"])
            defer { stream.stop() }
            let orientation = try fixture.bus.start(Self.motionctl, ["orientation", "--service", "--format", "jsonl"])
            defer { orientation.stop() }
            #expect(try await stream.wait(timeout: 20) { $0.components(separatedBy: "\"type\":\"sample\"").count > 10 }, "\(stream.text)")
            #expect(stream.text.contains("{\"type\":\"sample\",\"t\":"))
            #expect(stream.text.contains("\"ay\":-0.999915771440808"), "\(stream.text.prefix(600))")
            #expect(try await orientation.wait(timeout: 20) { $0.contains("\"orientation\":\"portrait\"") }, "\(orientation.text)")
            stream.send(SIGINT)
            #expect(try await stream.waitForExit(timeout: 10) == 0, "\(stream.text.suffix(300))")
        }
    }

    /// `command` as uid 65534 with no groups: outside the high-rate group, as a desktop user is.
    static func asNobody(_ command: [String]) -> [String] {
        ["--reuid=65534", "--regid=65534", "--clear-groups", Self.motionctl] + command
    }

    /// The `t` of each `{"type":"sample",…}` line.
    static func sampleTimes(_ text: String) -> [Double] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{\"type\":\"sample\",\"t\":") else { return nil }
            return Double(line.dropFirst(21).prefix { $0 != "," })
        }
    }

    @Test(
        "Given no interval, --service commands ask what they need: a user outside the high-rate group is served",
        .requires(.setpriv))
    func unprivilegedDefaults() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)  // 100 Hz of 1…400 Hz
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            // stream first, while the device runs at its 100 Hz: that needs the right, so it says so and reads 25 Hz, one sample per 0.04 s.
            let stream = try fixture.bus.start(
                "/usr/bin/setpriv", Self.asNobody(["stream", "--service", "--format", "jsonl"]))
            defer { stream.stop() }
            #expect(try await stream.wait(timeout: 20) { Self.sampleTimes($0).count > 10 }, "\(stream.text)")
            #expect(stream.text.contains(
                "motionctl: note: the device runs at 100 Hz, faster than the 25 Hz the motion service gives without "
                    + "its high-rate right (the group motion, Docs/Service.md); reading at 25 Hz (--interval chooses "
                    + "another rate)\n"), "\(stream.text)")
            let times = Self.sampleTimes(stream.text)
            let steps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(steps.allSatisfy { abs($0 - 0.04) < 1e-6 }, "\(steps)")
            stream.send(SIGINT)
            #expect(try await stream.waitForExit(timeout: 10) == 0, "\(stream.text.suffix(300))")
            // orientation asks 25 Hz (it used to ask 0.0005 s and be refused).
            let orientation = try fixture.bus.start(
                "/usr/bin/setpriv", Self.asNobody(["orientation", "--service", "--format", "jsonl"]))
            defer { orientation.stop() }
            #expect(try await orientation.wait(timeout: 20) { $0.contains("\"orientation\":\"portrait\"") }, "\(orientation.text)")
            orientation.send(SIGINT)
            #expect(try await orientation.waitForExit(timeout: 10) == 0, "\(orientation.text)")
            // shake needs 50 Hz, which the service refuses this user: status 77, and why.
            let shake = try await fixture.bus.run("/usr/bin/setpriv", Self.asNobody(["shake", "--service"]), timeout: 20)
            #expect(shake.status == 77, "\(shake.output)")
            #expect(shake.output.contains("motionctl: error: shake needs 50 Hz, the slowest rate the detector is validated at"), "\(shake.output)")
            #expect(shake.output.contains("group 'motion'"), "\(shake.output)")
            // activity (and steps) ask 50 Hz, where they are most accurate; refused that, they say so and read 25 Hz,
            // the slowest rate they are validated at: this user is served.
            let activity = try fixture.bus.start(
                "/usr/bin/setpriv", Self.asNobody(["activity", "--service", "--format", "jsonl"]))
            defer { activity.stop() }
            #expect(try await activity.wait(timeout: 30) { $0.contains("\"activity\":\"stationary\"") }, "\(activity.text)")
            #expect(activity.text.contains(
                "motionctl: note: steps and activity are most accurate from 50 Hz, faster than the 25 Hz the motion "
                    + "service gives without its high-rate right"), "\(activity.text)")
            activity.send(SIGINT)
            #expect(try await activity.waitForExit(timeout: 10) == 0, "\(activity.text)")
        }
    }

    @Test("Given no interval, root's --service commands leave the shared device at the rate they need, not its highest")
    func rootDoesNotRaiseTheRate() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)  // 100 Hz of 1…400 Hz
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            // stream: every sample at the device's current 100 Hz (it used to raise the device to 400 Hz).
            let stream = try fixture.bus.start(Self.motionctl, ["stream", "--service", "--format", "jsonl"])
            defer { stream.stop() }
            #expect(try await stream.wait(timeout: 20) { Self.sampleTimes($0).count > 30 }, "\(stream.text)")
            #expect(testbed.attribute(fixture.accelerometer, "sampling_frequency") == "100")
            let times = Self.sampleTimes(stream.text)
            let steps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(steps.allSatisfy { abs($0 - 0.01) < 1e-6 }, "\(steps)")
            stream.send(SIGINT)
            #expect(try await stream.waitForExit(timeout: 10) == 0, "\(stream.text.suffix(300))")
            // orientation alone: 25 Hz.
            let orientation = try fixture.bus.start(Self.motionctl, ["orientation", "--service", "--format", "jsonl"])
            defer { orientation.stop() }
            #expect(try await orientation.wait(timeout: 20) { $0.contains("\"orientation\":\"portrait\"") }, "\(orientation.text)")
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "sampling_frequency") == "25" })
            // steps with it: 50 Hz, where the pedometer is most accurate (root has the high-rate right, so no note);
            // back to 25 Hz when steps ends.
            let pedometer = try fixture.bus.start(Self.motionctl, ["steps", "--service"])
            defer { pedometer.stop() }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "sampling_frequency") == "50" })
            pedometer.send(SIGINT)
            #expect(try await pedometer.waitForExit(timeout: 10) == 0, "\(pedometer.text)")
            #expect(!pedometer.text.contains("note:"), "\(pedometer.text)")
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "sampling_frequency") == "25" })
            // shake alone: 50 Hz.
            orientation.send(SIGINT)
            #expect(try await orientation.waitForExit(timeout: 10) == 0)
            let shake = try fixture.bus.start(Self.motionctl, ["shake", "--service"])
            defer { shake.stop() }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "sampling_frequency") == "50" })
            shake.send(SIGINT)
            #expect(try await shake.waitForExit(timeout: 10) == 0, "\(shake.text)")
        }
    }

    @Test("--service without a running service: status 69 and a message that says to start it")
    func noService() async throws {
        let bus = try await PrivateSystemBus()
        defer { bus.stop() }
        for command in [["stream", "--service"], ["attitude", "--service"], ["shake", "--service"]] {
            let result = try await bus.run(Self.motionctl, command, timeout: 20)
            #expect(result.status == 69, "\(command): \(result.output)")
            #expect(result.output.contains("the motion service is not running"), "\(command): \(result.output)")
        }
    }

    @Test("A stream's client killed with SIGKILL: its stream ends, and the device stops once the last one goes")
    func killedStreamClient() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            let first = try fixture.bus.start(Self.motionctl, ["stream", "--service", "--interval", "0.1"])
            defer { first.stop() }
            let second = try fixture.bus.start(Self.motionctl, ["stream", "--service", "--interval", "0.2"])
            defer { second.stop() }
            #expect(try await first.wait(timeout: 20) { $0.split(separator: "\n").count > 10 }, "\(first.text)")
            #expect(try await second.wait(timeout: 20) { $0.split(separator: "\n").count > 10 }, "\(second.text)")
            first.send(SIGKILL)
            #expect(await eventually { service.text.components(separatedBy: "ended: the client").count == 2 }, "\(service.text)")
            // The device serves the other client (reopened at its slower rate: the buffer may be off a moment).
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            let before = second.text.count
            #expect(try await second.wait(timeout: 20) { $0.count > before + 100 })
            second.send(SIGKILL)
            #expect(await eventually { service.text.components(separatedBy: "ended: the client").count == 3 }, "\(service.text)")
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "0" })
        }
    }

    @Test("attitude and stream --sensors on an accelerometer-only service end at once, naming the gyroscope it lacks")
    func attitudeNamesTheMissingGyroscope() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let attitude = try await fixture.bus.run(Self.motionctl, ["attitude", "--service"], timeout: 20)
            #expect(attitude.status == 69, "\(attitude.output)")
            #expect(
                attitude.output.contains(
                    "device motion in the arbitrary frame cannot be delivered: the motion service has no gyro (it has accel)"),
                "\(attitude.output)")
            // `stream --sensors` naming it is a usage error, as on a device (it used to stream the accelerometer alone).
            let stream = try await fixture.bus.run(
                Self.motionctl, ["stream", "--service", "--sensors", "accel,gyro"], timeout: 20)
            #expect(stream.status == 64, "\(stream.output)")
            #expect(
                stream.output.contains(
                    "--sensors asks for gyro, which the motion service does not have: it has accel; choose --sensors among those"),
                "\(stream.output)")
        }
    }

    @Test("stream --service --count and --duration end the command by themselves after that many rows or seconds")
    func streamLimitsOnTheService() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            for (limit, expected) in [(["--count", "7"], 7), (["--duration", "0.5"], 5)] {
                let stream = try fixture.bus.start(
                    Self.motionctl, ["stream", "--service", "--interval", "0.1", "--format", "jsonl"] + limit)
                defer { stream.stop() }
                #expect(try await stream.waitForExit(timeout: 20) == 0, "\(limit): \(stream.text.suffix(300))")
                // At 0.1 s intervals, 0.5 s from the first sample holds the samples at +0, +0.1, … +0.4 s.
                let samples = stream.text.components(separatedBy: "\"type\":\"sample\"").count - 1
                #expect(samples == expected, "\(limit): \(stream.text.suffix(600))")
            }
        }
    }
}
