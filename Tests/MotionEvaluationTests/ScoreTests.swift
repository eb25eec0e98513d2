import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing
import TestThreads

@testable import MotionEvaluation

/// The scoring harnesses count what they say on scenarios whose truth is known.
@Suite(.computeBound) struct ShakeScoreTests {
    static func simulate(_ scenario: Scenario, seed: UInt64 = 1) throws -> Simulation {
        try Simulation(scenario: scenario, options: SimulationOptions(rate: 100, sensors: .accelerometer, seed: seed))
    }

    static func scenario(_ segments: [Segment]) -> Scenario {
        var scenario = Scenario(name: "test", seed: 7, start: .portrait)
        scenario.append(.hold(1))
        for segment in segments {
            scenario.append(segment)
            scenario.append(.hold(1))
        }
        return scenario
    }

    @Test func aShakeWithinTheLimitIsDetectedOnItsAxisAndEnds() throws {
        let scenario = Self.scenario([.shake(axis: .x, frequency: 5, amplitude: 2, duration: 0.6)])
        var score = ShakeScore()
        score.add(scenario: scenario, simulation: try Self.simulate(scenario), configuration: .init())
        #expect(score.scenarios == 1 && score.shakes == 1 && score.detected == 1 && score.falseBegins == 0)
        #expect(score.axisCorrect == 1 && score.ended == 1 && score.outcomeMismatches == 0)
        #expect(score.precision == 1 && score.recall == 1)
        #expect(score.latencyMax > 0 && score.latencyMax < 0.6)
        let report = score.report(title: "shake", settings: "one scenario", verbose: false)
        #expect(report.first == "shake on one scenario")
        #expect(report.contains("shakes 1, detected 1, false began 0"))
    }

    @Test func aLongShakeIsCancelledAsTooLongWithoutAMismatch() throws {
        let scenario = Self.scenario([.shake(axis: .y, frequency: 5, amplitude: 2, duration: 2)])
        var score = ShakeScore()
        score.add(scenario: scenario, simulation: try Self.simulate(scenario), configuration: .init())
        #expect(score.detected == 1 && score.cancelled[.tooLong] == 1 && score.ended == 0)
        #expect(score.outcomeMismatches == 0)
    }

    @Test func aDetectorThatFiresOnWalkingIsChargedWithFalseBegins() throws {
        let scenario = Self.scenario([.walking(duration: 4, cadence: 1.9)])
        var score = ShakeScore()
        var sensitive = ShakeDetector<Double>.Configuration()
        sensitive.threshold = 0.02
        sensitive.minimumLinearity = 0
        sensitive.minimumStrokeBalance = 0
        score.add(scenario: scenario, simulation: try Self.simulate(scenario), configuration: sensitive)
        #expect(score.shakes == 0 && score.detected == 0)
        #expect(score.falseBegins > 0)
        #expect(score.falseByKind["walking", default: 0] > 0)
        #expect(score.precision == 0 && score.recall == 1)
        #expect(score.details.contains { $0.hasPrefix("false began: seed 7") })
    }

    @Test func aMissedShakeIsListed() throws {
        let scenario = Self.scenario([.shake(axis: .z, frequency: 5, amplitude: 2, duration: 0.6)])
        var score = ShakeScore()
        var deaf = ShakeDetector<Double>.Configuration()
        deaf.threshold = 9
        score.add(scenario: scenario, simulation: try Self.simulate(scenario), configuration: deaf)
        #expect(score.shakes == 1 && score.detected == 0 && score.recall == 0)
        #expect(score.details.contains { $0.hasPrefix("missed: seed 7") })
    }
}

@Suite(.computeBound) struct SeismicRuleTests {
    /// seismic's rule: |a| above the threshold in about 75 % of at least 0.25 s of samples, then it starts over.
    @Test func reportsSustainedStrongAccelerationOnly() {
        var rule = SeismicRule(threshold: 13)  // m/s², 1.33 g
        var reports: [Double] = []
        for i in 0..<100 {  // 1 s at 100 Hz of 2 g
            let t = Double(i) / 100
            if rule.update(SIMD3(0, -2, 0), at: t) { reports.append(t) }
        }
        #expect(reports.first == 0.25)
        #expect(reports.count == 3)  // the queue is cleared after each report
        var calm = SeismicRule(threshold: 13)
        #expect((0..<300).allSatisfy { !calm.update(SIMD3(0, -1, 0), at: Double($0) / 100) })
    }
}

@Suite(.computeBound) struct OrientationScoreTests {
    @Test func theSweepHasNoSpuriousChangeNoFlapAndRightHolds() throws {
        let scenario = Scenario.orientationSweep()
        let simulation = try Simulation(
            scenario: scenario, options: SimulationOptions(rate: 100, sensors: .accelerometer, seed: 1))
        var score = OrientationScore()
        score.add(scenario: scenario, simulation: simulation, configuration: .init())
        #expect(score.changes == 6)  // portrait, then the five turns
        #expect(score.spurious == 0 && score.flaps == 0)
        #expect(score.clearHolds > 0 && score.wrongHolds == 0)
        #expect(score.report(settings: "the sweep", verbose: false).first == "orientation on the sweep")
    }

    @Test func aClassifierThatLagsIsWrongAtTheEndOfHolds() throws {
        let scenario = Scenario.orientationSweep()
        let simulation = try Simulation(
            scenario: scenario, options: SimulationOptions(rate: 100, sensors: .accelerometer, seed: 1))
        var score = OrientationScore()
        var slow = OrientationClassifier<Double>.Configuration()
        slow.cutoff = 0.01  // Hz: its gravity lags the 1 s turns by tens of seconds, so holds end stale
        score.add(scenario: scenario, simulation: simulation, configuration: slow)
        #expect(score.wrongHolds > 0)
        #expect(score.details.contains { $0.hasPrefix("wrong at the end of a hold") })
    }

    @Test func aHoldNearABoundaryAcceptsBothNeighbours() {
        var scenario = Scenario(name: "tilted", start: .portrait)
        scenario.append(.tilt(by: 0.75, about: .z, duration: 1))  // 43°: within the dead zone of landscape
        scenario.append(.hold(3))
        let hold = scenario.segments.last!
        let names = OrientationScore.acceptable(hold, hysteresis: 15 * .pi / 180)
        #expect(names?.count == 2)
        #expect(names?.contains("portrait") == true)
    }
}
