import Dispatch
import Foundation
import MotionAlgorithms
import MotionCore
import MotionTrace
import MotionTesting
import Synchronization
import Testing

@testable import Motion

@Suite("MotionManager: handlers on queues, stop semantics, errors and orientation notifications")
struct HandlerDeliveryTests {
    @Test("Handlers run serially and in order on a concurrent OperationQueue")
    func serialInOrder() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 2000), pacing: .asFastAsConsumed))
        manager.accelerometerUpdateInterval = 0
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        let indices = Recorder<Int>()
        let running = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        manager.startAccelerometerUpdates(to: queue, bufferingPolicy: .bufferingOldest(4)) { data, error in
            if running.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                overlaps.add(1, ordering: .relaxed)
            }
            if let data { indices.append(sampleIndex(data.acceleration)) }
            running.subtract(1, ordering: .sequentiallyConsistent)
        }
        #expect(await eventually { indices.count == 2000 })
        #expect(indices.all == Array(0..<2000))
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(manager.droppedUpdateCount(.accelerometer) == 0, "a lossless replay waits for the handler")
        manager.stopAccelerometerUpdates()
    }

    @Test("After stop returns, the handler is not running and never runs again")
    func stopSemantics() async throws {
        let clock = ManualClock()
        let manager = try MotionManager(source: .samples(indexedSamples(count: 100_000, rate: 1000)), clock: clock)
        manager.accelerometerUpdateInterval = 0
        let queue = DispatchQueue(label: "handler")
        let inside = Atomic<Bool>(false)
        let calls = Atomic<Int>(0)
        manager.startAccelerometerUpdates(to: queue, bufferingPolicy: .bufferingOldest(100_000)) { _, _ in
            inside.store(true, ordering: .sequentiallyConsistent)
            calls.add(1, ordering: .sequentiallyConsistent)
            usleep(200)  // a slow handler, so stop() often meets it mid-call
            inside.store(false, ordering: .sequentiallyConsistent)
        }
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1000))
        #expect(await eventually { calls.load(ordering: .relaxed) >= 20 })
        manager.stopAccelerometerUpdates()
        let runningAfterStop = inside.load(ordering: .sequentiallyConsistent)
        #expect(!runningAfterStop, "stop waited for the running call")
        let afterStop = calls.load(ordering: .sequentiallyConsistent)
        queue.sync {}  // anything already queued has had its chance to run
        #expect(calls.load(ordering: .sequentiallyConsistent) == afterStop)
        #expect(!manager.isAccelerometerActive)
        #expect(afterStop < 100_000, "stopped before the end")
    }

    @Test("Stop called from inside the handler ends the updates without deadlock")
    func stopFromHandler() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 1000), pacing: .asFastAsConsumed))
        manager.accelerometerUpdateInterval = 0
        let calls = Atomic<Int>(0)
        let queue = DispatchQueue(label: "handler")
        manager.startAccelerometerUpdates(to: queue) { [manager] _, _ in
            if calls.add(1, ordering: .sequentiallyConsistent).newValue == 5 { manager.stopAccelerometerUpdates() }
        }
        #expect(await eventually { !manager.isAccelerometerActive })
        queue.sync {}
        #expect(calls.load(ordering: .sequentiallyConsistent) == 5)
    }

    @Test("A bad trace row reaches the handler as an error naming the line, after the rows before it")
    func errorReachesHandler() async throws {
        let path = try temporaryTrace("t,ax,ay,az\n0,0,0,-1\n0.01,0,0,-1\n0.02,0,zero,-1\n0.03,0,0,-1\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let manager = try MotionManager(source: .trace(path, pacing: .asFastAsConsumed))
        manager.accelerometerUpdateInterval = 0
        let data = Recorder<Double>()
        let errors = Recorder<MotionError>()
        manager.startAccelerometerUpdates(to: DispatchQueue(label: "handler")) { reading, error in
            if let reading { data.append(reading.timestamp) }
            if let error { errors.append(error) }
        }
        #expect(await eventually { errors.count == 1 })
        #expect(data.all == [0, 0.01])
        let error = try #require(errors.all.first)
        #expect(error.code == .malformedTrace)
        #expect(error.location?.line == 4)
        #expect(error.location?.column == "ay")
        #expect(!manager.isAccelerometerActive)
    }

    @Test("The same error ends an asynchronous sequence, and later subscriptions end the same way")
    func errorEndsSequence() async throws {
        let path = try temporaryTrace("t,ax,ay,az\n0,0,0,-1\n0.01,0,0,-1\n0.005,0,0,-1\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let manager = try MotionManager(source: .trace(path, pacing: .asFastAsConsumed))
        var timestamps: [Double] = []
        do {
            for try await reading in manager.accelerometerUpdates(interval: 0) { timestamps.append(reading.timestamp) }
            Issue.record("the sequence ended without the error")
        } catch {
            #expect(error.code == .malformedTrace && error.location?.line == 4)
        }
        #expect(timestamps == [0, 0.01])
        await #expect(throws: MotionError.self) {
            for try await _ in manager.gyroUpdates() {}
        }
    }

    @Test("A missing trace is reported when the manager is made, naming the file")
    func missingTrace() {
        #expect {
            _ = try MotionManager(source: .trace("/nonexistent/motion.csv"))
        } throws: { error in
            (error as? MotionError)?.code == .noInput && "\(error)".contains("/nonexistent/motion.csv")
        }
    }

    @Test("Orientation notifications nest; the orientation reads unknown unless they are on")
    func orientationNotifications() async throws {
        // Face up for 2 s, then portrait for 2 s (z ≈ −1 g, then y ≈ −1 g), at 100 Hz.
        let samples = (0..<400).map { index in
            MotionSample(
                timestamp: Double(index) / 100,
                acceleration: index < 200 ? Acceleration(x: 0, y: 0, z: -1) : Acceleration(x: 0, y: -1, z: 0))
        }
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        #expect(manager.deviceOrientation == .unknown)
        let changes = Recorder<DeviceOrientationChange>()
        let queue = DispatchQueue(label: "orientation")
        manager.beginGeneratingDeviceOrientationNotifications()
        manager.beginGeneratingDeviceOrientationNotifications()
        manager.startDeviceOrientationUpdates(to: queue) { change, _ in if let change { changes.append(change) } }
        await manager.engine.producerStopped()
        queue.sync {}
        #expect(changes.all.map(\.orientation) == [.faceUp, .portrait])
        #expect(manager.isGeneratingDeviceOrientationNotifications)
        #expect(manager.deviceOrientation == .portrait)
        manager.stopDeviceOrientationUpdates()
        manager.endGeneratingDeviceOrientationNotifications()
        #expect(manager.isGeneratingDeviceOrientationNotifications, "one begin is still open")
        #expect(manager.deviceOrientation == .portrait)
        manager.endGeneratingDeviceOrientationNotifications()
        manager.endGeneratingDeviceOrientationNotifications()  // unbalanced: ignored
        #expect(!manager.isGeneratingDeviceOrientationNotifications)
        #expect(manager.deviceOrientation == .unknown)
    }

    @Test("A new orientation subscriber first gets the current state")
    func orientationCurrentFirst() async throws {
        let samples = (0..<1000).map {
            MotionSample(timestamp: Double($0) / 100, acceleration: Acceleration(x: 1, y: 0, z: 0))
        }
        let clock = ManualClock()
        let manager = try MotionManager(source: .samples(samples), clock: clock)
        manager.beginGeneratingDeviceOrientationNotifications()
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(2))
        await clock.sleepers(atLeast: 1)
        let current = manager.deviceOrientation
        #expect(current.isLandscape)
        var iterator = manager.deviceOrientationChanges().makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.orientation == current)
        #expect(first?.orientationChanged == false)
        manager.endGeneratingDeviceOrientationNotifications()
    }

    /// An actor consumes a sequence: every update is handled on the actor, serially and in order.
    actor Counter {
        var indices: [Int] = []
        func consume(_ updates: MotionUpdates<AccelerometerData>) async throws {
            for try await data in updates { indices.append(sampleIndex(data.acceleration)) }  // isolated to self
        }
    }

    @Test("An actor consumes updates serially, in order, isolated")
    func actorConsumer() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 500), pacing: .asFastAsConsumed))
        let counter = Counter()
        try await counter.consume(manager.accelerometerUpdates(interval: 0, bufferingPolicy: .bufferingOldest(8)))
        #expect(await counter.indices == Array(0..<500))
    }
}
