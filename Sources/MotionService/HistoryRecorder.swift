import Motion
package import MotionCore
package import MotionStore
import MotionAlgorithms
import MotionSystem
import MotionTrace

/// What `motiond --history DIR` records (`Docs/History.md`).
package struct HistoryConfiguration: Sendable {
    /// The store's directory.
    package var directory: String
    /// The interval of the recorded samples, in seconds. Default 0.02 s (50 Hz, as Core Motion's
    /// `CMSensorRecorder`); every device sample when the device is slower.
    package var interval: Double
    /// The sensors recorded. Default the accelerometer.
    package var sensors: SensorSet
    /// Device motion recorded too, in this frame, at ``interval``; `nil` (the default) for none.
    package var deviceMotion: AttitudeReferenceFrame?
    /// Whether shakes and device-orientation changes are recorded too. Default no.
    package var events: Bool
    /// Retention and the store's other settings.
    package var store: MotionStore.Configuration

    package init(
        directory: String, interval: Double = 0.02, sensors: SensorSet = .accelerometer,
        deviceMotion: AttitudeReferenceFrame? = nil, events: Bool = false,
        store: MotionStore.Configuration = MotionStore.Configuration()
    ) {
        self.directory = directory
        self.interval = interval
        self.sensors = sensors
        self.deviceMotion = deviceMotion
        self.events = events
        self.store = store
    }

    /// What is recorded, for the log and the store's label: `accel`, `accel, device motion (magnetic-north), events`.
    var summary: String {
        var parts = ["\(sensors)"]
        if let deviceMotion { parts.append("device motion (\(deviceMotion.shortName))") }
        if events { parts.append("events") }
        return parts.joined(separator: ", ")
    }
}

/// Records the service's samples (and device motion and events, when asked) into a ``MotionStore`` through a
/// ``QueuedSubscription`` at the history's interval (so the device runs at least at that rate while the service
/// runs): the store is written every half second on the subscription's thread, never on the device's, so a SIGKILL
/// loses at most about half a second.
final class HistoryRecorder: Sendable {
    private let subscription: QueuedSubscription
    private let store: MotionStore
    private let log: @Sendable (String) -> Void

    /// Opens the store (throwing when it cannot be written: the service then does not start) and starts recording.
    init(_ configuration: HistoryConfiguration, manager: MotionManager, log: @escaping @Sendable (String) -> Void)
        throws(MotionError)
    {
        var storeConfiguration = configuration.store
        if storeConfiguration.label.isEmpty { storeConfiguration.label = "motiond \(configuration.summary)" }
        let store = try MotionStore(directory: configuration.directory, clock: .boottime, configuration: storeConfiguration)
        self.store = store
        self.log = log
        var kinds: [(kind: MotionRecordKind, interval: Double)] = [(.samples(configuration.sensors), configuration.interval)]
        if let frame = configuration.deviceMotion { kinds.append((.deviceMotion(frame), configuration.interval)) }
        if configuration.events { kinds += [(.shake, 0), (.orientation, 0)] }
        // One queue for every kind: the records in the order the device's thread made them, so that the events of
        // two kinds reach the store in time order.
        subscription = QueuedSubscription(
            manager: manager, kinds: kinds, limit: storeConfiguration.maximumPendingSamples, name: "history", log: log,
            drain: { records in
                for record in records {
                    if let event = Self.append(record, to: store) { log("history: \(event)") }
                }
                if let event = store.flush() { log("history: \(event)") }
            })
        log("history: recording \(configuration.summary) every \(configuration.interval) s into \(configuration.directory)")
    }

    /// Appends one record: samples and device motion as they are, shakes and orientation changes as the events
    /// a `shake` or `orientation` stream gives (UIKit's orientation names).
    private static func append(_ record: MotionRecord, to store: MotionStore) -> MotionStore.Event? {
        switch record {
        case .sample(let sample):
            return store.append(sample)
        case .deviceMotion(let motion):
            return store.append(motion)
        case .shake(let shake):
            return store.appendEvent(type: "shake", timestamp: shake.timestamp, fields: OutputRecords.fields(of: shake))
        case .orientation(let change):
            var event: MotionStore.Event?
            for report in OutputRecords.reports(of: change, iioSensorProxyNames: false) {
                event =
                    store.appendEvent(
                        type: report.type, timestamp: change.timestamp,
                        fields: [(report.type, .string(report.value)), ("previous", .string(report.previous))]) ?? event
            }
            return event
        case .steps, .activity:
            return nil
        }
    }

    /// Stops recording: what is queued is written, the store flushed to the disk and closed.
    func stop() async {
        await subscription.stop()
        do {
            try store.close()
        } catch {
            log("history: closing the store: \(error)")
        }
    }
}
