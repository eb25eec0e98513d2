import MotionCore
import MotionIIO
import MotionTrace

/// The samples of a source, read by one producer task at a time (the engine hands the feed from one producer
/// to the next, which waits for the previous one to end), hence `@unchecked Sendable`.
final class SampleFeed: @unchecked Sendable {
    private enum Input {
        case trace(TraceReader)
        case samples([MotionSample], next: Int)
        case sequence(AnyIterator<MotionSample>)
        case device(DeviceInput)
        case service(ServiceInput)
        case live(any LiveSampleIterator)
        case liveNotStarted(@Sendable () -> any LiveSampleIterator)
    }

    private var input: Input
    /// Samples taken but not processed when their producer was cancelled (the replay pauses on them), and a
    /// caller's sequence's next sample.
    private var pending: [MotionSample] = []
    /// A caller's sequence has ended.
    private var sequenceEnded = false
    /// The sensors the source can deliver, when known without opening a device.
    let knownSensors: SensorSet?
    /// Where the producer runs: the capture's reactor thread for a device (it wakes there when data arrives), a
    /// thread of the trace's own for a trace (its reads block), the cooperative pool otherwise.
    let executor: (any TaskExecutor)?
    private let traceThread: SourceThread?

    init(_ source: MotionSource) throws(MotionError) {
        switch source.kind {
        case .trace(let path, let lenient):
            let reader = try TraceReader(path: path, options: .init(lenient: lenient))
            input = .trace(reader)
            knownSensors = reader.sensors
            traceThread = SourceThread()
            executor = traceThread
        case .samples(let samples):
            input = .samples(samples, next: 0)
            knownSensors = samples.reduce(into: SensorSet()) { $0.formUnion($1.sensors) }
            (traceThread, executor) = (nil, nil)
        case .sequence(let makeIterator, _):
            // The first sample tells the sensors; it is kept for the replay.
            let iterator = makeIterator()
            let first = iterator.next()
            input = .sequence(iterator)
            pending = first.map { [$0] } ?? []
            knownSensors = first?.sensors ?? []
            (traceThread, executor) = (nil, nil)
        case .device(let selector, _, let options):
            input = .device(DeviceInput(selector: selector, options: options))
            knownSensors = nil
            (traceThread, executor) = (nil, IIOCapture.executor)
        case .live(let makeIterator):
            input = .liveNotStarted(makeIterator)
            knownSensors = nil
            (traceThread, executor) = (nil, nil)
        case .service(let busAddress):
            input = .service(ServiceInput(busAddress: busAddress))
            knownSensors = nil
            (traceThread, executor) = (nil, IIOCapture.executor)
        }
    }

    deinit {
        traceThread?.stop()
    }

    /// Keeps `sample` for the next producer: it was read but not processed. A device's is stale once it has
    /// stopped: dropped.
    func putBack(_ sample: MotionSample) {
        if case .device = input { return }
        if case .service = input { return }
        pending.insert(sample, at: 0)
    }

    /// Stops a device (its buffer is disabled); recordings keep their place.
    func pause() {
        if case .device(let device) = input { device.close() }
        if case .service(let service) = input { service.close() }
    }

    /// The sensors of the motion service, for a service source (a call on the bus); `nil` for other sources.
    func serviceSensors() -> SensorSet? {
        guard case .service(let service) = input else { return nil }
        return (try? service.sensors()) ?? []
    }
}

/// A live device session, opened on demand and reopened when the wanted rate or sensors change.
final class DeviceInput {
    let selector: DeviceSelector
    let options: DeviceOptions
    private var session: IIODeviceSession?
    /// The fastest interval, the capture configuration it gave and the sensors the session was opened with.
    private var openedFor: (interval: Double, capture: CaptureConfiguration, sensors: SensorSet)?
    private var batch: [MotionSample] = []
    private var nextInBatch = 0

    init(selector: String, options: DeviceOptions) {
        self.selector = DeviceSelector(selector)
        self.options = options
    }

    /// The next sample of the current batch, or `nil` when it is used up. A change of the wanted rate or sensors
    /// takes effect between batches: once the batch at hand is delivered, the device is closed, to reopen at the
    /// next ``fetch(fastestInterval:sensors:)``; no sample already read is dropped for it.
    func nextAtHand(fastestInterval interval: Double, sensors: SensorSet) -> MotionSample? {
        // A new fastest interval reopens the device only when it changes the capture (its rate, or its batch).
        if nextInBatch >= batch.count, let opened = openedFor {
            if opened.sensors != sensors {
                close()
            } else if opened.interval != interval {
                if opened.capture != capture(for: interval) { close() } else { openedFor?.interval = interval }
            }
        }
        guard nextInBatch < batch.count else { return nil }
        defer { nextInBatch += 1 }
        return batch[nextInBatch]
    }

    /// Waits for the next batch, opening the devices if needed; device events go to the source's handler as they
    /// come.
    func fetch(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) {
        while nextInBatch >= batch.count {
            let session: IIODeviceSession
            if let opened = self.session {
                session = opened
            } else {
                session = try open(interval: interval, sensors: sensors)
            }
            switch try await session.next() {
            case .samples(let samples):
                batch = samples
                nextInBatch = 0
            case .event(let event):
                options.events?(event)  // on the producer task, under no lock
            }
        }
    }

    /// The capture for a fastest interval of `interval`: the rate follows it unless the configuration fixes one,
    /// and so does the batch with ``DeviceSourceConfiguration/batchWithinInterval``.
    private func capture(for interval: Double) -> CaptureConfiguration {
        var capture = options.configuration.capture
        // The rate a subscription's interval asks, never below 10 Hz (iio-sensor-proxy's floor: a slower device
        // delays every other client's first sample, and orientation needs it), nor above 100 kHz.
        if capture.rate == nil && interval > 0 { capture.rate = min(max(1 / interval, 10), 100_000) }
        if options.configuration.batchWithinInterval && interval > 0 {
            capture.batchDuration = min(capture.batchDuration, interval)
        }
        return capture
    }

    private func open(interval: Double, sensors: SensorSet) throws(MotionError) -> IIODeviceSession {
        let capture = capture(for: interval)
        let session = try IIODeviceSession(
            selector: selector, sensors: sensors.isEmpty ? .all : sensors,
            includeBase: options.configuration.includeBase, configuration: capture,
            reconnect: options.configuration.reconnect)
        self.session = session
        openedFor = (interval, capture, sensors)
        return session
    }

    /// Disables the buffers (or ends a wait for a device); the next read opens the devices again.
    func close() {
        session?.close()
        session = nil
        openedFor = nil
        batch = []  // stale once the device has stopped
        nextInBatch = 0
    }
}

extension SampleFeed: SampleSource {
    /// The next sample at hand: a recording's next (a trace's read on the trace's own thread), a device's from its
    /// current batch, a caller's sequence's once awaited. `MotionError.Code.cancelled` once the producer's task
    /// is cancelled, so a cancelled producer takes nothing more (the replay resumes there).
    func next(_ demand: SampleDemand) throws(MotionError) -> SampleSourceStep {
        if Task.isCancelled { throw MotionError(.cancelled, "the producer was cancelled") }
        if !pending.isEmpty { return .sample(pending.removeFirst()) }
        switch input {
        case .trace(let reader):
            guard let sample = try reader.next() else { return .ended }
            return .sample(sample)
        case .samples(let samples, let next):
            guard next < samples.count else { return .ended }
            input = .samples(samples, next: next + 1)
            return .sample(samples[next])
        case .sequence(let iterator):
            guard let sample = iterator.next() else { return .ended }
            return .sample(sample)
        case .device(let device):
            guard let sample = device.nextAtHand(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
            else { return .wait }
            return .sample(sample)
        case .service(let service):
            guard let sample = service.nextAtHand(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
            else { return .wait }
            return .sample(sample)
        case .live, .liveNotStarted:
            return sequenceEnded ? .ended : .wait
        }
    }

    /// Waits for a device's next batch, or a caller's sequence's next sample.
    nonisolated(nonsending) func wait(_ demand: SampleDemand) async throws(MotionError) {
        switch input {
        case .device(let device):
            try await device.fetch(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
        case .service(let service):
            try await service.fetch(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
        case .live(let iterator):
            try await take(from: iterator)
        case .liveNotStarted(let makeIterator):
            let iterator = makeIterator()
            input = .live(iterator)
            try await take(from: iterator)
        case .trace, .samples, .sequence:
            break
        }
    }

    private func take(from iterator: any LiveSampleIterator) async throws(MotionError) {
        if let sample = try await iterator.next() { pending.append(sample) } else { sequenceEnded = true }
    }
}
