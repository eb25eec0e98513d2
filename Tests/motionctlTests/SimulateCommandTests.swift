import Foundation
import MotionCore
import MotionTrace
import Testing

/// `motionctl simulate` end to end.
@Suite struct SimulateCommandTests {
    @Test func sameOptionsGiveTheSameBytes() async throws {
        let arguments = ["simulate", "--scenario", "shakeSequence", "--scenario-seed", "7", "--seed", "3"]
        let first = try await Motionctl.run(arguments)
        let second = try await Motionctl.run(arguments)
        #expect(first.status == 0)
        #expect(!first.stdout.isEmpty && first.stdout == second.stdout)
        let other = try await Motionctl.run(["simulate", "--scenario", "shakeSequence", "--scenario-seed", "7", "--seed", "4"])
        #expect(other.stdout != first.stdout)
    }

    @Test func writesACanonicalTraceTheReaderAccepts() async throws {
        let result = try await Motionctl.run([
            "simulate", "--scenario", "orientationSweep", "--rate", "50", "--sensors", "accel,gyro,mag",
        ])
        #expect(result.status == 0)
        let reader = try TraceReader(bytes: Array(result.stdout.utf8), name: "simulated")
        #expect(reader.sensors == .all)
        #expect(reader.metadata["source"] == "simulate")
        #expect(reader.metadata["scenario"] == "orientationSweep")
        var count = 0
        var first: MotionSample?
        while let sample = try reader.next() {
            if first == nil { first = sample }
            count += 1
        }
        #expect(count == Int(reader.metadata["samples"] ?? "") )
        // The sweep starts upright in portrait: about (0, −1, 0) g.
        let a = try #require(first?.acceleration)
        #expect(abs(a.y + 1) < 0.05 && abs(a.x) < 0.05 && abs(a.z) < 0.05)
    }

    @Test func writesToAFileAndRoundsToTheRequestedDigits() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simulate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let path = dir.appendingPathComponent("walk.csv").path
        let result = try await Motionctl.run(["simulate", "--scenario", "walking", "--digits", "4", "--output", path])
        #expect(result.status == 0 && result.stdout.isEmpty)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let values = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
            .flatMap { $0.split(separator: ",").dropFirst() }
        #expect(!values.isEmpty)
        #expect(values.allSatisfy { $0.filter(\.isNumber).drop { $0 == "0" }.count <= 4 })
    }

    /// An existing --output is kept (status 73, the file as it was) unless --overwrite replaces it.
    @Test func keepsAnExistingFileUnlessAskedToReplaceIt() async throws {
        let path = try Motionctl.temporaryFile("precious\n", name: "walk.csv")
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let refused = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", path])
        #expect(refused.status == 73)
        #expect(refused.stderr.contains("\(path): the file already exists") && refused.stderr.contains("--overwrite"))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious\n")
        let replaced = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", path, "--overwrite"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let reader = try TraceReader(path: path)
        #expect(try reader.next() != nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["walk.csv"])  // no .partial left
    }

    /// `--mag-offset` adds the hard-iron offset to every magnetometer reading, and the metadata says so; the
    /// tumbling scenario is the benchmarks' input.
    @Test func magnetometerOffsetIsAddedToEveryReading() async throws {
        let arguments = ["simulate", "--scenario", "tumbling", "--sensors", "accel,gyro,mag", "--seed", "1"]
        let plain = try await Motionctl.run(arguments)
        let offset = try await Motionctl.run(arguments + ["--mag-offset", "35,-22,48"])
        #expect(plain.status == 0 && offset.status == 0, "\(offset.stderr)")
        let (a, b) = (
            try TraceReader(bytes: Array(plain.stdout.utf8), name: "plain"),
            try TraceReader(bytes: Array(offset.stdout.utf8), name: "offset"))
        #expect(b.metadata["scenario"] == "tumbling" && b.metadata["mag_offset_ut"] == "35.000 -22.000 48.000")
        #expect(a.metadata["mag_offset_ut"] == nil)
        var count = 0
        var worst = 0.0
        while let x = try a.next(), let y = try b.next() {
            let difference = try #require(y.magneticField).vector - (try #require(x.magneticField)).vector
            let error = difference - SIMD3(35, -22, 48)
            worst = max(worst, abs(error.x), abs(error.y), abs(error.z))
            #expect(x.acceleration == y.acceleration && x.rotationRate == y.rotationRate)
            count += 1
        }
        #expect(count == 4200, "42 turns of 1 s at 100 Hz")
        #expect(worst < 1e-6, "\(worst) µT")  // the readings are rounded to 9 significant digits
    }

    @Test func rejectsAMalformedMagnetometerOffset() async throws {
        for value in ["35,-22", "35,-22,x", "35,-22,48,1", "35,,48", "nan,0,0"] {
            let result = try await Motionctl.run(["simulate", "--scenario", "tumbling", "--mag-offset", value])
            #expect(result.status == 64, "\(value)")
            #expect(result.stderr.contains("--mag-offset takes three numbers in µT"), "\(value): \(result.stderr)")
        }
    }

    @Test func rejectsAnUnknownScenario() async throws {
        let result = try await Motionctl.run(["simulate", "--scenario", "juggling"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("orientationSweep"))
    }

    @Test func unwritableOutputIsAnIOError() async throws {
        let result = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", "/nonexistent/dir/x.csv"])
        #expect(result.status == 74)
        #expect(result.stderr.contains("/nonexistent/dir/x.csv"))
    }
}
