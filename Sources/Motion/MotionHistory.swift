public import MotionCore
public import MotionStore
import MotionSystem

/// Motion recorded earlier, queried as Core Motion's `CMSensorRecorder.accelerometerData(from:to:)` is: from a
/// store that `motiond --history` or ``MotionManager/record(into:sensors:interval:events:)`` writes
/// (`Docs/History.md`).
///
/// ```swift
/// let history = MotionHistory(directory: "/var/lib/motiond/history")
/// for try await batch in history.accelerometerData(from: now - 3600, to: now) {   // Unix seconds
///     for data in batch { print(data.timestamp, data.acceleration) }               // Unix seconds, g
/// }
/// ```
///
/// The store is read a frame (about a second of samples) at a time on a thread of the query's own, so a long
/// query holds little memory and never blocks Swift's cooperative threads. Timestamps are Unix seconds (each
/// sample's own clock plus the offset measured when it was written), so a history spanning reboots stays in order.
/// Damaged parts of the store are skipped; `damage` hears of each.
public struct MotionHistory: Sendable {
    /// The store's directory.
    public let directory: String

    /// The history in `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// The recorded accelerometer readings from `start` to `end` (Unix seconds), oldest first, in batches.
    public func accelerometerData(
        from start: Double, to end: Double, damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) -> MotionHistoryBatches<AccelerometerData> {
        MotionHistoryBatches(directory: directory, start: start, end: end, damage: damage) { batch in
            batch.samples.compactMap { sample in
                sample.acceleration.map {
                    AccelerometerData(timestamp: sample.timestamp + batch.clockOffset, acceleration: $0)
                }
            }
        }
    }

    /// The recorded samples (every sensor recorded) from `start` to `end` (Unix seconds), oldest first, in batches.
    public func samples(
        from start: Double, to end: Double, damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) -> MotionHistoryBatches<MotionSample> {
        MotionHistoryBatches(directory: directory, start: start, end: end, damage: damage) { batch in
            Self.inUnixTime(batch.samples, batch.clockOffset, \.timestamp)
        }
    }

    /// The recorded device motion (`motiond --history-device-motion`, or `MotionStore.append(_:)` of device motion)
    /// from `start` to `end` (Unix seconds, as its timestamps), oldest first, in batches.
    public func deviceMotion(
        from start: Double, to end: Double, damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) -> MotionHistoryBatches<DeviceMotion> {
        MotionHistoryBatches(directory: directory, start: start, end: end, damage: damage) { batch in
            Self.inUnixTime(batch.deviceMotion, batch.clockOffset, \.timestamp)
        }
    }

    /// The recorded events (`motiond --history-events`: shakes and orientation changes) from `start` to `end` (Unix
    /// seconds, as their timestamps), oldest first, in batches.
    public func events(
        from start: Double, to end: Double, damage: (@Sendable (StoreDamage) -> Void)? = nil
    ) -> MotionHistoryBatches<StoredEvent> {
        MotionHistoryBatches(directory: directory, start: start, end: end, damage: damage) { batch in
            Self.inUnixTime(batch.events, batch.clockOffset, \.timestamp)
        }
    }

    /// `records` with their timestamps moved by a batch's clock offset into Unix time.
    private static func inUnixTime<Record>(
        _ records: [Record], _ offset: Double, _ timestamp: WritableKeyPath<Record, Double>
    ) -> [Record] {
        records.map { record in
            var record = record
            record[keyPath: timestamp] += offset
            return record
        }
    }
}

/// Batches of recorded readings, oldest first (``MotionHistory``). Each iteration reads the store again.
public struct MotionHistoryBatches<Reading: Sendable>: AsyncSequence, Sendable {
    public typealias Element = [Reading]
    public typealias Failure = MotionError

    let directory: String
    let start: Double
    let end: Double
    let damage: (@Sendable (StoreDamage) -> Void)?
    /// The readings of one batch of the store, stamped in Unix time.
    let transform: @Sendable (StoredSamples) -> [Reading]

    init(
        directory: String, start: Double, end: Double, damage: (@Sendable (StoreDamage) -> Void)?,
        transform: @escaping @Sendable (StoredSamples) -> [Reading]
    ) {
        self.directory = directory
        self.start = start
        self.end = end
        self.damage = damage
        self.transform = transform
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: self)
    }

    /// Reads the next non-empty batch on the query's own thread.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let batches: MotionHistoryBatches
        private let reading: QueryReader

        init(batches: MotionHistoryBatches) {
            self.batches = batches
            reading = QueryReader(directory: batches.directory, start: batches.start, end: batches.end)
        }

        public mutating func next() async throws(MotionError) -> [Reading]? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(MotionError) -> [Reading]? {
            let batches = self.batches
            let reading = self.reading
            let result: Result<[Reading]?, MotionError> = await withTaskExecutorPreference(reading.thread) {
                reading.next(batches)
            }
            return try result.get()
        }
    }
}

/// A query's reader and its thread (a ``StoreReader`` blocks on the disk).
final class QueryReader: Sendable {
    let thread = SourceThread()
    private let state: LockedState<State>

    private struct State {
        var reader: StoreReader?
        var error: MotionError?
        var reported = 0
        var finished = false
    }

    init(directory: String, start: Double, end: Double) {
        var state = State()
        do throws(MotionError) {
            state.reader = try StoreReader(directory: directory, from: start, through: end)
        } catch {
            state.error = error
        }
        self.state = LockedState(state)
    }

    deinit { thread.stop() }

    func next<Reading>(_ batches: MotionHistoryBatches<Reading>) -> Result<[Reading]?, MotionError> {
        state.withLock { state in
            if let error = state.error {
                state.error = nil
                state.finished = true
                return .failure(error)
            }
            guard !state.finished, state.reader != nil else { return .success(nil) }
            while true {
                let batch: StoredSamples?
                do throws(MotionError) {
                    batch = try state.reader!.next()
                } catch {
                    state.finished = true
                    return .failure(error)
                }
                let damage = state.reader!.damage
                if let report = batches.damage { damage.dropFirst(state.reported).forEach(report) }
                state.reported = damage.count
                guard let batch else {
                    state.finished = true
                    return .success(nil)
                }
                let readings = batches.transform(batch)
                if !readings.isEmpty { return .success(readings) }
            }
        }
    }
}

extension MotionManager {
    /// Records the source's readings into `store` (Core Motion's `CMSensorRecorder.recordAccelerometer`, for a
    /// program without the motion service) until the source ends or the calling task is cancelled, and returns the
    /// number of samples kept. `store` stays open (the caller closes it); what is pending is written at the end.
    ///
    /// The samples are ``sampleUpdates(sensors:interval:bufferingPolicy:)`` at `interval` seconds (default 0.02:
    /// 50 Hz, as `CMSensorRecorder`), with a 65,536-sample buffer for a slow disk. The store writes a frame about
    /// every second (`MotionStore.Configuration.flushInterval`) on this task; `events` hears when recording pauses
    /// (a full disk) and resumes.
    /// - Throws: The source's error; `invalidArgument` when no sensor is left to record.
    @discardableResult
    public func record(
        into store: MotionStore, sensors: SensorSet = .accelerometer, interval: Double = 0.02,
        events: (@Sendable (MotionStore.Event) -> Void)? = nil
    ) async throws(MotionError) -> Int {
        let recorded = sensors.intersection(engine.availableSensors.isEmpty ? sensors : engine.availableSensors)
        guard !recorded.isEmpty else {
            throw MotionError(.invalidArgument, "nothing to record: \(source) has no \(sensors) sensor")
        }
        let updates = sampleUpdates(sensors: recorded, interval: interval, bufferingPolicy: .bufferingOldest(65_536))
        defer { updates.cancel() }
        var count = 0
        defer { if let event = store.flush() { events?(event) } }
        do {
            for try await sample in updates {
                if let event = store.append(sample) { events?(event) }
                count += 1
            }
        } catch where error.code == .cancelled {
            return count
        }
        return count
    }
}
