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
        case .device(let selector, let includeBase, let batchDuration):
            input = .device(DeviceInput(selector: selector, includeBase: includeBase, batchDuration: batchDuration))
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

    /// Keeps `sample` for the next producer: it was read but not delivered.
    func putBack(_ sample: MotionSample) {
        pending = sample
    }

    /// Stops a device (its buffer is disabled); recordings keep their place.
    func pause() {
        if case .device(let device) = input { device.close() }
    }
}

/// A live capture, opened on demand and reopened when the wanted rate or sensors change.
final class DeviceInput {
    let selector: DeviceSelector
    let includeBase: Bool
    let batchDuration: Double
    private var capture: IIOCapture?
    private var openedFor: (interval: Double, sensors: SensorSet)?
    private var batch: [MotionSample] = []
    private var nextInBatch = 0

    init(selector: String, includeBase: Bool, batchDuration: Double) {
        self.selector = DeviceSelector(selector)
        self.includeBase = includeBase
        self.batchDuration = batchDuration
    }

    func next(fastestInterval interval: Double, sensors: SensorSet) async throws(MotionError) -> MotionSample? {
        if let openedFor, openedFor.interval != interval || openedFor.sensors != sensors {
            close()
        }
        while nextInBatch >= batch.count {
            let capture: IIOCapture
            if let opened = self.capture {
                capture = opened
            } else {
                capture = try open(interval: interval, sensors: sensors)
            }
            batch = try await capture.next()
            nextInBatch = 0
        }
        defer { nextInBatch += 1 }
        return batch[nextInBatch]
    }

    private func open(interval: Double, sensors: SensorSet) throws(MotionError) -> IIOCapture {
        let devices = try IIODeviceDiscovery.devices(includeBase: includeBase)
        let wanted = sensors.isEmpty ? SensorSet.all : sensors
        let sources = selector.sources(from: devices, sensors: wanted)
        guard !sources.isEmpty else { throw selector.noMatchError(among: devices, sensors: wanted) }
        let configuration = CaptureConfiguration(
            rate: interval > 0 ? 1 / interval : nil, batchDuration: batchDuration)
        let capture = try IIOCapture(sources: sources, configuration: configuration)
        self.capture = capture
        openedFor = (interval, sensors)
        return capture
    }

    /// Disables the buffers; the next read opens the device again. Samples of the current batch not yet
    /// delivered are kept.
    func close() {
        capture?.close()
        capture = nil
        openedFor = nil
        batch = []  // stale once the device has stopped
        nextInBatch = 0
    }
}
