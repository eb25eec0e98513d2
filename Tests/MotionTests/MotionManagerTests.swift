import Dispatch
import Foundation
import MotionAlgorithms
import MotionCore
import MotionTesting
import Synchronization
import Testing

@testable import Motion

@Suite("MotionManager: pull, push and asynchronous delivery over recordings")
struct MotionManagerTests {
    @Test("Pull: the latest value is the last sample once the replay has ended")
    func pullLatest() async throws {
        let samples = indexedSamples(count: 500)
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        #expect(manager.accelerometerData == nil)
        #expect(manager.isAccelerometerAvailable && manager.isGyroAvailable && !manager.isMagnetometerAvailable)
        #expect(manager.availableAttitudeReferenceFrames == [.xArbitraryZVertical])
        manager.startAccelerometerUpdates()
        manager.startGyroUpdates()
        await manager.engine.producerStopped()
        #expect(manager.accelerometerData == AccelerometerData(timestamp: samples[499].timestamp, acceleration: samples[499].acceleration!))
        #expect(manager.gyroData?.timestamp == samples[499].timestamp)
        #expect(!manager.isAccelerometerActive, "the end of the recording ends the updates")
        manager.stopAccelerometerUpdates()
        manager.stopGyroUpdates()
    }

    @Test("Each subscription gets its own interval, exactly on its grid, from one replay")
    func multiRate() async throws {
        let samples = indexedSamples(count: 1000)
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        let every = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(4))
        let half = manager.accelerometerUpdates(interval: 0.02, bufferingPolicy: .bufferingOldest(4))
        let fifth = manager.accelerometerUpdates(interval: 0.05, bufferingPolicy: .bufferingOldest(4))
        async let a = indices(every)
        async let b = indices(half)
        async let c = indices(fifth)
        let (all, byTwo, byFive) = try await (a, b, c)
        #expect(all == Array(0..<1000), "interval 0 delivers every sample, in order, none dropped")
        for (indices, step) in [(byTwo, 2), (byFive, 5)] {
            let first = try #require(indices.first)
            #expect(indices == Array(stride(from: first, to: 1000, by: step)), "step \(step)")
        }
        #expect(every.droppedCount == 0 && half.droppedCount == 0 && fifth.droppedCount == 0)
    }

    private func indices(_ updates: MotionUpdates<AccelerometerData>) async throws -> [Int] {
        var indices: [Int] = []
        for try await data in updates { indices.append(sampleIndex(data.acceleration)) }
        return indices
    }

    @Test("A stalled consumer keeps only its policy's limit and counts the rest; others are not slowed")
    func stalledConsumer() async throws {
        let count = 20_000
        let clock = ManualClock()
        let manager = try MotionManager(source: .samples(indexedSamples(count: count, rate: 1000)), clock: clock)
        let oldest = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(8))
        let newest = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingNewest(8))
        let reader = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(count))
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(3600))
        var read = 0
        for try await _ in reader { read += 1 }
        #expect(read == count)
        #expect(oldest.droppedCount == count - 8)
        #expect(newest.droppedCount == count - 8)
        #expect(try await indices(oldest) == Array(0..<8))
        #expect(try await indices(newest) == Array(count - 8..<count))
    }

    @Test("Real-time replay on a manual clock delivers exactly the samples whose time has come", arguments: [1.0, 2.0])
    func manualClockPacing(speed: Double) async throws {
        let clock = ManualClock()
        let samples = indexedSamples(count: 1000)
        let pacing: ReplayPacing = speed == 1 ? .realTime : .scaled(by: speed)
        let manager = try MotionManager(source: .samples(samples, pacing: pacing), clock: clock)
        manager.startAccelerometerUpdates()
        await clock.sleepers(atLeast: 1)
        #expect(manager.accelerometerData?.timestamp == 0, "the first sample starts the replay at once")
        for step in 1...3 {
            clock.advance(by: .milliseconds(500))
            await clock.sleepers(atLeast: 1)
            let expected = try #require(manager.accelerometerData)
            #expect(sampleIndex(expected.acceleration) == Int((Double(step) * 50 * speed).rounded()))
        }
        manager.stopAccelerometerUpdates()
        await manager.engine.producerStopped()
        #expect(clock.sleeperCount == 0, "stopping the last subscription stops the replay")
    }

    @Test("Stopping every subscription pauses a replay; the next one resumes where it stopped")
    func pauseAndResume() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 100), pacing: .asFastAsConsumed))
        let first = manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(1))
        var seen: [Int] = []
        for try await data in first {
            seen.append(sampleIndex(data.acceleration))
            if seen.count == 10 { break }
        }
        first.cancel()
        await manager.engine.producerStopped()
        #expect(!manager.engine.state.withLock { $0.isProducing })
        let rest = try await indices(manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(1)))
        // The samples the first consumer had not taken when it left (at most its buffer and the one in flight)
        // are not replayed; the rest follow in order.
        #expect(seen == Array(0..<10))
        let resumedAt = try #require(rest.first)
        #expect((10...12).contains(resumedAt))
        #expect(rest == Array(resumedAt..<100))
    }

    @Test("Replaying a trace twice gives identical device motion, shake events and orientation changes")
    func identicalReplays() async throws {
        let simulation = try Simulation(
            scenario: .shakeSequence(seed: 7), options: SimulationOptions(rate: 100, sensors: .all, seed: 7))
        let samples = Array(simulation)
        func replay() async throws -> ([DeviceMotion], [ShakeEvent], [DeviceOrientationChange]) {
            let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
            // Made together, before any is consumed: the replay starts at the first demand, so all see every sample.
            let motionUpdates = manager.deviceMotionUpdates(
                using: .xMagneticNorthZVertical, interval: 0, bufferingPolicy: .bufferingOldest(16))
            let shakeEvents = manager.shakeEvents()
            let orientationChanges = manager.deviceOrientationChanges()
            async let motion = collect(motionUpdates)
            async let shakes = collect(shakeEvents)
            async let changes = collect(orientationChanges)
            return try await (motion, shakes, changes)
        }
        let (motionA, shakesA, changesA) = try await replay()
        let (motionB, shakesB, changesB) = try await replay()
        #expect(!shakesA.isEmpty && !changesA.isEmpty)
        #expect(shakesA == shakesB)
        #expect(changesA == changesB)
        #expect(motionA == motionB)
        // The same as running the filter, detector and classifier directly over the samples.
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var detector = ShakeDetector<Double>()
        var classifier = OrientationClassifier<Double>()
        var directShakes: [ShakeEvent] = []
        var directChanges: [DeviceOrientationChange] = []
        let direct = samples.compactMap { sample -> DeviceMotion? in
            if let a = sample.acceleration?.vector {
                if let event = detector.update(a, at: sample.timestamp) { directShakes.append(event) }
                if let change = classifier.update(a, at: sample.timestamp) { directChanges.append(change) }
            }
            return filter.update(sample)
        }
        #expect(motionA == direct)
        #expect(shakesA == directShakes)
        #expect(changesA == directChanges)
    }

    @Test("A source that ends during a shake cancels it (interrupted, at the last reading), as motionctl shake does")
    func endOfSourceCancelsAShake() async throws {
        var scenario = Scenario(name: "cut", start: .portrait)
        scenario.append(.hold(1))
        scenario.append(.shake(axis: .y, frequency: 4, amplitude: 1.5, duration: 0.75))  // the recording ends here
        let samples = Array(try Simulation(scenario: scenario, options: SimulationOptions(rate: 100, seed: 1)))
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        let events = try await collect(manager.shakeEvents())
        #expect(events.map(\.phase) == [.began, .cancelled(.interrupted)])
        #expect(events.last?.timestamp == samples.last?.timestamp)
        // The same as the detector run directly, then cancelled at the last reading.
        var detector = ShakeDetector<Double>()
        var direct = samples.compactMap { sample in sample.acceleration.flatMap { detector.update($0.vector, at: sample.timestamp) } }
        if let cancel = detector.cancel(at: samples.last!.timestamp) { direct.append(cancel) }
        #expect(events == direct)
    }

    private func collect<Element>(_ updates: MotionUpdates<Element>) async throws -> [Element] {
        var all: [Element] = []
        for try await element in updates { all.append(element) }
        return all
    }

    @Test("A scoped subscription ends with its scope, and the replay stops with the last one")
    func scoped() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 10_000), pacing: .asFastAsConsumed))
        let firstTwo = try await manager.withAccelerometerUpdates(interval: 0) { updates in
            var got: [Int] = []
            for try await data in updates {
                got.append(sampleIndex(data.acceleration))
                if got.count == 2 { break }
            }
            return got
        }
        #expect(firstTwo == [0, 1])
        await manager.engine.producerStopped()
        #expect(manager.engine.state.withLock { $0.registrations.isEmpty && !$0.isProducing })
    }
}

@Suite("MotionManager on a caller's sample stream")
struct StreamSourceTests {
    @Test("Samples from an AsyncStream arrive as they are yielded; the end of the stream ends the updates")
    func streamSource() async throws {
        let (samples, continuation) = AsyncStream<MotionSample>.makeStream()
        let manager = try MotionManager(source: .stream(samples))
        #expect(manager.accelerometerData == nil && !manager.isAccelerometerAvailable)
        let updates = manager.accelerometerUpdates(interval: 0)
        var iterator = updates.makeAsyncIterator()
        for (index, sample) in indexedSamples(count: 50).enumerated() {
            continuation.yield(sample)
            let received = try await iterator.next()
            #expect(received.map { sampleIndex($0.acceleration) } == index)
        }
        continuation.finish()
        #expect(try await iterator.next() == nil)
    }

    @Test("A failing stream ends the updates with its error")
    func failingStream() async throws {
        struct Broken: Error {}
        let (samples, continuation) = AsyncThrowingStream<MotionSample, any Error>.makeStream()
        let manager = try MotionManager(source: .stream(samples))
        continuation.yield(indexedSamples(count: 1)[0])
        continuation.finish(throwing: Broken())
        var received = 0
        do {
            for try await _ in manager.accelerometerUpdates(interval: 0) { received += 1 }
            Issue.record("no error")
        } catch {
            #expect(error.code == .ioFailure)
            #expect(error.message.contains("Broken"))
        }
        #expect(received == 1)
    }
}
