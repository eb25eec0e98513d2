import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionTrace
import Testing

/// `motionctl stream`, `attitude`, `shake` and `orientation` on a trace print what a `MotionManager` delivers for the
/// same trace and settings, value for value (both run `MotionProcessor`): on the shipped recordings, on simulated
/// traces, and on a trace that ends during a shake.
@Suite struct CommandManagerParityTests {
    /// One JSON Lines row of any of the four commands.
    struct Row: Decodable {
        var type: String
        var t: Double?
        var ax: Double?, ay: Double?, az: Double?
        var gx: Double?, gy: Double?, gz: Double?
        var mx: Double?, my: Double?, mz: Double?
        var qw: Double?, qx: Double?, qy: Double?, qz: Double?
        var heading: Double?
        var phase: String?, reason: String?, axis: String?
        var start: Double?, strokes: Double?, peak: Double?
        var orientation: String?, previous: String?
    }

    static func rows(_ arguments: [String]) async throws -> [Row] {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        let decoder = JSONDecoder()
        return try result.lines.map { try decoder.decode(Row.self, from: Data($0.utf8)) }.filter { $0.type != "metadata" }
    }

    static func manager(_ path: String, _ configuration: MotionConfiguration = .init()) throws -> MotionManager {
        try MotionManager(
            source: .trace(
                path.hasPrefix("/") ? path : Motionctl.packageRoot.appendingPathComponent(path).path,
                pacing: .asFastAsConsumed),
            configuration: configuration)
    }

    static func simulated(_ arguments: [String]) async throws -> String {
        let path = try Motionctl.temporaryPath(name: "simulated.csv")
        let result = try await Motionctl.run(["simulate", "--output", path, "--overwrite"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return path
    }

    static let sensorTraces = [
        "Recordings/broad-slow-rotation-excerpt.csv", "Recordings/simulated-shakes-with-distractors.csv",
    ]

    @Test(arguments: sensorTraces)
    func streamEqualsTheManagersReadings(trace: String) async throws {
        try await streamParity(trace)
    }

    @Test func streamEqualsTheManagersReadingsOnASimulatedTrace() async throws {
        let path = try await Self.simulated(["--scenario", "random", "--scenario-seed", "5", "--sensors", "accel,gyro,mag"])
        try await streamParity(path)
    }

    func streamParity(_ trace: String) async throws {
        let rows = try await Self.rows([
            "stream", "--trace", trace, "--speed", "max", "--format", "jsonl", "--interval", "0.02", "--low-pass", "0.2",
        ])
        let manager = try Self.manager(trace, MotionConfiguration(sensorFilter: .lowPass(.factor(0.2))))
        var delivered: [[Double]] = []
        for try await data in manager.accelerometerUpdates(interval: 0.02) {
            delivered.append([data.timestamp, data.acceleration.x, data.acceleration.y, data.acceleration.z])
        }
        let printed = rows.compactMap { row in row.ax.map { [row.t!, $0, row.ay!, row.az!] } }
        #expect(!printed.isEmpty)
        #expect(printed == delivered)
        var rotation: [[Double]] = []
        for try await data in try Self.manager(trace, MotionConfiguration(sensorFilter: .lowPass(.factor(0.2))))
            .gyroUpdates(interval: 0.02)
        {
            rotation.append([data.timestamp, data.rotationRate.x, data.rotationRate.y, data.rotationRate.z])
        }
        #expect(rows.compactMap { row in row.gx.map { [row.t!, $0, row.gy!, row.gz!] } } == rotation)
    }

    @Test(arguments: [
        ("Recordings/broad-slow-rotation-excerpt.csv", AttitudeReferenceFrame.xMagneticNorthZVertical),
        ("Recordings/broad-slow-rotation-excerpt.csv", .xArbitraryZVertical),
        ("Recordings/simulated-shakes-with-distractors.csv", .xArbitraryZVertical),
    ])
    func attitudeEqualsTheManagersDeviceMotion(trace: String, frame: AttitudeReferenceFrame) async throws {
        try await attitudeParity(trace, frame)
    }

    @Test func attitudeEqualsTheManagersDeviceMotionOnASimulatedTrace() async throws {
        let path = try await Self.simulated(["--scenario", "random", "--scenario-seed", "6", "--sensors", "accel,gyro,mag"])
        try await attitudeParity(path, .xTrueNorthZVertical, declination: 12.5)
    }

    func attitudeParity(_ trace: String, _ frame: AttitudeReferenceFrame, declination: Double = 0) async throws {
        let rows = try await Self.rows([
            "attitude", "--trace", trace, "--format", "jsonl", "--all", "--frame", frame.rawValue,
            "--declination", "\(declination)", "--predict", "0.01",
        ])
        let manager = try Self.manager(
            trace, MotionConfiguration(magneticDeclination: declination, predictionInterval: 0.01))
        var delivered: [[Double]] = []
        for try await motion in manager.deviceMotionUpdates(using: frame, interval: 0) {
            let q = motion.attitude.quaternion
            delivered.append([motion.timestamp, q.w, q.x, q.y, q.z, motion.heading])
        }
        // One row per input row; the rows before both the gyroscope and the accelerometer have reported carry the
        // identity, and the manager delivers nothing for them.
        #expect(delivered.count > 1000)
        #expect(rows.count >= delivered.count)
        let printed = rows.suffix(delivered.count).map { [$0.t!, $0.qw!, $0.qx!, $0.qy!, $0.qz!, $0.heading!] }
        #expect(printed == delivered)
    }

    @Test(arguments: ["Recordings/simulated-shakes-with-distractors.csv", "Recordings/broad-slow-rotation-excerpt.csv"])
    func shakeEqualsTheManagersShakeEvents(trace: String) async throws {
        let printed = try await shakeParity(trace)
        if trace.contains("shakes") { #expect(printed.count >= 4) }
    }

    /// A trace cut during a shake: both cancel it as `interrupted` at the last reading.
    @Test func aTraceThatEndsDuringAShakeCancelsItInBoth() async throws {
        let path = try await Self.simulated(["--scenario", "shakeSequence", "--scenario-seed", "4"])
        let shakes = try await Self.rows(["shake", "--trace", path, "--speed", "max", "--format", "jsonl"])
        let began = try #require(shakes.first { $0.phase == "began" }?.t)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        let cut = lines.filter { line in line.hasPrefix("#") || line.hasPrefix("t,") || Double(line.prefix { $0 != "," })! <= began + 0.05 }
        let cutPath = try Motionctl.temporaryFile(cut.joined(separator: "\n") + "\n", name: "cut.csv")
        let printed = try await shakeParity(cutPath)
        #expect(printed.last?.phase == "cancelled")
        #expect(printed.last?.reason == "interrupted")
    }

    @discardableResult
    func shakeParity(_ trace: String) async throws -> [Row] {
        let rows = try await Self.rows(["shake", "--trace", trace, "--speed", "max", "--format", "jsonl"])
        var delivered: [ShakeEvent] = []
        for try await event in try Self.manager(trace).shakeEvents() { delivered.append(event) }
        #expect(rows.count == delivered.count)
        for (row, event) in zip(rows, delivered) {
            var reason: String?
            if case .cancelled(let why) = event.phase { reason = why.rawValue }
            #expect(row.t == event.timestamp && row.phase == event.phase.name && row.reason == reason)
            #expect(row.axis == event.axis.rawValue && row.start == event.startTime)
            #expect(row.strokes == Double(event.strokes) && row.peak == event.peakAcceleration)
        }
        return rows
    }

    @Test(arguments: ["Recordings/simulated-orientation-sweep.csv", "Recordings/simulated-shakes-with-distractors.csv"])
    func orientationEqualsTheManagersChanges(trace: String) async throws {
        let rows = try await Self.rows(["orientation", "--trace", trace, "--speed", "max", "--format", "jsonl"])
        var delivered: [DeviceOrientationChange] = []
        for try await change in try Self.manager(trace).deviceOrientationChanges() where change.orientationChanged {
            delivered.append(change)
        }
        #expect(rows.count >= (trace.contains("sweep") ? 3 : 1))
        #expect(rows.map { [$0.t!] } == delivered.map { [$0.timestamp] })
        #expect(rows.map { [$0.orientation!, $0.previous!] }
            == delivered.map { [$0.orientation.description, $0.previousOrientation.description] })
    }
}
