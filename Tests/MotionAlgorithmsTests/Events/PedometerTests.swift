import Testing
import TestThreads

@testable import MotionAlgorithms

/// The step-length model and `Pedometer`'s distance, cadence and pace.
@Suite struct PedometerTests {
    @Test func theDefaultStepIsTheHeightRatioTimesTheDefaultHeightAt110StepsAMinute() {
        let model = StepLengthModel.default
        #expect(abs(model.stepLength - 0.415 * 1.70) < 1e-12)
        #expect(model.referenceCadence == 110.0 / 60)
        #expect(abs(model.stepLength(atCadence: 110.0 / 60) - 0.7055) < 1e-12)
        #expect(abs(StepLengthModel.height(1.82).stepLength - 0.415 * 1.82) < 1e-12)
        #expect(abs(StepLengthModel.height(1.6, ratio: 0.413).stepLength - 0.6608) < 1e-12)
        #expect(
            StepLengthModel.height(1.82).description == "0.755 m per step at 1.833 steps/s, proportional to cadence")
    }

    @Test func aStepIsProportionalToTheCadenceUnlessTheModelIsFixed() {
        // A constant walk ratio: 90 steps/min gives 90/110 of the step at 110 steps/min, 150 steps/min 150/110.
        let model = StepLengthModel.height(1.70)
        #expect(abs(model.stepLength(atCadence: 1.5) - 0.7055 * 90 / 110) < 1e-12)
        #expect(abs(model.stepLength(atCadence: 2.5) - 0.7055 * 150 / 110) < 1e-12)
        // No stride measured yet: the reference step.
        #expect(model.stepLength(atCadence: 0) == model.stepLength)
        #expect(model.stepLength(atCadence: .nan) == model.stepLength)
        let fixed = StepLengthModel(stepLength: 0.8)
        #expect(fixed.referenceCadence == nil && fixed.description == "0.8 m per step")
        #expect(fixed.stepLength(atCadence: 1.5) == 0.8 && fixed.stepLength(atCadence: 2.5) == 0.8)
    }

    @Test func calibrationDividesTheDistanceByTheSteps() {
        let fixed = StepLengthModel.calibrated(distance: 100, steps: 128)
        #expect(abs(fixed.stepLength - 0.78125) < 1e-12 && fixed.referenceCadence == nil)
        // Walked at 1.6 steps/s: 0.78125 m at 1.6 steps/s, 0.9765625 m at 2.
        let proportional = StepLengthModel.calibrated(distance: 100, steps: 128, cadence: 1.6)
        #expect(abs(proportional.stepLength(atCadence: 1.6) - 0.78125) < 1e-12)
        #expect(abs(proportional.stepLength(atCadence: 2) - 0.9765625) < 1e-12)
    }

    /// The distance of a simulated walk at `cadence` steps/s with `model`, per counted step, and the last figures.
    func walk(cadence: Double, model: StepLengthModel) throws -> (perStep: Double, data: PedometerData) {
        let gait = GaitSignal(steps: 60, cadence: cadence, amplitude: 0.25, variation: 0, asymmetry: 0, seed: 41)
        var pedometer = Pedometer<Double>(stepLength: model)
        var summed = 0.0
        for (t, a) in readings(gait.reading, at: sampleTimes(from: 0, to: gait.end - 0.2, rate: 100), noise: 0.003) {
            let counted = pedometer.update(a, at: t)
            summed += Double(counted) * pedometer.newStepLength
        }
        let data = pedometer.data
        #expect(abs(data.distance - summed) < 1e-9, "the distance is the sum of the counted steps' lengths")
        #expect(data.numberOfSteps > 50)
        return (data.distance / Double(data.numberOfSteps), data)
    }

    @Test func aFasterWalkCoversMoreGroundPerStep() throws {
        let model = StepLengthModel.default
        let slow = try walk(cadence: 1.5, model: model)
        let fast = try walk(cadence: 2.2, model: model)
        // Each step at the measured cadence (within 2 % of the gait's).
        #expect(abs(slow.perStep / (0.7055 * 1.5 / (110.0 / 60)) - 1) < 0.02, "\(slow.perStep) m a step")
        #expect(abs(fast.perStep / (0.7055 * 2.2 / (110.0 / 60)) - 1) < 0.02, "\(fast.perStep) m a step")
        // The pace: 1 / (step length at the cadence × cadence).
        let cadence = try #require(fast.data.currentCadence)
        let pace = try #require(fast.data.currentPace)
        #expect(abs(pace - 1 / (model.stepLength(atCadence: cadence) * cadence)) < 1e-12)
        // A fixed model: the same step at both cadences.
        let fixedSlow = try walk(cadence: 1.5, model: .init(stepLength: 0.7))
        let fixedFast = try walk(cadence: 2.2, model: .init(stepLength: 0.7))
        #expect(abs(fixedSlow.perStep - 0.7) < 1e-12 && abs(fixedFast.perStep - 0.7) < 1e-12)
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
