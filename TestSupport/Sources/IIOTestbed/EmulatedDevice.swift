/// A device description for a ``Testbed``: a sysfs folder with attributes, udev properties and an optional
/// `/dev` node, written out in umockdev's text format.
public struct EmulatedDevice: Sendable {
    /// What backs the device's `/dev` node.
    public enum Node: Sendable {
        /// A pty: the test writes scans to its master (``Testbed/feed(_:_:)``); reads block until data comes.
        case pty
        /// A plain file with these bytes: each read continues where the last stopped; at the end reads return 0.
        case file([UInt8])
        /// A named pipe (FIFO) that the test writes scans to (``Testbed/feed(_:_:scanSize:)``), which a reader sees
        /// as it would a kernel IIO buffer node: each write of at most `PIPE_BUF` (4096) bytes arrives whole, a
        /// non-blocking read of an empty node returns `EAGAIN` at once, and polling it never waits. A pty has a tty
        /// layer between writer and reader: input reaches the reader through a kernel worker
        /// (`flush_to_ldisc`), and an empty read waits for that worker when it is still running, which a device
        /// never does. Removing the device does not end reads (libiio opens the node read-write, so it never sees
        /// an end of file): readers learn of the removal from the `remove` uevent only.
        case fifo
    }

    /// The sysfs path without `/sys`, such as `/devices/platform/lis3dh-accel/iio:device0`.
    public var devicePath: String
    /// The node's name under `/dev` (such as `iio:device0`) and its backing, or `nil` for none.
    public var node: (name: String, backing: Node)?
    /// udev properties, in order (`E:` lines).
    public var properties: [(String, String)] = []
    /// sysfs attributes, in order, without the trailing newline that ``umockdevDescription`` adds (`A:` lines).
    public var attributes: [(String, String)] = []

    /// Creates a device with no properties or attributes.
    public init(devicePath: String, node: (name: String, backing: Node)? = nil) {
        self.devicePath = devicePath
        self.node = node
    }

    /// The sysfs path, such as `/sys/devices/platform/lis3dh-accel/iio:device0`.
    public var sysfsPath: String { "/sys" + devicePath }

    /// Sets (or adds) a sysfs attribute; `name` may contain a folder, such as `buffer/enable`.
    public mutating func set(_ name: String, _ value: String) {
        if let index = attributes.firstIndex(where: { $0.0 == name }) {
            attributes[index].1 = value
        } else {
            attributes.append((name, value))
        }
    }

    /// Removes a sysfs attribute.
    public mutating func remove(_ name: String) {
        attributes.removeAll { $0.0 == name }
    }

    /// Sets (or adds) a udev property.
    public mutating func setProperty(_ name: String, _ value: String) {
        if let index = properties.firstIndex(where: { $0.0 == name }) {
            properties[index].1 = value
        } else {
            properties.append((name, value))
        }
    }

    /// The device in umockdev's text format (`P:`, `N:`, `E:`, `A:` lines).
    public var umockdevDescription: String {
        var lines = ["P: \(devicePath)"]
        if let node {
            switch node.backing {
            case .pty, .fifo: lines.append("N: \(node.name)")
            case .file(let bytes): lines.append("N: \(node.name)=\(hex(bytes))")
            }
        }
        lines += properties.map { "E: \($0.0)=\($0.1)" }
        lines += attributes.map { "A: \($0.0)=\(escape($0.1))\\n" }
        return lines.joined(separator: "\n") + "\n"
    }

    private func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789ABCDEF")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return text
    }

    private func escape(_ value: String) -> String {
        value.replacingBackslashesAndNewlines()
    }
}

extension String {
    fileprivate func replacingBackslashesAndNewlines() -> String {
        var text = ""
        for character in self {
            switch character {
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            default: text.append(character)
            }
        }
        return text
    }
}

// MARK: - IIO devices

extension EmulatedDevice {
    /// An IIO device `iio:device<number>` under `parent` with its udev properties (`DEVNAME`, `SUBSYSTEM`,
    /// `DEVTYPE`) and `name`; add channels with ``addChannel(_:raw:scan:)`` and a buffer with ``addBuffer(trigger:)``.
    ///
    /// - Parameters:
    ///   - name: The chip name (sysfs `name`).
    ///   - number: The device number N of `iio:deviceN`.
    ///   - parent: The parent sysfs path without `/sys`; defaults to `/devices/platform/<name>-<number>`.
    ///   - node: The `/dev/iio:deviceN` backing, or `nil` for a device without a node (polled only).
    public static func iio(name: String, number: Int, parent: String? = nil, node: Node? = .pty) -> EmulatedDevice {
        let id = "iio:device\(number)"
        var device = EmulatedDevice(
            devicePath: (parent ?? "/devices/platform/\(name)-\(number)") + "/" + id,
            node: node.map { (id, $0) })
        // No `dev` attribute or MAJOR/MINOR: umockdev would link /sys/dev/char/<major:minor> and never unlink it,
        // so the same device could not be added again in a later test. DEVNAME is what readers use.
        if node != nil { device.setProperty("DEVNAME", "/dev/\(id)") }
        device.setProperty("DEVTYPE", "iio_device")
        device.setProperty("SUBSYSTEM", "iio")
        device.set("name", name)
        return device
    }

    /// A trigger device `trigger<number>` named `name` under `parent` (without `/sys`).
    public static func trigger(name: String, number: Int, parent: String) -> EmulatedDevice {
        var device = EmulatedDevice(devicePath: parent + "/trigger\(number)")
        device.setProperty("SUBSYSTEM", "iio")
        device.set("name", name)
        return device
    }

    /// The parent folder of the device's sysfs path (without `/sys`).
    public var parentPath: String {
        String(devicePath[..<(devicePath.lastIndex(of: "/") ?? devicePath.endIndex)])
    }

    /// Adds channel `id` (such as `accel_x` or `timestamp`): `in_<id>_raw` when `raw` is given, and the
    /// `scan_elements/in_<id>_{en,index,type}` files when `scan` is given.
    public mutating func addChannel(_ id: String, raw: Int? = nil, scan: (index: Int, type: String)? = nil) {
        if let raw { set("in_\(id)_raw", "\(raw)") }
        if let scan {
            set("scan_elements/in_\(id)_en", "0")
            set("scan_elements/in_\(id)_index", "\(scan.index)")
            set("scan_elements/in_\(id)_type", scan.type)
        }
    }

    /// Adds `buffer/{enable,length,watermark}` and, unless `trigger` is `nil`, `trigger/current_trigger`.
    public mutating func addBuffer(trigger: String? = "") {
        set("buffer/enable", "0")
        set("buffer/length", "0")
        set("buffer/watermark", "1")
        if let trigger { set("trigger/current_trigger", trigger) }
    }

    /// A three-axis sensor (`accel`, `anglvel` or `magn`) with raw values, one shared scale and, when
    /// `scanType` is given, scan elements at `firstIndex`, `firstIndex + 1`, `firstIndex + 2`.
    public mutating func addSensor(
        _ type: String, raw: (Int, Int, Int), scale: String, scanType: String? = nil, firstIndex: Int = 0
    ) {
        for (offset, (axis, value)) in [("x", raw.0), ("y", raw.1), ("z", raw.2)].enumerated() {
            addChannel("\(type)_\(axis)", raw: value, scan: scanType.map { (firstIndex + offset, $0) })
        }
        set("in_\(type)_scale", scale)
    }

    /// The emulated accelerometer most tests start from: an `lis3dh` at `/devices/platform/lis3dh-accel/iio:device0`
    /// reading raw (0, −1024, 0) at scale 0.009576 (≈ −9.806 m/s² on y), `le:s16/16>>0` x, y, z at indices 0–2, a
    /// `le:s64/64>>0` timestamp at index 3, `sampling_frequency` 100 Hz of `1 10 25 50 100 200 400`,
    /// `current_timestamp_clock` realtime, a buffer, and its trigger `lis3dh-trigger` (add it separately with
    /// ``lis3dhTrigger``).
    public static func lis3dh(number: Int = 0, node: Node? = .pty) -> EmulatedDevice {
        var device = EmulatedDevice.iio(
            name: "lis3dh", number: number, parent: "/devices/platform/lis3dh-accel", node: node)
        device.addSensor("accel", raw: (0, -1024, 0), scale: "0.009576", scanType: "le:s16/16>>0")
        device.addChannel("timestamp", scan: (3, "le:s64/64>>0"))
        device.set("sampling_frequency", "100")
        device.set("sampling_frequency_available", "1 10 25 50 100 200 400")
        device.set("current_timestamp_clock", "realtime")
        device.addBuffer()
        return device
    }

    /// This device without its `in_*_raw` attributes, so that its buffer is the only way to read it: a capture in
    /// automatic mode then waits for the buffer instead of falling back to polling after the buffer start timeout
    /// (0.5 s), as it would on a real device that produces data once enabled. For tests that feed a pty or a FIFO
    /// at their own pace.
    public var bufferOnly: EmulatedDevice {
        var copy = self
        copy.attributes.removeAll { $0.0.hasPrefix("in_") && $0.0.hasSuffix("_raw") }
        return copy
    }

    /// The trigger of ``lis3dh(number:node:)``: `trigger0` named `lis3dh-trigger` in the same parent folder.
    public static var lis3dhTrigger: EmulatedDevice {
        .trigger(name: "lis3dh-trigger", number: 0, parent: "/devices/platform/lis3dh-accel")
    }
}
