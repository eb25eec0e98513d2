import MotionCore
import MotionTesting
import Testing
import TestThreads

@testable import MotionAlgorithms

/// `StepDetector` on the simulator's scenarios (`MotionTesting`): its gait counted in every carrying orientation,
/// and no step outside a gait segment in the labelled random scenarios (shakes, taps, vibrations, tilts, turns,
/// set-downs between short walks and runs).
@Suite(.computeBound) struct StepSimulationTests {
    static func steps(_ scenario: Scenario, seed: UInt64, rate: Double = 100) throws -> [Double] {
        let options = SimulationOptions(rate: rate, sensors: .accelerometer, seed: seed, accelerometerNoise: 0.005)
        var detector = StepDetector<Double>()
        var times: [Double] = []
        for sample in try Simulation(scenario: scenario, options: options) {
            guard let a = sample.acceleration?.vector else { continue }
            let n = detector.update(a, at: sample.timestamp)
            for i in 0..<n { times.append(detector.newStepTime(i)) }
        }
        return times
    }

    @Test(arguments: [NamedOrientation.portrait, .landscapeLeft, .faceUp, .faceDown])
    func theSimulatorsWalkIsCountedInEveryOrientation(orientation: NamedOrientation) throws {
        for cadence in [1.6, 1.9, 2.2] {
            let scenario = Scenario.walking(duration: 30, cadence: cadence, orientation: orientation)
            let count = try Self.steps(scenario, seed: 3).count
            let expected = Int((30 * cadence).rounded())
            #expect(abs(count - expected) <= 1, "\(orientation), \(cadence) steps/s: \(count) of \(expected)")
        }
    }

    @Test func noStepOutsideAGaitInRandomScenarios() throws {
        var stepsInGaits = 0
        for seed: UInt64 in 1000..<1040 {
            let scenario = Scenario.random(seed: seed)
            let gaits = scenario.segments.filter { $0.kind == "walking" || $0.kind == "running" }
            let times = try Self.steps(scenario, seed: seed)
            // A counted step lies in a gait segment (give or take the smoothing's delay).
            let outside = times.filter { t in !gaits.contains { t >= $0.start - 0.1 && t <= $0.end + 0.3 } }
            #expect(outside.isEmpty, "seed \(seed): steps at \(outside) outside \(gaits.map { ($0.start, $0.end) })")
            stepsInGaits += times.count
        }
        // The walks and runs of these scenarios are 3–8 s long: some hold 10 regular steps and are counted.
        #expect(stepsInGaits > 0)
    }

    @Test(arguments: ["tumbling", "orientationSweep", "shakeSequence"])
    func scenariosWithoutALongWalkHaveNoSteps(name: String) throws {
        for seed: UInt64 in 1...3 {
            let scenario = try #require(Scenario.named(name, seed: seed))
            #expect(try Self.steps(scenario, seed: seed).isEmpty, "\(name) seed \(seed)")
        }
    }
}
