import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing

/// `MotionProcessor`'s steps and activity: what a `Pedometer` and an `ActivityClassifier` with the configuration's
/// settings give for the same samples, step for step; nothing when not requested.
@Suite struct MotionProcessorStepsTests {
    /// The simulator's walk: 1 s still, 20 s at 1.9 steps/s carried in portrait, 1 s still; accelerometer and
    /// gyroscope at 100 Hz.
    static func walk() throws -> [MotionSample] {
        Array(try Simulation(scenario: .walking(), options: SimulationOptions(rate: 100, seed: 2)))
    }

    @Test func stepsAndActivityAreThePedometersAndTheClassifiers() throws {
        let configuration = MotionConfiguration(stepLength: .height(1.8))
        var processor = MotionProcessor(configuration: configuration, request: .init(steps: true, activity: true))
        #expect(processor.request.requiredSensors == [.accelerometer])
        var pedometer = Pedometer<Double>(configuration: configuration.steps, stepLength: configuration.stepLength)
        var classifier = ActivityClassifier<Double>(configuration: configuration.activity)
        var steps: [Double] = []
        var changes: [MotionActivity] = []
        for sample in try Self.walk() {
            processor.process(sample)
            let a = try #require(sample.acceleration?.vector)
            let counted = pedometer.update(a, at: sample.timestamp)
            let update = processor.outputs.steps
            #expect((update?.stepTimes.count ?? 0) == counted)
            if let update {
                #expect(update.data == pedometer.data)
                #expect(update.stepLength == pedometer.newStepLength)
                for i in 0..<update.stepTimes.count {
                    #expect(update.stepTimes[i] == pedometer.detector.newStepTime(i))
                    steps.append(update.stepTimes[i])
                }
            }
            let change = classifier.update(a, at: sample.timestamp)
            #expect(processor.outputs.activity == change)
            if let change { changes.append(change) }
            #expect(processor.outputs.isEmpty == (update == nil && change == nil))
        }
        // 20 s at 1.9 steps/s.
        #expect(abs(steps.count - 38) <= 1)
        #expect(processor.pedometerData == pedometer.data)
        // Steps of 0.415 × 1.8 m at 110 steps/min, proportional to the cadence (the walk's 1.9 steps/s, within 2 %).
        let perStep = (processor.pedometerData?.distance ?? 0) / Double(steps.count)
        #expect(abs(perStep / (0.415 * 1.8 * 1.9 / (110.0 / 60)) - 1) < 0.02, "\(perStep) m a step")
        #expect(changes.map(\.kind) == [.walking])
        #expect(processor.currentActivity?.kind == .walking)
    }

    @Test func notRequestedGivesNothing() throws {
        var processor = MotionProcessor(request: .init(shake: true))
        for sample in try Self.walk() {
            processor.process(sample)
            #expect(processor.outputs.steps == nil && processor.outputs.activity == nil)
        }
        #expect(processor.pedometerData == nil && processor.currentActivity == nil)
        // Requested later: the pedometer starts from zero.
        processor.setRequest(.init(steps: true))
        #expect(processor.pedometerData?.numberOfSteps == 0)
    }
}
