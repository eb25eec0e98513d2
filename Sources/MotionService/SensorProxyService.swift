import Motion
import MotionAlgorithms
import MotionCore
import MotionDBus
import MotionIIO

#if canImport(Glibc)
import Glibc
#endif

/// Which rules give `AccelerometerOrientation` and `AccelerometerTilt`.
package enum OrientationRules: String, Sendable, CaseIterable {
    /// swift-motion's classifier (`OrientationClassifier`): a low-pass, a dead zone between orientations, an
    /// acceleration gate and a settle time, so that a carried or shaken device does not flap.
    case swiftMotion = "swift-motion"
    /// iio-sensor-proxy's exact rules (`IIOSensorProxyReference`) on the last reading every 0.7 s, as its
    /// drivers poll: no debounce, and its tilt sign (face-up for a device lying screen down, systemd#40119).
    case iioSensorProxy = "iio-sensor-proxy"
}

/// The sensors of iio-sensor-proxy's API, each claimed and released on its own.
enum ProxySensor: String, CaseIterable, Sendable {
    case accelerometer = "Accelerometer"
    case light = "Light"
    case proximity = "Proximity"
    case compass = "Compass"
}

/// iio-sensor-proxy's test sensors (its `drv-fake-compass.c` and `drv-fake-light.c`), which its integration suite
/// turns on with environment variables: with `FAKE_COMPASS` set, a compass at 10°, turning 10° a second while
/// claimed; with `FAKE_LIGHT_SENSOR` set, a light sensor at 0 lux, 1 lux more a second while claimed (counting on
/// from one claim to the next). iio-sensor-proxy attaches them to an input device named "Power Button"; motiond
/// needs none. Nothing else serves a light sensor.
struct FakeSensors: Sendable {
    var compass = false
    var light = false

    /// From `FAKE_COMPASS` and `FAKE_LIGHT_SENSOR`.
    static var fromEnvironment: FakeSensors {
        FakeSensors(compass: getenv("FAKE_COMPASS") != nil, light: getenv("FAKE_LIGHT_SENSOR") != nil)
    }
}

/// `net.hadess.SensorProxy` served from one `MotionManager`, on the D-Bus loop's thread.
///
/// Semantics as iio-sensor-proxy 3.6+: a client claims a sensor (`Claim…`), and gets `PropertiesChanged`, sent
/// to it alone, with the properties of the sensors it claimed; a first `Claim` starts the sensor and its reply
/// waits for the first value (at most ``claimTimeout``); a repeated `Claim` is a no-op; the last `Release` (or
/// the last claimer leaving the bus) stops the sensor, so the device is off while nobody listens. Claims are
/// accepted for a sensor that does not exist (light and proximity here). Unlike iio-sensor-proxy, a `Release`
/// without a `Claim` is an error (``SensorProxyInterface/notClaimedError``), so a client's bug shows.
final class SensorProxyService {
    let connection: DBusConnection
    let manager: MotionManager
    let rules: OrientationRules
    let claimTimeout: Double
    let log: @Sendable (String) -> Void
    let authorizer: PolkitAuthorizer
    let fakes: FakeSensors

    private(set) var hasAccelerometer: Bool
    private(set) var hasCompass: Bool
    private(set) var orientation = IIOSensorProxyOrientation.undefined
    private(set) var tilt = IIOSensorProxyTilt.undefined
    /// Degrees clockwise from magnetic north; −1 unknown.
    private(set) var heading = -1.0
    /// Lux, from the fake light sensor only (``FakeSensors``).
    private(set) var lightLevel = 0.0
    /// The fake sensors' last values: they count on from one claim to the next, as iio-sensor-proxy's.
    private var fakeHeading = 0.0
    private var fakeLightLevel = -1.0

    private var claims: [ProxySensor: [String: DBusPeerWatch]] = [:]
    private var pending: [ProxySensor: [DBusMethodCall]] = [:]
    private var hasValue: Set<ProxySensor> = []
    private var feeds: [ProxySensor: Task<Void, Never>] = [:]
    private var generation = 0
    /// The sysfs folders of the devices readied as iio-sensor-proxy opens them (``prepareDevices()``).
    private var prepared: Set<String> = []

    /// How many claims one user may hold (``ServiceLimits/claimsPerUser``).
    let limits: ServiceLimits
    /// The uid of each client holding a claim, as the bus told it; forgotten with its last claim.
    private var claimers: [String: UInt32] = [:]

    init(
        connection: DBusConnection, manager: MotionManager, rules: OrientationRules, claimTimeout: Double,
        authorizer: PolkitAuthorizer, limits: ServiceLimits = ServiceLimits(), fakes: FakeSensors = .fromEnvironment,
        log: @escaping @Sendable (String) -> Void
    ) {
        self.limits = limits
        self.authorizer = authorizer
        self.fakes = fakes
        self.connection = connection
        self.manager = manager
        self.rules = rules
        self.claimTimeout = claimTimeout
        self.log = log
        hasAccelerometer = manager.isAccelerometerAvailable
        hasCompass = fakes.compass || manager.availableAttitudeReferenceFrames.contains(.xMagneticNorthZVertical)
        prepareDevices()
    }

    /// Readies each accelerometer and magnetometer served that was not readied yet, as iio-sensor-proxy does
    /// when it opens its devices, at its start (before it takes its bus name) and when one is plugged in: a
    /// sampling frequency below 10 Hz raised to the nearest available at or above 10 Hz, and the scan elements
    /// of a buffered device enabled with its buffer left off (`CaptureSource.prepareAsIioSensorProxy()`).
    /// Its clients and its test suite see the device as it would leave it, before any claim.
    func prepareDevices() {
        guard let selection = manager.source.deviceSelection,
            let devices = try? IIODeviceDiscovery.devices(includeBase: selection.includeBase)
        else { return }
        let sources = DeviceSelector(selection.selector).sources(from: devices, sensors: [.accelerometer, .magnetometer])
        prepared.formIntersection(devices.map(\.sysfsPath))  // a device gone and back is readied again
        for source in sources where prepared.insert(source.device.sysfsPath).inserted {
            for warning in source.prepareAsIioSensorProxy() {
                log("\(source.device.id) (\(source.device.name)): \(warning)")
            }
        }
    }

    /// The sensors of the devices the service's source selects, as listed now, without the device at `removed`;
    /// `nil` for a source that is not a device.
    private func presentSensors(excluding removed: String?) -> SensorSet? {
        guard let selection = manager.source.deviceSelection else { return nil }
        let devices = ((try? IIODeviceDiscovery.devices(includeBase: selection.includeBase)) ?? [])
            .filter { $0.sysfsPath != removed }
        return DeviceSelector(selection.selector).sources(from: devices).reduce(SensorSet()) { $0.union($1.sensorSet) }
    }

    /// Serves both objects.
    func register() throws(MotionError) {
        try connection.addObject(
            path: SensorProxyInterface.path, interface: SensorProxyInterface.main,
            method: { [unowned self] call throws(DBusErrorReply) in try self.handle(call) },
            property: { [unowned self] name in self.mainProperty(name) })
        try connection.addObject(
            path: SensorProxyInterface.compassPath, interface: SensorProxyInterface.compass,
            method: { [unowned self] call throws(DBusErrorReply) in try self.handle(call) },
            property: { [unowned self] name in self.compassProperty(name) })
    }

    /// Announces `HasAccelerometer` and `HasCompass` to every listener, as iio-sensor-proxy does at start.
    func announce() {
        try? connection.emitPropertiesChanged(
            path: SensorProxyInterface.path, interface: SensorProxyInterface.busName,
            changed: [("HasAccelerometer", .boolean(hasAccelerometer))])
        try? connection.emitPropertiesChanged(
            path: SensorProxyInterface.compassPath, interface: SensorProxyInterface.compassInterfaceName,
            changed: [("HasCompass", .boolean(hasCompass))])
    }

    /// Re-reads which sensors exist (after a udev add, remove or change): a change of `HasAccelerometer` or
    /// `HasCompass` is announced to every listener, as monitor-sensor's "Accelerometer appeared/disappeared";
    /// a sensor that disappears reads `undefined` (or −1), and one that appears while claimed starts.
    /// - Parameter removed: The sysfs path of a device a udev `remove` named: not counted, even while udev still
    ///   lists it.
    func devicesChanged(removed: String? = nil) {
        prepareDevices()
        let sensors = presentSensors(excluding: removed) ?? manager.availableSensors
        let accelerometer = sensors.contains(.accelerometer)
        let compass =
            fakes.compass || sensors.isSuperset(of: AttitudeReferenceFrame.xMagneticNorthZVertical.requiredSensors)
        if accelerometer != hasAccelerometer {
            hasAccelerometer = accelerometer
            var changed: [(String, DBusValue)] = [("HasAccelerometer", .boolean(accelerometer))]
            if !accelerometer {
                orientation = .undefined
                tilt = .undefined
                changed += [("AccelerometerOrientation", .string("undefined")), ("AccelerometerTilt", .string("undefined"))]
            }
            log("the accelerometer \(accelerometer ? "appeared" : "disappeared")")
            try? connection.emitPropertiesChanged(
                path: SensorProxyInterface.path, interface: SensorProxyInterface.busName, changed: changed)
            if accelerometer && feeds[.accelerometer] == nil && !claims[.accelerometer, default: [:]].isEmpty {
                start(.accelerometer)
            }
        }
        if compass != hasCompass {
            hasCompass = compass
            var changed: [(String, DBusValue)] = [("HasCompass", .boolean(compass))]
            if !compass {
                heading = -1
                changed.append(("CompassHeading", .double(-1)))
            }
            log("the compass \(compass ? "appeared" : "disappeared")")
            try? connection.emitPropertiesChanged(
                path: SensorProxyInterface.compassPath, interface: SensorProxyInterface.compassInterfaceName,
                changed: changed)
            if compass && feeds[.compass] == nil && !claims[.compass, default: [:]].isEmpty { start(.compass) }
        }
    }

    func mainProperty(_ name: String) -> DBusValue {
        switch name {
        case "HasAccelerometer": .boolean(hasAccelerometer)
        case "AccelerometerOrientation": .string(orientation.rawValue)
        case "AccelerometerTilt": .string(tilt.rawValue)
        case "HasAmbientLight": .boolean(fakes.light)
        case "HasProximity", "ProximityNear": .boolean(false)
        case "LightLevelUnit": .string("lux")
        case "LightLevel": .double(lightLevel)
        default: .boolean(false)
        }
    }

    func compassProperty(_ name: String) -> DBusValue {
        name == "HasCompass" ? .boolean(hasCompass) : .double(heading)
    }

    // MARK: Claims

    func handle(_ call: DBusMethodCall) throws(DBusErrorReply) {
        let claim = call.member.hasPrefix("Claim")
        guard let sensor = ProxySensor(rawValue: String(call.member.dropFirst(claim ? 5 : 7))) else {
            throw DBusErrorReply("org.freedesktop.DBus.Error.UnknownMethod", "unknown method \(call.member)")
        }
        if claim {
            // Who the caller is (asked of the bus without waiting, for the per-user limits), then who may claim:
            // polkit, asked without blocking either; the claim goes on once allowed. The compass is open to any
            // user, as iio-sensor-proxy 3.6+ (geoclue); the others ask iio-sensor-proxy 3.4+'s action, as its
            // clients' and the distributions' polkit rules expect.
            connection.credentials(of: call.sender) { [weak self] lookup in
                guard let self else { return }
                guard case .found(let credentials) = lookup else { return call.fail(lookup.refusal(call.sender)!) }
                let user = credentials.userID
                let proceed = { [weak self] (refusal: DBusErrorReply?) in
                    if let refusal { return call.fail(refusal) }
                    do throws(DBusErrorReply) {
                        try self?.claim(sensor, call, user: user)
                    } catch {
                        call.fail(error)
                    }
                }
                if sensor == .compass { return proceed(nil) }
                self.authorizer.authorizeClaim(
                    for: call.sender, user: user, action: PolkitAuthorizer.sensorProxyClaimSensor, proceed)
            }
        } else {
            try release(sensor, by: call.sender)
            call.reply()
        }
    }

    private func claim(_ sensor: ProxySensor, _ call: DBusMethodCall, user: UInt32) throws(DBusErrorReply) {
        let client = call.sender
        if claims[sensor]?[client] == nil {
            let held = claims.values.reduce(0) { total, holders in
                total + holders.keys.filter { claimers[$0] == user }.count
            }
            if held >= limits.claimsPerUser {
                throw .limitsExceeded(
                    "uid \(user) holds \(held) claims, the most one user may: release one (Release…) first")
            }
            let watch: DBusPeerWatch
            do {
                watch = try connection.watchPeer(client) { [weak self] in self?.clientLeft(client) }
            } catch {
                throw .failed("cannot follow the client \(client) on the bus: \(error.message)")
            }
            let first = claims[sensor, default: [:]].isEmpty
            claims[sensor, default: [:]][client] = watch
            claimers[client] = user
            log("\(client) claimed the \(sensor.rawValue.lowercased())")
            if first { start(sensor) }
        }
        if isRunning(sensor) && !hasValue.contains(sensor) {
            // A claim repeated while the first waits waits too, a few at most: each holds the caller's message.
            guard pending[sensor, default: []].filter({ $0.sender == client }).count < Self.pendingClaimsPerClient else {
                throw .limitsExceeded(
                    "\(client) has \(Self.pendingClaimsPerClient) Claim\(sensor.rawValue) calls waiting for the first "
                        + "value: wait for their replies")
            }
            let waiting = pending.values.joined().filter { claimers[$0.sender] == user }.count
            guard waiting < limits.waitingClaimsPerUser else {
                throw .limitsExceeded(
                    "uid \(user) has \(waiting) claims waiting for a first value, the most one user may: wait for "
                        + "their replies")
            }
            pending[sensor, default: []].append(call)
        } else {
            call.reply()
        }
    }

    private func release(_ sensor: ProxySensor, by client: String) throws(DBusErrorReply) {
        guard claims[sensor]?.removeValue(forKey: client) != nil else {
            throw DBusErrorReply(
                SensorProxyInterface.notClaimedError,
                "Release\(sensor.rawValue) without Claim\(sensor.rawValue): \(client) has not claimed the "
                    + "\(sensor.rawValue.lowercased())")
        }
        log("\(client) released the \(sensor.rawValue.lowercased())")
        forgetIfUnclaimed(client)
        stopIfUnclaimed(sensor)
    }

    /// Claim calls of one client that may wait for a sensor's first value.
    static let pendingClaimsPerClient = 4

    private func forgetIfUnclaimed(_ client: String) {
        if !claims.values.contains(where: { $0[client] != nil }) { claimers[client] = nil }
    }

    private func clientLeft(_ client: String) {
        for sensor in ProxySensor.allCases where claims[sensor]?.removeValue(forKey: client) != nil {
            log("\(client) left the bus: its \(sensor.rawValue.lowercased()) claim is released")
            pending[sensor]?.removeAll { $0.sender == client }
            stopIfUnclaimed(sensor)
        }
        claimers[client] = nil
    }

    /// The sensors that run while claimed: the accelerometer, the compass where there is one, a fake light sensor.
    private func isRunning(_ sensor: ProxySensor) -> Bool { feeds[sensor] != nil }

    private func stopIfUnclaimed(_ sensor: ProxySensor) {
        guard claims[sensor, default: [:]].isEmpty, let feed = feeds.removeValue(forKey: sensor) else { return }
        feed.cancel()
        hasValue.remove(sensor)
        answerPending(sensor, with: .init(SensorProxyInterface.noReadingError, "the claim was released"))
        log("the \(sensor.rawValue.lowercased()) stopped: no client claims it")
    }

    private func answerPending(_ sensor: ProxySensor, with error: DBusErrorReply?) {
        let calls = pending.removeValue(forKey: sensor) ?? []
        for call in calls {
            if let error { call.fail(error) } else { call.reply() }
        }
    }

    // MARK: Feeds (off the loop: a task per running sensor; values come back through the loop)

    private func start(_ sensor: ProxySensor) {
        let bound = LoopBound(self, loop: connection.loop)
        switch sensor {
        case .accelerometer where hasAccelerometer:
            feeds[sensor] = rules == .swiftMotion
                ? Self.feed(manager.deviceOrientationChanges(), into: bound, sensor) { service, change in
                    service.update(orientation: change.iioSensorProxyOrientation, tilt: change.tilt)
                }
                : Self.feed(manager.accelerometerUpdates(interval: 0.7), into: bound, sensor) { service, data in
                    let reading = data.acceleration.vector * 9.81
                    service.update(
                        orientation: IIOSensorProxyReference.orientation(
                            reading: reading, previous: service.orientation),
                        tilt: IIOSensorProxyReference.tilt(reading: reading))
                }
        case .compass where fakes.compass:
            feeds[sensor] = Self.fakeFeed(bound, .compass) { service in
                service.fakeHeading = service.fakeHeading + 10 >= 360 ? 0 : service.fakeHeading + 10
                service.update(heading: service.fakeHeading)
            }
        case .light where fakes.light:
            feeds[sensor] = Self.fakeFeed(bound, .light) { service in
                service.fakeLightLevel += 1
                service.update(lightLevel: service.fakeLightLevel)
            }
        case .compass where hasCompass:
            feeds[sensor] = Self.feed(
                manager.deviceMotionUpdates(using: .xMagneticNorthZVertical, interval: 0.1), into: bound, sensor
            ) { service, motion in
                service.update(heading: motion.heading)
            }
        default:
            return
        }
        scheduleClaimTimeout(sensor, bound: bound)
    }

    private static func feed<Updates: AsyncSequence & Sendable>(
        _ updates: Updates, into bound: LoopBound<SensorProxyService>, _ sensor: ProxySensor,
        _ apply: @escaping @Sendable (SensorProxyService, Updates.Element) -> Void
    ) -> Task<Void, Never> where Updates.Element: Sendable, Updates.Failure == MotionError {
        Task {
            do throws(MotionError) {
                for try await value in updates {
                    bound.loop.execute { apply(bound.value, value) }
                }
            } catch {
                bound.loop.execute { bound.value.feedFailed(sensor, error) }
            }
        }
    }

    /// A fake sensor's values (``FakeSensors``): `tick` at once, then each second, on the loop, while it runs.
    private static func fakeFeed(
        _ bound: LoopBound<SensorProxyService>, _ sensor: ProxySensor,
        _ tick: @escaping @Sendable (SensorProxyService) -> Void
    ) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                bound.loop.execute {
                    guard bound.value.feeds[sensor] != nil else { return }
                    tick(bound.value)
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func scheduleClaimTimeout(_ sensor: ProxySensor, bound: LoopBound<SensorProxyService>) {
        generation += 1
        let generation = generation
        let timeout = claimTimeout
        Task {
            try? await Task.sleep(for: .seconds(timeout))
            bound.loop.execute {
                let service = bound.value
                guard service.generation == generation, service.pending[sensor]?.isEmpty == false else { return }
                service.log("the \(sensor.rawValue.lowercased()) gave no reading within \(timeout) s")
                service.answerPending(
                    sensor,
                    with: .init(
                        SensorProxyInterface.noReadingError,
                        "the \(sensor.rawValue.lowercased()) gave no reading within \(timeout) s: see the "
                            + "service's log (journalctl -u motiond)"))
            }
        }
    }

    private func feedFailed(_ sensor: ProxySensor, _ error: MotionError) {
        guard feeds[sensor] != nil else { return }
        log("the \(sensor.rawValue.lowercased()) failed: \(error)")
        feeds[sensor] = nil
        hasValue.remove(sensor)
        answerPending(sensor, with: .init(SensorProxyInterface.noReadingError, "the sensor failed: \(error.message)"))
        // Clients still claim it: try again in 2 s (a device that delivered nothing in time, or failed for good).
        let bound = LoopBound(self, loop: connection.loop)
        Task {
            try? await Task.sleep(for: .seconds(2))
            bound.loop.execute {
                let service = bound.value
                guard service.feeds[sensor] == nil, !service.claims[sensor, default: [:]].isEmpty else { return }
                service.log("restarting the \(sensor.rawValue.lowercased()) for its claimers")
                service.start(sensor)
            }
        }
    }

    // MARK: Values

    private func update(orientation newOrientation: IIOSensorProxyOrientation, tilt newTilt: IIOSensorProxyTilt) {
        guard feeds[.accelerometer] != nil else { return }
        var changed: [(String, DBusValue)] = []
        if newOrientation != orientation {
            orientation = newOrientation
            changed.append(("AccelerometerOrientation", .string(orientation.rawValue)))
        }
        if newTilt != tilt {
            tilt = newTilt
            changed.append(("AccelerometerTilt", .string(tilt.rawValue)))
        }
        if !changed.isEmpty { log("orientation \(orientation.rawValue), tilt \(tilt.rawValue)") }
        firstValue(.accelerometer)
        notify(.accelerometer, path: SensorProxyInterface.path, SensorProxyInterface.busName, changed)
    }

    private func update(heading newHeading: Double) {
        guard feeds[.compass] != nil else { return }
        // CompassHeading changes are sent when the heading moves by 0.1° or more (or becomes known or unknown).
        let known = newHeading >= 0
        let moved = known != (heading >= 0) || abs(newHeading - heading) >= 0.1
        if moved { heading = newHeading }
        firstValue(.compass)
        notify(
            .compass, path: SensorProxyInterface.compassPath, SensorProxyInterface.compassInterfaceName,
            moved ? [("CompassHeading", .double(heading))] : [])
    }

    private func update(lightLevel newLevel: Double) {
        guard feeds[.light] != nil else { return }
        let changed = newLevel != lightLevel
        lightLevel = newLevel
        firstValue(.light)
        notify(
            .light, path: SensorProxyInterface.path, SensorProxyInterface.busName,
            changed ? [("LightLevel", .double(lightLevel))] : [])
    }

    private func firstValue(_ sensor: ProxySensor) {
        if hasValue.insert(sensor).inserted { answerPending(sensor, with: nil) }
    }

    /// Sends `changed` to each client that claimed `sensor`, and to no one else.
    private func notify(_ sensor: ProxySensor, path: String, _ interface: String, _ changed: [(String, DBusValue)]) {
        guard !changed.isEmpty else { return }
        for client in claims[sensor, default: [:]].keys {
            do {
                try connection.emitPropertiesChanged(
                    path: path, interface: interface, changed: changed, destination: client)
            } catch {
                log("cannot notify \(client): \(error)")
            }
        }
    }

    /// Stops every sensor and answers every waiting claim: the service is stopping.
    func shutdown() {
        for sensor in ProxySensor.allCases {
            feeds.removeValue(forKey: sensor)?.cancel()
            answerPending(sensor, with: .failed("the motion service is stopping"))
        }
        claims.removeAll()
    }
}
