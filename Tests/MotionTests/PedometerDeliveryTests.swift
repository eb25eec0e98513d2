import Dispatch
import Foundation
import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing

@testable import Motion

@Suite("MotionManager: the pedometer and activity updates, as the algorithms give them")
struct PedometerDeliveryTests {
    /// 30 s of walking at 1.9 steps/s with still seconds around it, at 100 Hz, and then standing.
    static let walk: [MotionSample] = {
        var scenario = Scenario.walking(duration: 30, cadence: 1.9)
        scenario.append(.hold(15))
        return Array(try! Simulation(scenario: scenario, options: SimulationOptions(rate: 100, seed: 3)))
    }()

    /// The pedometer run directly on `samples`: each update's step times, and the figures after them.
    static func direct(_ samples: [MotionSample]) -> [(times: [Double], data: PedometerData)] {
        var pedometer = Pedometer<Double>()
        return samples.compactMap { sample in
            guard let acceleration = sample.acceleration, pedometer.update(acceleration.vector, at: sample.timestamp) > 0
            else { return nil }
            let times = pedometer.detector.newStepTimes
            return ((0..<times.count).map { times[$0] }, pedometer.data)
        }
    }

    @Test("pedometerUpdates gives the steps the pedometer counts, each once, with the same figures")
    func pedometerSequence() async throws {
        let manager = try MotionManager(source: .samples(Self.walk, pacing: .asFastAsConsumed))
        var updates: [PedometerUpdate] = []
        for try await update in manager.pedometerUpdates() { updates.append(update) }
        let expected = Self.direct(Self.walk)
        #expect(updates.count == expected.count)
        for (update, direct) in zip(updates, expected) {
            #expect((0..<update.stepTimes.count).map { update.stepTimes[$0] } == direct.times)
            #expect(update.data == direct.data)
        }
        let total = try #require(updates.last?.data.numberOfSteps)
        #expect(abs(total - 57) <= 3, "30 s at 1.9 steps/s: \(total) steps")
        #expect(manager.pedometerData == updates.last?.data, "the pull value is the latest figures")
    }

    @Test("A pedometer handler on a queue gets the same updates, and nothing after stop")
    func pedometerHandler() async throws {
        let manager = try MotionManager(source: .samples(Self.walk, pacing: .asFastAsConsumed))
        let steps = Recorder<Int>()
        manager.startPedometerUpdates(to: DispatchQueue(label: "steps")) { update, _ in
            if let update { steps.append(update.data.numberOfSteps) }
        }
        #expect(manager.isPedometerActive)
        let expected = Self.direct(Self.walk).map(\.data.numberOfSteps)
        #expect(await eventually { steps.count == expected.count })
        #expect(steps.all == expected)
        manager.stopPedometerUpdates()
        #expect(!manager.isPedometerActive)
    }

    @Test("activityUpdates gives the classifier's changes: walking while walking, then stationary")
    func activitySequence() async throws {
        let manager = try MotionManager(source: .samples(Self.walk, pacing: .asFastAsConsumed))
        var changes: [MotionActivity] = []
        for try await change in manager.activityUpdates() { changes.append(change) }
        var classifier = ActivityClassifier<Double>()
        let direct = Self.walk.compactMap { sample in
            sample.acceleration.flatMap { classifier.update($0.vector, at: sample.timestamp) }
        }
        #expect(changes == direct)
        #expect(changes.contains { $0.kind == .walking }, "\(changes)")
        #expect(changes.last?.kind == .stationary, "\(changes)")
        #expect(manager.activity == changes.last)
    }

    /// A live source whose readings above 25 Hz need a right (as the motion service's), recording the intervals the
    /// manager asks of it.
    struct RightLimitedWalk: RightLimitedSampleProvider {
        let asked = Recorder<Double>()
        var isLive: Bool { true }
        var description: String { "a right-limited walk" }
        var openInterval: Double { 0.04 }
        func makeReader() -> any MotionSampleReader { Reader(asked: asked) }

        final class Reader: MotionSampleReader {
            let asked: Recorder<Double>
            private var next = 0
            init(asked: Recorder<Double>) { self.asked = asked }
            func availableSensors() -> SensorSet { .accelerometer }
            func next(_ demand: SourceDemand) -> SampleSourceStep {
                asked.append(demand.fastestInterval)
                guard next < PedometerDeliveryTests.walk.count else { return .ended }
                defer { next += 1 }
                return .sample(PedometerDeliveryTests.walk[next])
            }
            func wait(_ demand: SourceDemand) async {}
            func putBack(_ sample: MotionSample) { next -= 1 }
        }
    }

    @Test("On a source whose readings above 25 Hz need a right (the service), steps ask 25 Hz: they work for everyone")
    func pedometerRateOnARightLimitedSource() async throws {
        let provider = RightLimitedWalk()
        let manager = try MotionManager(source: MotionSource(provider))
        var total = 0
        for try await update in manager.pedometerUpdates() { total = update.data.numberOfSteps }
        #expect(total > 50, "\(total) steps")
        let asked = provider.asked.all
        #expect(!asked.isEmpty && asked.allSatisfy { $0 == 0.04 }, "\(Set(asked))")
    }

    @Test("Steps and activity ask the device for 50 Hz; orientation asks no rate and takes none away")
    func pedometerRate() {
        let orientation = MotionEngine.Registration(
            stream: .orientation, route: .pull, gate: UpdateIntervalGate(interval: 0), demandInterval: 0)
        let steps = MotionEngine.Registration(
            stream: .steps, route: .pull, gate: UpdateIntervalGate(interval: 0), demandInterval: 0)
        let fast = MotionEngine.Registration(
            stream: .accelerometer, route: .pull, gate: UpdateIntervalGate(interval: 0.005), demandInterval: 0.005)
        #expect(MotionEngine.needs(of: [1: orientation]).fastestInterval == 0, "no demand: the device's rate")
        #expect(
            MotionEngine.needs(of: [1: orientation, 2: fast]).fastestInterval == 0.005,
            "orientation does not take away another subscription's rate")
        #expect(MotionEngine.needs(of: [1: orientation, 2: steps]).fastestInterval == 0.02)
        #expect(MotionEngine.needs(of: [1: steps, 2: fast]).fastestInterval == 0.005)
        #expect(MotionEngine.needs(of: [1: steps]).request.steps)
    }
}
