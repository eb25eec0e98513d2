import MotionCore
import MotionIIO
import MotionTrace

/// The samples of a source, read by one producer task at a time (the engine hands the feed from one producer
/// to the next, which waits for the previous one to end), hence `@unchecked Sendable`.
final class SampleFeed: @unchecked Sendable {
    private enum Input {
        case trace(TraceReader)
        case samples([MotionSample], next: Int)
        case device(DeviceInput)
        case live(any LiveSampleIterator)
        case liveNotStarted(@Sendable () -> any LiveSampleIterator)
    }

    private var input: Input
    /// A sample taken but not yet delivered when its producer was cancelled (the replay pauses on it).
    private var pending: MotionSample?
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
        case .device(let selector, _, let options):
            input = .device(DeviceInput(selector: selector, options: options))
            knownSensors = nil
            (traceThread, executor) = (nil, IIOCapture.executor)
        case .live(let makeIterator):
            input = .liveNotStarted(makeIterator)
            knownSensors = nil
            (traceThread, executor) = (nil, nil)
        }
    }

    deinit {
        traceThread?.stop()
    }

    /// The next sample, or `nil` at the end of a recording. `interval` is the fastest update interval the
    /// subscriptions ask for (seconds, 0 for every sample): a device is (re)opened at the matching rate.
    func next(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) -> MotionSample? {
        if let sample = pending {
            pending = nil
            return sample
        }
        switch input {
        case .trace(let reader):
            return try reader.next()
        case .samples(let samples, let next):
            guard next < samples.count else { return nil }
            input = .samples(samples, next: next + 1)
            return samples[next]
        case .device(let device):
            return try await device.next(fastestInterval: interval, sensors: sensors)
        case .live(let iterator):
            return try await iterator.next()
        case .liveNotStarted(let makeIterator):
            let iterator = makeIterator()
            input = .live(iterator)
            return try await iterator.next()
        }
    }

    /// Keeps `sample` for the next producer: it was read but not processed.
    func putBack(_ sample: MotionSample) {
        pending = sample
    }

    /// Stops a device (its buffer is disabled); recordings keep their place.
    func pause() {
        if case .device(let device) = input { device.close() }
    }
}

/// A live device session, opened on demand and reopened when the wanted rate or sensors change.
final class DeviceInput {
    let selector: DeviceSelector
    let options: DeviceOptions
    private var session: IIODeviceSession?
    private var openedFor: (interval: Double, sensors: SensorSet)?
    private var batch: [MotionSample] = []
    private var nextInBatch = 0

    init(selector: String, options: DeviceOptions) {
        self.selector = DeviceSelector(selector)
        self.options = options
    }

    /// The next sample; device events go to the source's handler as they come.
    func next(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) -> MotionSample? {
        let fixedRate = options.configuration.capture.rate != nil
        if let openedFor, (!fixedRate && openedFor.interval != interval) || openedFor.sensors != sensors {
            close()
        }
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
        defer { nextInBatch += 1 }
        return batch[nextInBatch]
    }

    private func open(interval: Double, sensors: SensorSet) throws(MotionError) -> IIODeviceSession {
        var capture = options.configuration.capture
        if capture.rate == nil && interval > 0 { capture.rate = 1 / interval }
        let session = try IIODeviceSession(
            selector: selector, sensors: sensors.isEmpty ? .all : sensors,
            includeBase: options.configuration.includeBase, configuration: capture,
            reconnect: options.configuration.reconnect)
        self.session = session
        openedFor = (interval, sensors)
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
    func next(_ demand: SampleDemand) async throws(MotionError) -> MotionSample? {
        try await next(fastestInterval: demand.fastestInterval, sensors: demand.sensors)
    }
}
