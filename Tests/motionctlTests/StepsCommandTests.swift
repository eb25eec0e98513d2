import Foundation
import Motion
import MotionAlgorithms
import MotionStore
import MotionTesting
import TestFiles
import Testing

/// `motionctl steps` and `motionctl activity` end to end on the built binary: simulated walks (the simulator's
/// gait), the shipped non-walking recordings, the output formats and the options' checks.
@Suite struct StepsCommandTests {
    /// A simulated walk: 1 s still, `duration` s walking at `cadence` steps/s, 1 s still.
    static func walk(duration: Double = 20, cadence: Double = 1.9, seed: Int = 1) async throws -> Data {
        let result = try await Motionctl.run([
            "simulate", "--scenario", "walking", "--seed", "\(seed)",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        return Data(result.stdout.utf8)
    }

    @Test func aSimulatedWalkIsCountedStepForStepWithAHeaderAndATotal() async throws {
        let trace = try await Self.walk()
        let result = try await Motionctl.run(["steps", "--trace", "-"], stdin: trace)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.lines
        #expect(lines.first == "event,t,steps,cadence,distance,pace")
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let steps = rows.filter { $0.first == "step" }
        let total = try #require(rows.last)
        #expect(total.first == "total")
        // The scenario walks 20 s at 1.9 steps/s: 38 steps.
        let count = try #require(Int(total[2]))
        #expect(abs(count - 38) <= 1, "\(count) steps")
        #expect(steps.count == count)
        #expect(steps.map { Int($0[2]) } == (1...count).map { Optional($0) })
        // Default steps: 0.415 × 1.70 m at 110 steps/min, proportional to the cadence: each row's distance grows by
        // the step at its cadence (printed to the millimetre).
        var distance = 0.0
        for step in steps {
            let cadence = try #require(Double(step[3]))
            distance += 0.7055 * cadence / (110.0 / 60)
            #expect(abs((Double(step[4]) ?? 0) - distance) < 0.002, "\(step)")
        }
        #expect(abs((Double(total[4]) ?? 0) - distance) < 0.002)
        // Cadence of the simulator's gait.
        #expect(steps.allSatisfy { abs((Double($0[3]) ?? 0) - 1.9) < 0.1 })
    }

    @Test func jsonLinesEndWithTheTotalAndAStepLengthGivesTheDistance() async throws {
        let trace = try await Self.walk()
        let result = try await Motionctl.run(
            ["steps", "--trace", "-", "--format", "jsonl", "--step-length", "0.8"], stdin: trace)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try result.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let total = try #require(objects.last)
        #expect(total["type"] as? String == "total")
        let count = try #require(total["steps"] as? Double)
        #expect(abs(count - 38) <= 1)
        #expect(abs((total["distance"] as? Double ?? 0) - count * 0.8) < 1e-9)
        #expect(objects.dropLast().allSatisfy { $0["type"] as? String == "step" && $0["pace"] is Double })
    }

    @Test func aRecordedHistoryPipedIntoStepsIsCountedAsTheLibrarysQuery() async throws {
        // The simulated walk recorded as motiond --history keeps it (the accelerometer at 50 Hz), then
        // `motionctl history --store DIR | motionctl steps --trace -` (Docs/Pedometer.md).
        let directory = ScratchFolder.path("steps-history")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let samples = Array(try Simulation(scenario: .walking(), options: SimulationOptions(rate: 100, seed: 1)))
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
        try await manager.record(into: store)
        try store.close()
        let history = try await Motionctl.run(["history", "--store", directory])
        #expect(history.status == 0, "\(history.stderr)")
        let steps = try await Motionctl.run(["steps", "--trace", "-"], stdin: Data(history.stdout.utf8))
        #expect(steps.status == 0, "\(steps.stderr)")
        let total = try #require(steps.lines.last?.split(separator: ",", omittingEmptySubsequences: false))
        #expect(total.first == "total")
        let count = try #require(Int(total[2]))
        #expect(abs(count - 38) <= 2, "20 s at 1.9 steps/s, recorded at 50 Hz: \(count)")
        let queried = try await MotionHistory(directory: directory).pedometerData(
            from: 1_700_000_000, to: 1_700_000_030)
        #expect(queried.numberOfSteps == count)
        // Step times in Unix seconds, within the walk.
        let firstRow = try #require(steps.lines.dropFirst().first?.split(separator: ","))
        let first = try #require(Double(firstRow[1]))
        #expect(first > 1_700_000_000 && first < 1_700_000_012, "\(first)")
    }

    @Test(arguments: [
        "Recordings/broad-slow-rotation-excerpt.csv", "Recordings/simulated-orientation-sweep.csv",
        "Recordings/simulated-shakes-with-distractors.csv",
    ])
    func theShippedNonWalkingRecordingsHaveNoSteps(path: String) async throws {
        let result = try await Motionctl.run(["steps", "--trace", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines == ["event,t,steps,cadence,distance,pace", result.lines.last ?? ""])
        #expect(result.lines.last?.split(separator: ",").dropFirst(2).first == "0")
    }

    @Test func theSettingsFileGivesTheStepLengthAndAFlagOverridesIt() async throws {
        let trace = try await Self.walk()
        let home = try Motionctl.configHome("pedometer.stepLength = 0.9\n")
        // The setting is a fixed step; --height 2 gives 0.83 m at 110 steps/min, proportional to the walk's
        // 1.9 steps/s.
        for (options, stepLength) in [([String](), 0.9), (["--height", "2"], 0.83 * 1.9 / (110.0 / 60))] {
            let result = try await Motionctl.run(
                ["steps", "--trace", "-", "--format", "jsonl"] + options, stdin: trace, environment: ["XDG_CONFIG_HOME": home])
            #expect(result.status == 0, "\(result.stderr)")
            let total = try #require(
                try result.lines.last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
            let count = try #require(total["steps"] as? Double)
            #expect(count > 30)
            let tolerance = options.isEmpty ? 1e-6 : 0.02 * count * stepLength
            #expect(abs((total["distance"] as? Double ?? 0) - count * stepLength) < tolerance, "\(options): \(total)")
        }
    }

    @Test func activityOfASimulatedWalkIsWalking() async throws {
        let trace = try await Self.walk()
        let result = try await Motionctl.run(["activity", "--trace", "-", "--format", "jsonl"], stdin: trace)
        #expect(result.status == 0, "\(result.stderr)")
        let objects = try result.lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["activity"] as? String } == ["walking"])
        #expect(objects.first?["confidence"] as? String == "high")
    }

    @Test func theShakeRecordingIsNeverWalking() async throws {
        let result = try await Motionctl.run(["activity", "--trace", "Recordings/simulated-shakes-with-distractors.csv"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!result.stdout.contains("walking") && !result.stdout.contains("running"), "\(result.stdout)")
    }

    @Test(arguments: [
        ["--height", "3"], ["--height", "1.8", "--step-length", "0.7"], ["--step-length", "4"], ["--format", "text"],
    ])
    func badOptionsAreUsageErrors(options: [String]) async throws {
        let result = try await Motionctl.run(["steps", "--trace", "Recordings/simulated-orientation-sweep.csv"] + options)
        #expect(result.status == 64, "\(options): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func aTraceWithoutAnAccelerometerIsAUsageError() async throws {
        let path = try Motionctl.temporaryFile("t,gx,gy,gz\n0,0,0,0\n0.01,0,0,0\n")
        let result = try await Motionctl.run(["steps", "--trace", path])
        #expect(result.status == 64, "\(result.stderr)")
    }
}
