import Motion
package import MotionCore
import MotionAlgorithms
import MotionDBus
import MotionIIO
import MotionProtocol

#if canImport(Glibc)
import Glibc
#endif

/// What `motiond` serves and from where.
package struct ServiceConfiguration: Sendable {
    /// The devices: `auto` (one per sensor) or a device's name, label, id, sysfs path or `/dev` node.
    package var device: String
    /// Also use accelerometers in the base of a convertible.
    package var includeBase: Bool
    /// The rules of `AccelerometerOrientation` and `AccelerometerTilt`.
    package var orientationRules: OrientationRules
    /// The folder of the saved calibration (`calibration.json`), or `nil` to neither load nor save one. systemd
    /// passes `$STATE_DIRECTORY` (`/var/lib/motiond`).
    package var stateDirectory: String?
    /// Take the bus name from a running owner that allows replacement (iio-sensor-proxy does).
    package var replace: Bool
    /// How long a first `Claim…` waits for the sensor's first value before it fails, in seconds.
    package var claimTimeout: Double
    /// The group whose members may open raw streams faster than 25 Hz (root may too).
    package var highRateGroup: String
    /// Whether polkit is asked who may claim sensors, open streams and have high rates.
    package var polkit: PolkitUse
    /// Seconds of samples per wake-up of the device (`CaptureConfiguration/batchDuration`: the buffer watermark
    /// is rate × this, at least one scan). Lower cuts the latency of every stream, higher cuts CPU time.
    package var batchDuration: Double
    /// Cut the batch to the streams' fastest interval when that is shorter than ``batchDuration``
    /// (`DeviceSourceConfiguration/batchWithinInterval`): a stream's record waits in the device's buffer at most
    /// one interval of the fastest stream. On by default: a client at 1 ms gets each record within about a
    /// millisecond of the sample (Docs/Performance.md, "motiond").
    package var lowLatency: Bool
    /// What one client, one user and everyone together may hold (`Docs/Service.md`, "Limits").
    package var limits: ServiceLimits
    /// The history to record (`--history DIR`), or `nil` for none (`Docs/History.md`).
    package var history: HistoryConfiguration?
    /// What to publish to an MQTT broker (`--publish-broker URL`), or `nil` for nothing.
    package var publish: PublishConfiguration?

    package init(
        device: String = "auto", includeBase: Bool = false, orientationRules: OrientationRules = .swiftMotion,
        stateDirectory: String? = nil, replace: Bool = false, claimTimeout: Double = 10,
        highRateGroup: String = "motion", polkit: PolkitUse = .auto, batchDuration: Double = 0.05,
        lowLatency: Bool = true, limits: ServiceLimits = ServiceLimits(), history: HistoryConfiguration? = nil,
        publish: PublishConfiguration? = nil
    ) {
        self.history = history
        self.publish = publish
        self.limits = limits
        self.lowLatency = lowLatency
        self.highRateGroup = highRateGroup
        self.polkit = polkit
        self.batchDuration = batchDuration
        self.device = device
        self.includeBase = includeBase
        self.orientationRules = orientationRules
        self.stateDirectory = stateDirectory
        self.replace = replace
        self.claimTimeout = claimTimeout
    }

    /// The calibration file in ``stateDirectory``.
    package var calibrationPath: String? { stateDirectory.map { $0 + "/calibration.json" } }
}

/// The motion service: one `MotionManager` over the devices, served on the D-Bus system bus as
/// `net.hadess.SensorProxy` (`Docs/Service.md`).
package enum MotionDaemon {
    /// The signals that stop the service cleanly. Block them (`blockStopSignals()`) first thing in `main`.
    package static let stopSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Blocks ``stopSignals`` in this thread and every thread created later, so that only the service's loop
    /// takes them; call before anything starts a thread.
    package static func blockStopSignals() { DBusEventLoop.blockSignals(stopSignals) }

    /// Runs until `SIGTERM`, `SIGINT` or `SIGHUP`, until another process takes the bus name, or until the bus
    /// goes away; then stops the devices, saves the calibration and returns. `log` gets one line per event.
    /// Throws when the service cannot start (no bus, name owned, no permission) or cannot save its state.
    package static func run(
        _ configuration: ServiceConfiguration, log: @escaping @Sendable (String) -> Void
    ) async throws(MotionError) {
        // A stream whose client closed its end fails its next write with EPIPE, and ends (`MotionStream`).
        signal(SIGPIPE, SIG_IGN)
        var calibration: DeviceMotionFilter.State? = nil
        if let path = configuration.calibrationPath {
            do {
                calibration = try CalibrationFile.load(from: path)
                if calibration != nil { log("calibration restored from \(path)") }
            } catch {
                log("ignoring the saved calibration: \(error)")
            }
        }
        var limits = configuration.limits
        let descriptors = raiseDescriptorLimit()
        if descriptors < limits.streams + ServiceLimits.reservedDescriptors {
            limits.streams = max(0, descriptors - ServiceLimits.reservedDescriptors)
            log(
                "at most \(limits.streams) streams in all: the process may open \(descriptors) files "
                    + "(LimitNOFILE=), and keeps \(ServiceLimits.reservedDescriptors) for the bus and the devices")
        }
        let serviceLimits = limits
        var motion = MotionConfiguration()
        motion.calibration = calibration
        let source = MotionSource.device(
            configuration.device, configuration: DeviceSourceConfiguration(
                includeBase: configuration.includeBase,
                capture: CaptureConfiguration(batchDuration: configuration.batchDuration),
                batchWithinInterval: configuration.lowLatency),
            events: { event in log(event.description) })
        let manager = try MotionManager(source: source, configuration: motion)

        // Watching starts before the services list the devices, so that nothing added in between is missed.
        let monitor: IIODeviceMonitor?
        do {
            monitor = try IIODeviceMonitor(includeBase: configuration.includeBase)
        } catch {
            monitor = nil
            log("not watching for devices coming and going: \(error)")
        }
        // The history's store first: a store that cannot be written (or that another process writes) stops the start.
        var history: HistoryRecorder?
        if let historyConfiguration = configuration.history {
            history = try HistoryRecorder(historyConfiguration, manager: manager, log: log)
        }
        var publisher: ServicePublisher?
        let loop: DBusEventLoop
        do throws(MotionError) {
            if let publishConfiguration = configuration.publish {
                publisher = try ServicePublisher(publishConfiguration, manager: manager, log: log)
            }
            loop = try DBusEventLoop()
        } catch {
            await publisher?.stop()
            await history?.stop()
            throw error
        }
        let stopping = LockedState(false)
        let services: LoopBound<Services>
        do throws(MotionError) {
            services = try await loop.submit { () throws(MotionError) -> LoopBound<Services> in
                let connection = try DBusConnection.system(on: loop)
                connection.maximumHeldCalls = serviceLimits.heldCalls
                let authorizer = PolkitAuthorizer(
                    connection: connection, use: configuration.polkit, limits: serviceLimits, log: log)
                let proxy = SensorProxyService(
                    connection: connection, manager: manager, rules: configuration.orientationRules,
                    claimTimeout: configuration.claimTimeout, authorizer: authorizer, limits: serviceLimits, log: log)
                let motion = Motion1Service(
                    connection: connection, manager: manager, includeBase: configuration.includeBase,
                    highRateGroup: configuration.highRateGroup, limits: serviceLimits, authorizer: authorizer,
                    history: configuration.history, log: log)
                try proxy.register()
                try motion.register()
                let lost = { (name: String) in
                    log("another process took \(name): stopping")
                    stopping.withLock { $0 = true }
                    loop.stop()
                }
                try connection.requestName(
                    SensorProxyInterface.busName, replaceExisting: configuration.replace, allowReplacement: true,
                    onLost: { lost(SensorProxyInterface.busName) })
                try connection.requestName(
                    Motion1Interface.name, replaceExisting: configuration.replace, allowReplacement: true,
                    onLost: { lost(Motion1Interface.name) })
                proxy.announce()
                log(
                    "serving \(SensorProxyInterface.busName) and \(Motion1Interface.name) as \(connection.uniqueName): "
                        + "accelerometer \(proxy.hasAccelerometer ? "present" : "absent"), compass "
                        + "\(proxy.hasCompass ? "present" : "absent"), orientation rules "
                        + configuration.orientationRules.rawValue)
                return LoopBound(Services(connection: connection, proxy: proxy, motion: motion), loop: loop)
            }
        } catch {
            await publisher?.stop()
            await history?.stop()
            throw error
        }
        // Devices coming and going: the Has… properties follow (claims and streams survive, and resume when a
        // matching device is back: the source waits for it).
        let watcher = Task { [monitor] in
            guard let monitor else { return }
            do throws(MotionError) {
                for try await event in monitor {
                    log("device \(event.summary)")
                    // The kernel sends `remove` before it takes the device out of sysfs: a listing made at once
                    // may still show it, so the removed device is left out by name.
                    let removed: String? = if case .removed(_, let path) = event { path } else { nil }
                    loop.execute { services.value.proxy.devicesChanged(removed: removed) }
                }
            } catch {
                log("stopped watching for devices coming and going: \(error)")
            }
        }
        defer { watcher.cancel() }
        try loop.handleSignals(stopSignals) { signal in
            log("signal \(signal): stopping")
            stopping.withLock { $0 = true }
            loop.execute {
                services.value.proxy.shutdown()
                services.value.motion.shutdown()
                services.value.connection.close()
                loop.stop()
            }
        }
        await loop.wait()
        let busLost = !stopping.withLock { $0 }
        if busLost { log("the D-Bus connection was lost: stopping") }
        await publisher?.stop()
        await history?.stop()
        await manager.stopAllUpdates()
        if let path = configuration.calibrationPath, let state = manager.calibration {
            try CalibrationFile.save(state, to: path)
            log("calibration saved to \(path)")
        }
        // A failure, so that the unit's Restart=on-failure brings the service back.
        if busLost {
            throw MotionError(
                .ioFailure, "the D-Bus connection was lost (the bus stopped, or dropped this connection)")
        }
    }
}

/// Raises the soft limit of open files to the hard one (a service's descriptors are its streams); returns the
/// limit in force.
private func raiseDescriptorLimit() -> Int {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    return Int(clamping: limit.rlim_cur)
}

/// What the service serves on its connection.
struct Services {
    let connection: DBusConnection
    let proxy: SensorProxyService
    let motion: Motion1Service
}

extension IIODeviceChange {
    /// `added iio:device0 (lis3dh)`, `removed iio:device0`, `changed iio:device0 (lis3dh)`.
    var summary: String {
        switch self {
        case .added(let device): "added \(device.id) (\(device.name))"
        case .removed(let id, _): "removed \(id)"
        case .changed(let device): "changed \(device.id) (\(device.name))"
        }
    }
}
