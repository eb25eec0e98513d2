import Motion
package import MotionCore
package import MotionStore
import MotionSystem

/// What `motiond --history DIR` records (`Docs/History.md`).
package struct HistoryConfiguration: Sendable {
    /// The store's directory.
    package var directory: String
    /// The interval of the recorded samples, in seconds. Default 0.02 s (50 Hz, as Core Motion's
    /// `CMSensorRecorder`); every device sample when the device is slower.
    package var interval: Double
    /// The sensors recorded. Default the accelerometer.
    package var sensors: SensorSet
    /// Retention and the store's other settings.
    package var store: MotionStore.Configuration

    package init(
        directory: String, interval: Double = 0.02, sensors: SensorSet = .accelerometer,
        store: MotionStore.Configuration = MotionStore.Configuration()
    ) {
        self.directory = directory
        self.interval = interval
        self.sensors = sensors
        self.store = store
    }
}

/// Records the service's samples into a ``MotionStore`` through a ``QueuedSubscription`` at the history's
/// interval (so the device runs at least at that rate while the service runs): the store is written every half
/// second on the subscription's thread, never on the device's, so a SIGKILL loses at most about half a second.
final class HistoryRecorder: Sendable {
    private let subscription: QueuedSubscription
    private let log: @Sendable (String) -> Void

    /// Opens the store (throwing when it cannot be written: the service then does not start) and starts recording.
    init(_ configuration: HistoryConfiguration, manager: MotionManager, log: @escaping @Sendable (String) -> Void)
        throws(MotionError)
    {
        var storeConfiguration = configuration.store
        if storeConfiguration.label.isEmpty { storeConfiguration.label = "motiond \(configuration.sensors)" }
        let store = try MotionStore(directory: configuration.directory, clock: .boottime, configuration: storeConfiguration)
        self.log = log
        subscription = QueuedSubscription(
            manager: manager, sensors: configuration.sensors, interval: configuration.interval,
            limit: storeConfiguration.maximumPendingSamples, name: "history", log: log,
            drain: { samples in
                if let event = store.append(contentsOf: samples) { log("history: \(event)") }
                if let event = store.flush() { log("history: \(event)") }
            },
            finish: {
                do {
                    try store.close()
                } catch {
                    log("history: closing the store: \(error)")
                }
            })
        log("history: recording \(configuration.sensors) every \(configuration.interval) s into \(configuration.directory)")
    }

    /// Stops recording: what is queued is written, the store flushed to the disk and closed.
    func stop() async {
        await subscription.stop(log: log, name: "history")
    }
}
