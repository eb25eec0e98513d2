import RealModule
import Testing
import TestThreads

@testable import MotionAlgorithms

/// `ActivityClassifier`: the classes on synthetic gaits, stillness and vehicle motion, and its hysteresis.
@Suite(.computeBound) struct ActivityClassifierTests {
    /// The changes the classifier reports over `signal` sampled at 100 Hz from 0 to `duration` seconds.
    static func changes(
        _ duration: Double, noise: Double = 0.003, _ signal: @escaping (Double) -> SIMD3<Double>
    ) -> [MotionActivity] {
        var classifier = ActivityClassifier<Double>()
        return readings(signal, at: sampleTimes(from: 0, to: duration, rate: 100), noise: noise).compactMap {
            classifier.update($0.a, at: $0.t)
        }
    }

    @Test func stillThenWalkingThenStill() {
        let gait = GaitSignal(steps: 60, cadence: 1.8, amplitude: 0.2, start: 5, seed: 50)
        let changes = Self.changes(gait.end + 8, gait.reading)
        #expect(changes.map(\.kind) == [.stationary, .walking, .stationary])
        #expect(changes.first?.confidence == .high)
        #expect(changes.dropFirst().first.map { $0.confidence == .high && $0.timestamp > 5 } == true)
    }

    @Test func runningIsRunning() {
        let gait = GaitSignal(steps: 100, cadence: 2.9, amplitude: 1, start: 5, seed: 51)
        let kinds = Self.changes(gait.end + 8, gait.reading).map(\.kind)
        #expect(kinds == [.stationary, .running, .stationary])
    }

    @Test func aCadenceWanderingAcrossTheBoundaryDoesNotFlicker() {
        // Running at 2.55 ± 0.05 steps/s, inside the 2.4–2.6 dead band once running: one change to running
        // would need 2.6; walking is entered and kept.
        var gaits: [GaitSignal] = []
        var start = 5.0
        for (i, cadence) in [2.5, 2.55, 2.45, 2.55, 2.5, 2.45].enumerated() {
            let gait = GaitSignal(steps: 20, cadence: cadence, amplitude: 0.5, start: start, variation: 0.01,
                asymmetry: 0, seed: 60 + UInt64(i))
            gaits.append(gait)
            start = gait.end
        }
        let end = start
        let changes = Self.changes(end + 8) { t in
            gaits.first(where: { t < $0.end })?.reading(t) ?? SIMD3(0, 0, -1)
        }
        let moving = changes.map(\.kind).filter { $0 == .walking || $0 == .running }
        #expect(moving.count == 1, "\(changes)")
    }

    @Test func aPauseShorterThanTheDwellTimeKeepsWalking() {
        let first = GaitSignal(steps: 40, cadence: 2, amplitude: 0.25, start: 5, seed: 70)
        let second = GaitSignal(steps: 40, cadence: 2, amplitude: 0.25, start: first.end + 1.2, seed: 71)
        let changes = Self.changes(second.end + 8) { t in t < first.end + 0.6 ? first.reading(t) : second.reading(t) }
        #expect(changes.map(\.kind) == [.stationary, .walking, .stationary])
    }

    @Test func vehicleMotionIsUnknownNeverWalking() {
        var random = NoiseGenerator(seed: 72)
        let road = (0..<64).map { _ in random.gaussian() }
        let changes = Self.changes(60) { t in
            let engine = 0.3 * Double.sin(2 * .pi * 30 * t)
            let bounce = 0.1 * Double.sin(2 * .pi * 1.5 * t)
            let bump = 0.05 * road[Int(t * 4) % road.count]
            return SIMD3(0.2 * Double.sin(2 * .pi * 0.08 * t), 0, -1 + engine + bounce + bump)
        }
        #expect(changes.map(\.kind) == [], "\(changes)")  // unknown from the start: no change is reported
    }

    @Test func shakingIsUnknown() {
        let changes = Self.changes(20) { t in
            t < 5 ? SIMD3(0, -1, 0) : SIMD3(1.5 * Double.sin(2 * .pi * 4 * t), -1, 0)
        }
        #expect(changes.map(\.kind) == [.stationary, .unknown])
    }
}
