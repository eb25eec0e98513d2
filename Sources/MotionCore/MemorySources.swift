/// ``MotionSource/samples(_:pacing:)``: samples in memory.
struct SampleArrayProvider: MotionSampleProvider {
    let samples: [MotionSample]
    var isLive: Bool { false }
    var description: String { "\(samples.count) samples" }

    func makeReader() -> any MotionSampleReader { Reader(samples: samples) }

    final class Reader: MotionSampleReader {
        let samples: [MotionSample]
        private var next = 0

        init(samples: [MotionSample]) { self.samples = samples }

        func availableSensors() -> SensorSet { samples.reduce(into: SensorSet()) { $0.formUnion($1.sensors) } }

        func next(_ demand: SourceDemand) -> SampleSourceStep {
            guard next < samples.count else { return .ended }
            defer { next += 1 }
            return .sample(samples[next])
        }

        func wait(_ demand: SourceDemand) async {}

        func putBack(_ sample: MotionSample) { next -= 1 }
    }
}

/// ``MotionSource/sequence(_:pacing:)``: a caller's sequence, replayed as a recording.
struct SampleSequenceProvider<Samples: Sequence & Sendable>: MotionSampleProvider
where Samples.Element == MotionSample {
    let samples: Samples
    init(_ samples: Samples) { self.samples = samples }
    var isLive: Bool { false }
    var description: String { "\(Samples.self)" }

    func makeReader() -> any MotionSampleReader { Reader(samples.makeIterator()) }

    final class Reader: MotionSampleReader {
        private var iterator: Samples.Iterator
        /// A sample taken but not delivered: the first (it tells the sensors), or one put back.
        private var pending: MotionSample?
        private let sensors: SensorSet

        init(_ iterator: Samples.Iterator) {
            self.iterator = iterator
            pending = self.iterator.next()
            sensors = pending?.sensors ?? []
        }

        func availableSensors() -> SensorSet { sensors }

        func next(_ demand: SourceDemand) -> SampleSourceStep {
            if let sample = pending {
                pending = nil
                return .sample(sample)
            }
            return iterator.next().map { .sample($0) } ?? .ended
        }

        func wait(_ demand: SourceDemand) async {}

        func putBack(_ sample: MotionSample) { pending = sample }
    }
}

/// ``MotionSource/stream(_:)``: a caller's asynchronous sequence, taken as it comes (live).
struct AsyncSampleProvider: MotionSampleProvider {
    private let makeIterator: @Sendable () -> any AsyncSampleIterator
    private let typeName: String

    init<Samples: AsyncSequence & Sendable>(_ samples: Samples) where Samples.Element == MotionSample {
        makeIterator = { IteratorBox(samples.makeAsyncIterator()) }
        typeName = "\(Samples.self)"
    }

    var isLive: Bool { true }
    var description: String { "stream \(typeName)" }

    func makeReader() -> any MotionSampleReader { Reader(makeIterator) }

    final class Reader: MotionSampleReader {
        private let makeIterator: @Sendable () -> any AsyncSampleIterator
        /// Made at the first wait: the sequence is not read before a subscription needs it.
        private var iterator: (any AsyncSampleIterator)?
        private var pending: MotionSample?
        private var ended = false

        init(_ makeIterator: @escaping @Sendable () -> any AsyncSampleIterator) { self.makeIterator = makeIterator }

        func availableSensors() -> SensorSet { [] }

        func next(_ demand: SourceDemand) -> SampleSourceStep {
            if let sample = pending {
                pending = nil
                return .sample(sample)
            }
            return ended ? .ended : .wait
        }

        nonisolated(nonsending) func wait(_ demand: SourceDemand) async throws(MotionError) {
            let iterator = self.iterator ?? makeIterator()
            self.iterator = iterator
            if let sample = try await iterator.next() { pending = sample } else { ended = true }
        }

        func putBack(_ sample: MotionSample) {}  // live: stale once the consumer stopped
    }
}

/// A type-erased iterator over a caller's asynchronous sample sequence, used by one producer at a time (hence
/// the unchecked `Sendable` of its box: it is only ever handed from one producer to the next).
protocol AsyncSampleIterator: AnyObject, Sendable {
    func next() async throws(MotionError) -> MotionSample?
}

final class IteratorBox<Iterator: AsyncIteratorProtocol>: AsyncSampleIterator, @unchecked Sendable where Iterator.Element == MotionSample {
    private var iterator: Iterator

    init(_ iterator: Iterator) {
        self.iterator = iterator
    }

    func next() async throws(MotionError) -> MotionSample? {
        do {
            return try await iterator.next()
        } catch let error as MotionError {
            throw error
        } catch is CancellationError {
            throw MotionError(.cancelled, "the sample stream's consumer was cancelled")
        } catch {
            throw MotionError(.ioFailure, "the sample stream failed: \(error)", underlying: error)
        }
    }
}
