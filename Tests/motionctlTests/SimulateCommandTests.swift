import Foundation
import MotionCore
import MotionTrace
import TestFiles
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
        let dir = URL(fileURLWithPath: try ScratchFolder.folder("simulate"))
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

    /// `--output` is checked before any work: a directory (with or without --overwrite: it used to be written, then
    /// reported "kept" in a .partial file already deleted), a missing folder, stdout with --overwrite. Each fails
    /// at once naming the path, and leaves nothing behind.
    @Test func outputIsCheckedBeforeAnyWork() async throws {
        let folder = (try Motionctl.temporaryPath(name: "x") as NSString).deletingLastPathComponent
        let simulate = ["simulate", "--scenario", "tumbling", "--repeat", "20"]
        for extra in [[], ["--overwrite"]] {
            let result = try await Motionctl.run(simulate + ["--output", folder] + extra)
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("\(folder): --output names a directory; give a file name, such as \(folder)/trace.csv"), "\(result.stderr)")
            #expect(!result.stderr.contains("kept"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        }
        let missing = try await Motionctl.run(simulate + ["--output", folder + "/no/such/trace.csv"])
        #expect(missing.status == 74, "\(missing.stderr)")
        #expect(missing.stderr.contains("the folder \(folder)/no/such/ does not exist"), "\(missing.stderr)")
        let stdout = try await Motionctl.run(simulate + ["--output", "-", "--overwrite"])
        #expect(stdout.status == 64, "\(stdout.stderr)")
        #expect(stdout.stderr.contains("--overwrite applies to a file; --output - is stdout"), "\(stdout.stderr)")
        #expect(stdout.stdout.isEmpty)
    }

    /// A folder this user cannot write: status 77 at once, naming the folder (as uid 65534: root writes anywhere).
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func anUnwritableFolderIsRefusedAtOnce() async throws {
        let folder = (try Motionctl.temporaryPath(name: "x") as NSString).deletingLastPathComponent
        chmod(folder, 0o755)  // root's: others may enter, not create
        let child = try RunningMotionctl(
            ["simulate", "--scenario", "walking", "--output", folder + "/walk.csv"],
            launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        #expect(try await child.exitStatus() == 77, "\(child.stderr)")
        #expect(child.stderr.contains("cannot create files in the folder \(folder)/; choose a folder you can write"), "\(child.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
    }

    /// The format follows the extension unless --format is given; a --format that contradicts it is refused,
    /// naming both.
    @Test func theFormatFollowsTheExtension() async throws {
        let jsonl = try Motionctl.temporaryPath(name: "walk.jsonl")
        let written = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", jsonl])
        #expect(written.status == 0, "\(written.stderr)")
        let text = try String(contentsOfFile: jsonl, encoding: .utf8)
        #expect(text.hasPrefix("{\"type\":\"metadata\""), "\(text.prefix(100))")
        let csv = try Motionctl.temporaryPath(name: "walk.csv")
        let plain = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", csv])
        #expect(try String(contentsOfFile: csv, encoding: .utf8).hasPrefix("#"), "\(plain.stderr)")
        let clash = try Motionctl.temporaryPath(name: "walk.csv")
        let refused = try await Motionctl.run(["simulate", "--scenario", "walking", "--output", clash, "--format", "jsonl"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--format jsonl contradicts the extension of --output \(clash) (csv)"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: clash))
        let recordClash = try await Motionctl.run(["record", "--output", "x.jsonl", "--format", "csv"])
        #expect(recordClash.status == 64)
        #expect(recordClash.stderr.contains("--format csv contradicts the extension of --output x.jsonl (jsonl)"))
    }

    /// `record --output DIR` fails at once, before waiting for a device.
    @Test func recordChecksItsOutputFirst() async throws {
        let folder = (try Motionctl.temporaryPath(name: "x") as NSString).deletingLastPathComponent
        let result = try await Motionctl.run(["record", "--output", folder, "--overwrite"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--output names a directory"))
    }
}
