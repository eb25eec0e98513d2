import Dispatch
import Foundation
@testable import Motion
import MotionAlgorithms
import MotionCore
import MotionTrace
import Testing

/// The shipped recording, found from this file's path.
private let recording = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Recordings/broad-slow-rotation-excerpt.csv").path

/// The library examples of `Docs/MotionManager.md` and the README, one per delivery style, compiled and run on
/// the shipped recording. Keep the marked parts in sync with the documents.
@Suite("Documented examples: pull, push and asynchronous delivery")
struct DeliveryStyleExamples {
    @Test("Pull: start, then read the latest value")
    func pull() async throws {
        // --- example: pull ---
        let motion = try MotionManager(source: .trace(recording, pacing: .asFastAsConsumed))
        motion.startDeviceMotionUpdates(using: .xArbitraryZVertical)
        // … later, whenever the app wants it:
        if let attitude = motion.deviceMotion?.attitude {
            print("roll \(attitude.roll), pitch \(attitude.pitch), yaw \(attitude.yaw) rad")
        }
        // --- end of example ---
        await motion.engine.producerStopped()
        let last = try #require(motion.deviceMotion)
        #expect(abs(last.timestamp - 60) < 0.01, "the replay ran to the end of the 60 s excerpt")
        let gravityLength = (last.gravity.vector * last.gravity.vector).sum().squareRoot()
        #expect(abs(gravityLength - 1) < 1e-9)
        motion.stopDeviceMotionUpdates()
    }

    @Test("Push: a handler on a queue")
    func push() async throws {
        let received = Recorder<Double>()
        // --- example: push ---
        let motion = try MotionManager(source: .trace(recording, pacing: .asFastAsConsumed))
        motion.accelerometerUpdateInterval = 0.1  // seconds
        motion.startAccelerometerUpdates(to: OperationQueue()) { data, error in
            guard let data else { return print("accelerometer stopped: \(error!)") }
            received.append(data.timestamp)  // data.acceleration is in g
        }
        // --- end of example ---
        #expect(await eventually { received.count >= 595 && !motion.isAccelerometerActive })
        let times = received.all
        // Each update is the first sample at or after its point on the 0.1 s grid (samples are 3.5 ms apart).
        let start = try #require(times.first)
        #expect(times.enumerated().allSatisfy { k, t in
            let due = start + Double(k) * 0.1
            return t >= due - 1e-7 && t < due + 0.0036
        })
        motion.stopAccelerometerUpdates()
    }

    @Test("Async: a scoped subscription")
    func async() async throws {
        // --- example: async ---
        let motion = try MotionManager(source: .trace(recording, pacing: .asFastAsConsumed))
        let headings = try await motion.withDeviceMotionUpdates(using: .xArbitraryZVertical, interval: 1) { updates in
            var yaws: [Double] = []
            for try await update in updates {
                yaws.append(update.attitude.yaw * 180 / .pi)  // degrees
                if yaws.count == 10 { break }  // leaving the scope ends the subscription
            }
            return yaws
        }
        // --- end of example ---
        #expect(headings.count == 10)
        await motion.engine.producerStopped()
        #expect(!motion.engine.state.withLock { $0.isProducing })
    }
}
