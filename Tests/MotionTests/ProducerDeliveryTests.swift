import Foundation
import MotionCore
import MotionTrace
import MotionTesting
import Synchronization
import Testing

@testable import Motion

@Suite("MotionManager.subscribeOnProducer: updates handed over on the producer's thread (the service's streams)")
struct ProducerDeliveryTests {
    @Test("Every update, in order, on one thread, thinned by the interval; then the end, once")
    func inOrderThenEnd() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 2000), pacing: .asFastAsConsumed))
        let every = Recorder<Int>()
        let thinned = Recorder<Int>()
        let threads = Recorder<pthread_t>()
        let ends = Recorder<Bool>()
        let all = manager.subscribeOnProducer(
            .samples([.accelerometer]), interval: 0,
            receive: { record in
                guard case .sample(let sample) = record else { return }
                every.append(sampleIndex(sample.acceleration!))
                threads.append(pthread_self())
            },
            ended: { end in ends.append((try? end.get()) != nil) })
        let slow = manager.subscribeOnProducer(
            .samples([.accelerometer]), interval: 0.05,
            receive: { record in
                if case .sample(let sample) = record { thinned.append(sampleIndex(sample.acceleration!)) }
            },
            ended: { _ in })
        #expect(await eventually { ends.count == 1 })
        #expect(every.all == Array(0..<2000))
        #expect(thinned.all == Array(stride(from: 0, to: 2000, by: 5)), "one every 0.05 s of a 100 Hz source")
        #expect(Set(threads.all.map { UInt($0) }).count == 1, "all on the producer's thread")
        #expect(ends.all == [true])
        all.cancel()
        slow.cancel()
    }

    @Test("passEnded follows each sample's updates, before the next sample's")
    func passEnds() async throws {
        let manager = try MotionManager(source: .samples(indexedSamples(count: 500), pacing: .asFastAsConsumed))
        let pending = LockedState<[Int]>([])
        let passes = Recorder<[Int]>()
        let ends = Recorder<Bool>()
        let subscription = manager.subscribeOnProducer(
            .samples(.all), interval: 0.02,
            receive: { record in
                if case .sample(let sample) = record { pending.withLock { $0.append(sampleIndex(sample.acceleration!)) } }
            },
            passEnded: { passes.append(pending.withLock { pending in defer { pending = [] }; return pending }) },
            ended: { _ in ends.append(true) })
        #expect(await eventually { ends.count == 1 })
        #expect(passes.all == stride(from: 0, to: 500, by: 2).map { [$0] }, "one pass per sample given, that sample")
        #expect(pending.withLock { $0 }.isEmpty)
        subscription.cancel()
    }

    @Test("A bad trace row ends the subscription with an error naming the line, after the rows before it")
    func errorAfterRows() async throws {
        let path = try temporaryTrace("t,ax,ay,az\n0,0,0,-1\n0.01,0,0,-1\n0.02,0,zero,-1\n0.03,0,0,-1\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let manager = try MotionManager(source: .trace(path, pacing: .asFastAsConsumed))
        let timestamps = Recorder<Double>()
        let errors = Recorder<MotionError>()
        let subscription = manager.subscribeOnProducer(
            .samples(.all), interval: 0, receive: { timestamps.append($0.timestamp) },
            ended: { end in if case .failure(let error) = end { errors.append(error) } })
        #expect(await eventually { errors.count == 1 })
        #expect(timestamps.all == [0, 0.01])
        #expect(errors.all.first?.location?.line == 4)
        subscription.cancel()
    }

    @Test("Cancelled from inside receive: no call after it, and no end")
    func cancelFromReceive() async throws {
        // Paced on a manual clock: nothing after the first sample moves until the clock does.
        let clock = ManualClock()
        let manager = try MotionManager(source: .samples(indexedSamples(count: 1000)), clock: clock)
        let calls = Atomic<Int>(0)
        let ends = Atomic<Int>(0)
        let holder = LockedState<ProducerSubscription?>(nil)
        let subscription = manager.subscribeOnProducer(
            .samples(.all), interval: 0,
            receive: { _ in
                if calls.add(1, ordering: .sequentiallyConsistent).newValue == 5 { holder.withLock { $0 }?.cancel() }
            },
            ended: { _ in ends.add(1, ordering: .sequentiallyConsistent) })
        holder.withLock { $0 = subscription }
        // A second subscription keeps the replay going to its end, so a call after the cancel would be seen.
        let finished = Atomic<Bool>(false)
        let other = manager.subscribeOnProducer(
            .samples(.all), interval: 0, receive: { _ in },
            ended: { _ in finished.store(true, ordering: .sequentiallyConsistent) })
        await clock.sleepers(atLeast: 1)
        clock.advance(by: .seconds(1000))
        #expect(await eventually { finished.load(ordering: .sequentiallyConsistent) })
        #expect(calls.load(ordering: .sequentiallyConsistent) == 5)
        #expect(ends.load(ordering: .sequentiallyConsistent) == 0)
        other.cancel()
    }

    /// The two ways to make a synchronous buffer: a scheduler that drains at once, and the direct handler.
    static func synchronousBuffers(
        _ handler: @escaping DeliveryBuffer<Int>.Handler, ended: (@Sendable () -> Void)? = nil
    ) -> [DeliveryBuffer<Int>] {
        [
            DeliveryBuffer<Int>(policy: .bufferingNewest(8), scheduler: { drain in drain() }, handler: handler, ended: ended),
            DeliveryBuffer<Int>(policy: .bufferingNewest(8), synchronousHandler: handler, ended: ended),
        ]
    }

    @Test("A synchronous buffer hands over what was primed before anything sent later, once", arguments: [0, 1])
    func primedFirst(kind: Int) {
        let received = Recorder<Int>()
        let handler: DeliveryBuffer<Int>.Handler = { value, _ in if let value { received.append(value) } }
        let buffer = Self.synchronousBuffers(handler)[kind]
        buffer.prime(1)
        #expect(received.all.isEmpty, "primed, not handed over")
        buffer.send(2)
        #expect(received.all == [1, 2], "the primed element first, at the next send")
        buffer.deliverPrimed()
        #expect(received.all == [1, 2], "nothing twice")
        let other = Self.synchronousBuffers(handler)[kind]
        other.prime(3)
        other.deliverPrimed()
        #expect(received.all == [1, 2, 3])
    }

    @Test("A synchronous handler on the sender's thread; its own sends follow in order; the end once", arguments: [0, 1])
    func synchronousHandler(kind: Int) {
        let received = Recorder<Int>()
        let threads = Recorder<Bool>()
        let ends = Recorder<Int>()
        let sender = pthread_self()
        let box = LockedState<DeliveryBuffer<Int>?>(nil)
        let buffer = Self.synchronousBuffers(
            { value, _ in
                guard let value else { return }
                threads.append(pthread_equal(pthread_self(), sender) != 0)
                received.append(value)
                if value == 1 { box.withLock { $0 }?.send(10) }  // sent from inside the handler
            }, ended: { ends.append(1) })[kind]
        box.withLock { $0 = buffer }
        #expect(buffer.send(1))
        #expect(received.all == [1, 10], "the handler's own send after it returns, not nested")
        #expect(buffer.send(2))
        #expect(received.all == [1, 10, 2])
        #expect(threads.all == [true, true, true])
        buffer.finish(.success(()))
        #expect(ends.all == [1])
        #expect(!buffer.send(3), "closed after the end")
        let stopped = Self.synchronousBuffers({ value, _ in if let value { received.append(value) } })[kind]
        stopped.stopHandler()
        #expect(!stopped.send(4))
        #expect(received.all == [1, 10, 2])
        box.withLock { $0 = nil }
    }
}
