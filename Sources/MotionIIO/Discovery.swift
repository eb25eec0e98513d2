public import MotionCore

#if canImport(Glibc)
import Glibc
#endif

/// Finds the IIO accelerometers, gyroscopes and magnetometers of this machine through libudev.
///
/// Every device of subsystem `iio` is classified by its channels: `in_accel_{x,y,z}` (accelerometer),
/// `in_anglvel_{x,y,z}` (gyroscope), `in_magn_{x,y,z}` (magnetometer), as `*_raw` attributes or as buffered scan
/// elements; a device with several kinds is a combined IMU. Triggers and devices without motion channels are
/// left out. Each value is read from the first source that has a valid one, and the result says which (see
/// ``IIODevice`` and `Docs/Devices.md`):
///
/// - location: udev `ACCEL_LOCATION`, sysfs `label` (`accel-display`, `accel-base`), sysfs `location`, default
///   display. Base accelerometers are skipped unless asked for.
/// - mount matrix, accelerometer: udev `ACCEL_MOUNT_MATRIX`, sysfs `mount_matrix`, `in_accel_mount_matrix`,
///   `in_mount_matrix`, identity; gyroscope and magnetometer: `mount_matrix`, `in_anglvel_mount_matrix` /
///   `in_magn_mount_matrix`, `in_mount_matrix`, identity (`ACCEL_MOUNT_MATRIX` describes accelerometers only).
///   A text that does not parse, or has an all-zero row, is skipped with a warning naming its source.
/// - scale per axis: `in_<type>_<axis>_scale`, `in_<type>_scale`, `scale`, default 1 (a zero or unreadable
///   scale is skipped with a warning); offset per axis: `in_<type>_<axis>_offset`, `in_<type>_offset`, default 0.
/// - sampling frequency: `in_<type>_sampling_frequency`, `sampling_frequency`, each with its `_available` list.
public enum IIODeviceDiscovery {
    /// A device that discovery left out, and why.
    public struct SkippedDevice: Hashable, Sendable {
        /// The kernel's device name, such as `iio:device1`.
        public var id: String
        /// The chip name, when readable.
        public var name: String
        /// The sysfs folder.
        public var sysfsPath: String
        /// Why it was left out.
        public var reason: String
    }

    /// What a scan found.
    public struct Result: Hashable, Sendable {
        /// The motion devices, ordered by device number.
        public var devices: [IIODevice]
        /// The IIO devices that were left out (base accelerometers, devices without motion channels); triggers
        /// are not listed.
        public var skipped: [SkippedDevice]
    }

    /// Scans subsystem `iio`.
    ///
    /// - Parameter includeBase: Also return accelerometers located in the base of a convertible.
    /// - Throws: `MotionError.Code.unsupported` when libudev cannot be used, `MotionError.Code.ioFailure`
    ///   when `/sys` cannot be scanned.
    public static func scan(includeBase: Bool = false) throws(MotionError) -> Result {
        let udev = try UdevContext()
        let paths = try udev.devicePaths(subsystem: "iio")
        let devices = paths.compactMap { udev.device(sysfsPath: $0) }
        let triggers = devices.filter { $0.sysname.hasPrefix("trigger") }.map(TriggerInfo.init)
        var found: [IIODevice] = []
        var skipped: [SkippedDevice] = []
        for device in devices where !device.sysname.hasPrefix("trigger") {
            switch describe(device, triggers: triggers) {
            case .device(let described):
                if described.location.value == .base && !includeBase {
                    skipped.append(
                        SkippedDevice(
                            id: described.id, name: described.name, sysfsPath: described.sysfsPath,
                            reason: "base accelerometer (\(described.location.source)); include it with --include-base"))
                } else {
                    found.append(described)
                }
            case .skipped(let skip):
                skipped.append(skip)
            }
        }
        found.sort { deviceNumber($0.id) < deviceNumber($1.id) }
        skipped.sort { deviceNumber($0.id) < deviceNumber($1.id) }
        return Result(devices: found, skipped: skipped)
    }

    /// The motion devices of this machine (see ``scan(includeBase:)``).
    public static func devices(includeBase: Bool = false) throws(MotionError) -> [IIODevice] {
        try scan(includeBase: includeBase).devices
    }

    /// The number at the end of an id such as `iio:device12`, for ordering.
    static func deviceNumber(_ id: String) -> Int {
        Int(String(id.reversed().prefix { $0.isNumber }.reversed())) ?? Int.max
    }

    struct TriggerInfo {
        let name: String
        let parentPath: String?

        init(_ device: UdevDevice) {
            name = device.attribute("name") ?? device.sysname
            parentPath = device.parentPath
        }
    }

    static let axes = ["x", "y", "z"]

    /// Reads one non-trigger IIO device; `.failure` says why it is not a motion device.
    enum Description {
        case device(IIODevice)
        case skipped(SkippedDevice)
    }

    static func describe(_ device: UdevDevice, triggers: [TriggerInfo]) -> Description {
        let id = device.sysname
        let name = device.attribute("name") ?? id
        let attributes = Set(device.attributeNames)
        let scanElements = Set(listDirectory(device.sysfsPath + "/scan_elements"))
        var warnings: [String] = []

        var sensors: [IIOSensor] = []
        for kind in IIOSensorKind.allCases {
            let type = kind.channelType
            let hasRaw = axes.allSatisfy { attributes.contains("in_\(type)_\($0)_raw") }
            let scanChannels = axes.map { scanChannel(device, id: "\(type)_\($0)", elements: scanElements) }
            let scannable = scanChannels.allSatisfy { $0 != nil }
            guard hasRaw || scannable else { continue }
            sensors.append(
                IIOSensor(
                    kind: kind,
                    mountMatrix: mountMatrix(device, kind: kind, warnings: &warnings),
                    scale: axes.map { axis in scale(device, type: type, axis: axis, warnings: &warnings) },
                    offset: axes.map { axis in offset(device, type: type, axis: axis, warnings: &warnings) },
                    samplingFrequency: samplingFrequency(device, type: type, warnings: &warnings),
                    availableSamplingFrequencies: availableFrequencies(device, type: type, warnings: &warnings),
                    scanChannels: scannable ? scanChannels.compactMap { $0 } : nil,
                    hasRawAttributes: hasRaw))
        }
        guard !sensors.isEmpty else {
            return .skipped(
                SkippedDevice(
                    id: id, name: name, sysfsPath: device.sysfsPath,
                    reason: "no accelerometer, gyroscope or magnetometer channels"))
        }

        let location =
            sensors.contains { $0.kind == .accelerometer }
            ? accelerometerLocation(device, warnings: &warnings) : Sourced(.display, from: .default)

        var buffer: IIOBufferSupport?
        if sensors.contains(where: { $0.scanChannels != nil }), device.attribute("buffer/enable") != nil {
            let currentTrigger = device.attribute("trigger/current_trigger")
            buffer = IIOBufferSupport(
                timestamp: scanChannel(device, id: "timestamp", elements: scanElements),
                acceptsTrigger: currentTrigger != nil,
                currentTrigger: currentTrigger.flatMap { $0.isEmpty ? nil : $0 },
                hasWatermark: device.attribute("buffer/watermark") != nil)
        }

        let number = deviceNumber(id)
        let parent = device.parentPath
        let triggerNames = triggers.filter { trigger in
            trigger.name == "\(name)-dev\(number)" || trigger.name == "\(name)-trigger"
                || (parent != nil && trigger.parentPath == parent)
        }.map(\.name)

        // Each once: an attribute the axes share (in_accel_scale) is read, and may be ignored, once per axis.
        let distinctWarnings = warnings.enumerated().filter { warnings.firstIndex(of: $0.element) == $0.offset }
            .map(\.element)
        return .device(
            IIODevice(
                id: id, name: name, label: device.attribute("label"), sysfsPath: device.sysfsPath,
                deviceNode: device.deviceNode, location: location, sensors: sensors, buffer: buffer,
                timestampClock: device.attribute("current_timestamp_clock"), triggers: triggerNames,
                warnings: distinctWarnings))
    }

    static func scanChannel(_ device: UdevDevice, id: String, elements: Set<String>) -> ScanChannel? {
        guard elements.contains("in_\(id)_en"), elements.contains("in_\(id)_index"),
            elements.contains("in_\(id)_type"),
            let indexText = device.attribute("scan_elements/in_\(id)_index"),
            let index = Int(Substring(indexText).trimmingWhiteSpace()), index >= 0,
            let typeText = device.attribute("scan_elements/in_\(id)_type"),
            let type = ScanElementType(parsing: typeText)
        else { return nil }
        return ScanChannel(id: id, index: index, type: type)
    }

    static func mountMatrix(_ device: UdevDevice, kind: IIOSensorKind, warnings: inout [String])
        -> Sourced<MountMatrix>
    {
        var sources: [ValueSource] = []
        if kind == .accelerometer { sources.append(.udevProperty("ACCEL_MOUNT_MATRIX")) }
        sources += [
            .sysfsAttribute("mount_matrix"), .sysfsAttribute("in_\(kind.channelType)_mount_matrix"),
            .sysfsAttribute("in_mount_matrix"),
        ]
        for source in sources {
            // An empty udev property is the identity, as iio-sensor-proxy reads it (a hwdb entry that clears a
            // matrix); an empty sysfs attribute says nothing.
            guard let text = value(device, source), !text.isEmpty || source == .udevProperty("ACCEL_MOUNT_MATRIX")
            else { continue }
            switch MountMatrix.parse(text) {
            case .success(let matrix): return Sourced(matrix, from: source)
            case .failure(let error): warnings.append("ignored \(source): \(error); trying the next source")
            }
        }
        return Sourced(.identity, from: .default)
    }

    static func scale(_ device: UdevDevice, type: String, axis: String, warnings: inout [String]) -> Sourced<Double> {
        for name in ["in_\(type)_\(axis)_scale", "in_\(type)_scale", "scale"] {
            guard let text = device.attribute(name) else { continue }
            if let scale = parseDecimal(text), scale != 0 { return Sourced(scale, from: .sysfsAttribute(name)) }
            warnings.append("ignored sysfs \(name) = \"\(text)\": a scale must be a non-zero number")
        }
        return Sourced(1, from: .default)
    }

    static func offset(_ device: UdevDevice, type: String, axis: String, warnings: inout [String]) -> Sourced<Double> {
        for name in ["in_\(type)_\(axis)_offset", "in_\(type)_offset"] {
            guard let text = device.attribute(name) else { continue }
            if let offset = parseDecimal(text) { return Sourced(offset, from: .sysfsAttribute(name)) }
            warnings.append("ignored sysfs \(name) = \"\(text)\": not a number")
        }
        return Sourced(0, from: .default)
    }

    static func samplingFrequency(_ device: UdevDevice, type: String, warnings: inout [String]) -> Sourced<Double>? {
        for name in ["in_\(type)_sampling_frequency", "sampling_frequency"] {
            guard let text = device.attribute(name) else { continue }
            if let hertz = parseDecimal(text) { return Sourced(hertz, from: .sysfsAttribute(name)) }
            warnings.append("ignored sysfs \(name) = \"\(text)\": not a number")
        }
        return nil
    }

    static func availableFrequencies(_ device: UdevDevice, type: String, warnings: inout [String])
        -> Sourced<SamplingFrequencies>?
    {
        for name in ["in_\(type)_sampling_frequency_available", "sampling_frequency_available"] {
            guard let text = device.attribute(name) else { continue }
            if let list = SamplingFrequencies(parsing: text) { return Sourced(list, from: .sysfsAttribute(name)) }
            warnings.append("ignored sysfs \(name) = \"\(text)\": not a list of frequencies")
        }
        return nil
    }

    static func accelerometerLocation(_ device: UdevDevice, warnings: inout [String]) -> Sourced<DeviceLocation> {
        if let text = device.property("ACCEL_LOCATION") {
            if let location = DeviceLocation(parsing: text) {
                return Sourced(location, from: .udevProperty("ACCEL_LOCATION"))
            }
            warnings.append("ignored udev ACCEL_LOCATION = \"\(text)\": expected display, lid or base")
        }
        switch device.attribute("label") {
        case "accel-display": return Sourced(.display, from: .sysfsAttribute("label"))
        case "accel-base": return Sourced(.base, from: .sysfsAttribute("label"))
        default: break  // labels name other things too (accel-camera, proximity-…): not a location
        }
        if let text = device.attribute("location") {
            if let location = DeviceLocation(parsing: text) {
                return Sourced(location, from: .sysfsAttribute("location"))
            }
            warnings.append("ignored sysfs location = \"\(text)\": expected display, lid or base")
        }
        return Sourced(.display, from: .default)
    }

    static func value(_ device: UdevDevice, _ source: ValueSource) -> String? {
        switch source.kind {
        case .udevProperty: source.name.flatMap(device.property)
        case .sysfsAttribute: source.name.flatMap(device.attribute)
        case .override, .default: nil
        }
    }

    /// The entries of a folder (without `.` and `..`), or none when it cannot be read.
    static func listDirectory(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
