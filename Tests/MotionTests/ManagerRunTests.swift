import Foundation
import MotionTrace
import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing

@testable import Motion
import TestFiles

/// `MotionManager.run`: the commands' driver, the manager's one loop for a single synchronous consumer.
@Suite("A manager's run for one synchronous consumer")
struct ManagerRunTests {
    /// The simulated shakes, taps and walking of `Scenario.shakeSequence` at 100 Hz (accelerometer and gyroscope).
    static let samples: [MotionSample] = Array(
        try! Simulation(scenario: .shakeSequence(seed: 7), options: .init(rate: 100, seed: 7)))

    @Test("Gives the same samples, device motion and shakes as the manager's subscriptions")
    func sameAsSubscriptions() async throws {
        let run = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        var ranSamples: [MotionSample] = []
        var ranMotion: [DeviceMotion] = []
        var ranShakes: [ShakeEvent] = []
        try await run.run(.init(sensors: .accelerometer, updateInterval: 0.05, referenceFrames: [.xArbitraryZVertical], shake: true)) {
            outputs in
            if let sample = outputs.sample { ranSamples.append(sample) }
            if let motion = outputs.deviceMotion(in: .xArbitraryZVertical) { ranMotion.append(motion) }
            if let shake = outputs.shake { ranShakes.append(shake) }
            return true
        }
        let subscribed = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        let sampleUpdates = subscribed.sampleUpdates(sensors: .accelerometer, interval: 0.05)
        let motionUpdates = subscribed.deviceMotionUpdates(using: .xArbitraryZVertical, interval: 0)
        let shakeUpdates = subscribed.shakeEvents()
        // Read together: a lossless replay waits for the slowest consumer.
        async let samplesRead = Self.collect(sampleUpdates)
        async let motionRead = Self.collect(motionUpdates)
        async let shakesRead = Self.collect(shakeUpdates)
        let (samples, motion, shakes) = try await (samplesRead, motionRead, shakesRead)
        #expect(!ranShakes.isEmpty && ranSamples.count > 10)
        #expect(ranSamples == samples)
        #expect(ranMotion.map(\.timestamp) == motion.map(\.timestamp))
        #expect(ranMotion.map(\.attitude.quaternion) == motion.map(\.attitude.quaternion))
        #expect(ranShakes == shakes)
    }

    static func collect<Element: Sendable>(_ updates: MotionUpdates<Element>) async throws -> [Element] {
        var elements: [Element] = []
        for try await element in updates { elements.append(element) }
        return elements
    }

    @Test("Ends when the consumer returns false, and the processor it returns has seen exactly those samples")
    func consumerStops() async throws {
        let manager = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        var count = 0
        let processor = try await manager.run(.init(steps: true)) { _ in
            count += 1
            return count < 25
        }
        #expect(count == 25)
        #expect(processor.request.steps)
    }

    @Test("Refuses while a subscription is active, and subscriptions end with the reason while it runs")
    func exclusive() async throws {
        let manager = try MotionManager(source: .samples(Self.samples, pacing: .scaled(by: 1000)))
        let updates = manager.accelerometerUpdates(interval: 0)
        var iterator = updates.makeAsyncIterator()
        _ = try await iterator.next()
        await #expect(throws: MotionError.self) { _ = try await manager.run(.init(shake: true)) { _ in true } }
        updates.cancel()
        await manager.stopAllUpdates()
        let other = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        let errors = Recorder<MotionError>()
        try await other.run(.init(shake: true)) { _ in
            other.startAccelerometerUpdates(to: OperationQueue()) { _, error in
                if let error { errors.append(error) }
            }
            return false
        }
        #expect(await eventually { errors.count == 1 })
        #expect(errors.all.first?.code == .invalidArgument)
        #expect(errors.all.first?.message.contains("MotionManager.run") == true)
    }

    @Test("Needs a sensor the source lacks: fails at once with unsupported, naming it")
    func missingSensor() async throws {
        let accelerometerOnly = Self.samples.map { MotionSample(timestamp: $0.timestamp, acceleration: $0.acceleration) }
        let manager = try MotionManager(source: .samples(accelerometerOnly, pacing: .asFastAsConsumed))
        do {
            try await manager.run(.init(referenceFrames: [.xArbitraryZVertical])) { _ in true }
            Issue.record("ran without the gyroscope")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("has no gyro (it has accel)"), "\(error.message)")
        }
    }

    @Test("A paced replay calls willWait before each sleep; its error ends the run and is thrown")
    func willWaitFailure() async throws {
        let clock = ManualClock()
        let manager = try MotionManager(source: .samples(Self.samples, pacing: .realTime), clock: clock)
        let counts = Recorder<String>()
        let run = Task {
            try await manager.run(
                .init(sensors: .accelerometer),
                willWait: { () throws(MotionError) in
                    counts.append("wait")
                    if counts.all.filter({ $0 == "wait" }).count == 3 {
                        throw MotionError(.ioFailure, "the output is gone")
                    }
                }
            ) { _ in
                counts.append("sample")
                return true
            }
        }
        // Samples 10 ms apart: the clock stops between samples 2 and 3, then 3 and 4, so each waits (and flushes).
        for step in [15, 10] {
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .milliseconds(step))
        }
        let result = await run.result
        #expect(throws: MotionError.self) { try result.get() }
        #expect(counts.all == ["sample", "wait", "sample", "wait", "sample", "wait"])
    }

    @Test("Cancelled (a signal): the end's outputs still come, a shake in progress cancelled as interrupted")
    func cancelledDeliversTheEnd() async throws {
        let manager = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        var events: [ShakeEvent] = []
        var afterCancel = 0
        try await manager.run(.init(shake: true)) { outputs in
            if let event = outputs.shake {
                events.append(event)
                if case .began = event.phase { withUnsafeCurrentTask { $0?.cancel() } }  // as SIGINT does
            }
            if Task.isCancelled { afterCancel += 1 }
            return true
        }
        #expect(events.count == 2)
        #expect(events.first?.phase == .began)
        #expect(events.last?.phase == .cancelled(.interrupted))
        #expect(afterCancel < 70, "a cancelled run stops within 64 samples")
    }

    @Test("A trace read in batches: the rows before a malformed one are processed, then its error ends the run, naming the line")
    func malformedRowAfterABatch() async throws {
        var text = "t,ax,ay,az\n"
        for index in 0..<150 { text += "\(Double(index) / 100),0,-1,0\n" }
        text += "1.5,0,oops,0\n1.51,0,-1,0\n"
        let path = ScratchFolder.path("run", suffix: ".csv")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let manager = try MotionManager(source: .trace(path, pacing: .asFastAsConsumed))
        var count = 0
        do {
            try await manager.run(.init(sensors: .accelerometer)) { _ in
                count += 1
                return true
            }
            Issue.record("the malformed row was not reported")
        } catch {
            #expect(error.code == .malformedTrace)
            #expect(error.location?.line == 152, "\(error)")
        }
        #expect(count == 150)
    }

    @Test("A run consumes a recording: a later subscription ends at once")
    func consumes() async throws {
        let manager = try MotionManager(source: .samples(Self.samples, pacing: .asFastAsConsumed))
        try await manager.run(.init(sensors: .accelerometer)) { _ in false }
        var later = 0
        for try await _ in manager.accelerometerUpdates(interval: 0) { later += 1 }
        #expect(later == 0)
    }
}
