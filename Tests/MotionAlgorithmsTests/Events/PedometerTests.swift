import Testing
import TestThreads

@testable import MotionAlgorithms

/// The step-length model and `Pedometer`'s distance, cadence and pace.
@Suite struct PedometerTests {
    @Test func theDefaultStepIsTheHeightRatioTimesTheDefaultHeight() {
        #expect(abs(StepLengthModel.default.stepLength - 0.415 * 1.70) < 1e-12)
        #expect(abs(StepLengthModel.height(1.82).stepLength - 0.415 * 1.82) < 1e-12)
        #expect(abs(StepLengthModel.height(1.6, ratio: 0.413).stepLength - 0.6608) < 1e-12)
    }

    @Test func calibrationDividesTheDistanceByTheSteps() {
        #expect(abs(StepLengthModel.calibrated(distance: 100, steps: 128).stepLength - 0.78125) < 1e-12)
    }

    @Test func distanceCadenceAndPaceFollowTheModel() {
        let gait = GaitSignal(steps: 100, cadence: 2, amplitude: 0.25, variation: 0, asymmetry: 0, seed: 40)
        var pedometer = Pedometer<Double>(stepLength: .init(stepLength: 0.8))
        var last: PedometerData?
        for (t, a) in readings(gait.reading, at: sampleTimes(from: 0, to: gait.end - 0.2, rate: 100), noise: 0.003) {
            if pedometer.update(a, at: t) > 0 { last = pedometer.data }
        }
        let data = try! #require(last)
        #expect(abs(data.numberOfSteps - 100) <= 1)
        #expect(abs(data.distance - Double(data.numberOfSteps) * 0.8) < 1e-9)
        let cadence = try! #require(data.currentCadence)
        #expect(abs(cadence - 2) < 0.05)
        // 2 steps/s of 0.8 m: 1.6 m/s, a pace of 0.625 s/m.
        #expect(abs(try! #require(data.currentPace) - 1 / (0.8 * cadence)) < 1e-12)
        #expect(data.startTime.map { abs($0 - gait.stepTimes[0]) < 0.25 } == true)
    }

    @Test func noStepsNoFigures() {
        var pedometer = Pedometer<Double>()
        for i in 0..<1000 { pedometer.update(SIMD3(0, 0, -1), at: Double(i) / 100) }
        let data = pedometer.data
        #expect(data.numberOfSteps == 0 && data.distance == 0 && data.startTime == nil)
        #expect(data.currentCadence == nil && data.currentPace == nil)
    }
}
