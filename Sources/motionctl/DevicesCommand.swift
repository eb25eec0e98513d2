import ArgumentParser
import MotionCore
import MotionIIO
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl devices`: the IIO accelerometers, gyroscopes and magnetometers found, with every property and
/// where it came from.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the IIO accelerometers, gyroscopes and magnetometers, with each property's source.",
        discussion: """
            For each device: the sensors it has, its sysfs folder and /dev node, its location (display or base), \
            and per sensor the mount matrix, scale, offset and sampling frequency with the udev property or sysfs \
            attribute each came from (or 'default'), the available rates and the buffered scan channels. \
            Problems (such as a mount matrix with an all-zero row) are listed as warnings; the next source was \
            used. Base accelerometers are left out unless --include-base is given. See Docs/Devices.md.
            """
    )

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @Flag(name: .customLong("include-base"), help: "Also list accelerometers in the base of a convertible.")
    var includeBase = false

    func run() throws {
        do {
            let result = try IIODeviceDiscovery.scan(includeBase: includeBase)
            let text = json ? DeviceReport.json(result) : DeviceReport.text(result)
            try StandardOutput.write(text)
            if !json && result.devices.isEmpty {
                printToStandardError(
                    "motionctl: no IIO accelerometer, gyroscope or magnetometer found (see Docs/Devices.md)")
            }
        } catch {
            throw report(error)
        }
    }
}

/// Text and JSON renderings of a discovery result.
enum DeviceReport {
    static func kindName(_ kind: IIOSensorKind) -> String {
        switch kind {
        case .accelerometer: "accelerometer"
        case .gyroscope: "gyroscope"
        case .magnetometer: "magnetometer"
        }
    }


    static func text(_ result: IIODeviceDiscovery.Result) -> String {
        var lines: [String] = []
        for device in result.devices {
            if !lines.isEmpty { lines.append("") }
            let kinds = device.sensors.map { kindName($0.kind) }.joined(separator: ", ")
            lines.append("\(device.id)  \(device.name)  (\(kinds))")
            lines.append("  sysfs:     \(device.sysfsPath)")
            lines.append("  node:      \(device.deviceNode ?? "none (polled only)")")
            if let label = device.label { lines.append("  label:     \(label)") }
            lines.append("  location:  \(device.location.value.rawValue) (\(device.location.source))")
            if let buffer = device.buffer {
                var parts = ["yes"]
                parts.append(buffer.timestamp.map { "timestamp channel \($0.type)" } ?? "no timestamp channel")
                if let clock = device.timestampClock { parts.append("clock \(clock)") }
                if buffer.acceptsTrigger {
                    let current = buffer.currentTrigger.map { "trigger \($0)" } ?? "no trigger set"
                    let candidates = device.triggers.isEmpty ? "" : " (candidates: \(device.triggers.joined(separator: ", ")))"
                    parts.append(current + candidates)
                }
                if buffer.hasWatermark { parts.append("watermark") }
                lines.append("  buffer:    " + parts.joined(separator: "; "))
            } else {
                lines.append("  buffer:    no (read by polling *_raw)")
            }
            for sensor in device.sensors {
                lines.append("  \(kindName(sensor.kind)):")
                lines.append("    mount matrix: \(sensor.mountMatrix.value) (\(sensor.mountMatrix.source))")
                lines.append("    scale:        \(DeviceValueText.axes(sensor.scale))")
                lines.append("    offset:       \(DeviceValueText.axes(sensor.offset))")
                var rate = sensor.samplingFrequency.map { "\(DeviceValueText.number($0.value)) Hz (\($0.source))" } ?? "not reported"
                if let available = sensor.availableSamplingFrequencies {
                    rate += "; available \(available.value) (\(available.source))"
                }
                lines.append("    rate:         \(rate)")
                if let channels = sensor.scanChannels {
                    let scan = channels.map { "\($0.id) \($0.type) index \($0.index)" }.joined(separator: ", ")
                    lines.append("    scan:         \(scan)")
                }
            }
            for warning in device.warnings { lines.append("  warning: \(warning)") }
        }
        for skipped in result.skipped {
            lines.append("skipped: \(skipped.id) (\(skipped.name)): \(skipped.reason)")
        }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n"
    }

    static func json(_ result: IIODeviceDiscovery.Result) -> String {
        func sourced(_ value: Sourced<Double>) -> JSON {
            .object([("value", .number(value.value)), ("source", .string(value.source.description))])
        }
        let devices: [JSON] = result.devices.map { device in
            let sensors: [JSON] = device.sensors.map { sensor in
                let matrix = sensor.mountMatrix.value
                return .object([
                    ("kind", .string(kindName(sensor.kind))),
                    ("channel_type", .string(sensor.kind.channelType)),
                    (
                        "mount_matrix",
                        .object([
                            ("value", .string(matrix.description)),
                            ("rows", .array([matrix.xRow, matrix.yRow, matrix.zRow].map { row in
                                .array([row.x, row.y, row.z].map(JSON.number))
                            })),
                            ("source", .string(sensor.mountMatrix.source.description)),
                        ])
                    ),
                    ("scale", .array(sensor.scale.map(sourced))),
                    ("offset", .array(sensor.offset.map(sourced))),
                    ("sampling_frequency", sensor.samplingFrequency.map(sourced) ?? .null),
                    (
                        "available_sampling_frequencies",
                        sensor.availableSamplingFrequencies.map {
                            .object([("value", .string($0.value.description)), ("source", .string($0.source.description))])
                        } ?? .null
                    ),
                    (
                        "scan",
                        sensor.scanChannels.map { channels in
                            .array(channels.map { channel in
                                .object([
                                    ("id", .string(channel.id)), ("index", .number(Double(channel.index))),
                                    ("type", .string(channel.type.description)),
                                ])
                            })
                        } ?? .null
                    ),
                    ("raw_attributes", .bool(sensor.hasRawAttributes)),
                ])
            }
            let buffer: JSON = device.buffer.map { buffer in
                .object([
                    ("timestamp", buffer.timestamp.map { .string($0.type.description) } ?? .null),
                    ("accepts_trigger", .bool(buffer.acceptsTrigger)),
                    ("current_trigger", buffer.currentTrigger.map(JSON.string) ?? .null),
                    ("watermark", .bool(buffer.hasWatermark)),
                ])
            } ?? .null
            return .object([
                ("id", .string(device.id)),
                ("name", .string(device.name)),
                ("label", device.label.map(JSON.string) ?? .null),
                ("sysfs_path", .string(device.sysfsPath)),
                ("device_node", device.deviceNode.map(JSON.string) ?? .null),
                ("sensors", .array(device.sensors.map { .string(kindName($0.kind)) })),
                (
                    "location",
                    .object([
                        ("value", .string(device.location.value.rawValue)),
                        ("source", .string(device.location.source.description)),
                    ])
                ),
                ("buffer", buffer),
                ("timestamp_clock", device.timestampClock.map(JSON.string) ?? .null),
                ("triggers", .array(device.triggers.map(JSON.string))),
                ("channels", .array(sensors)),
                ("warnings", .array(device.warnings.map(JSON.string))),
            ])
        }
        let skipped: [JSON] = result.skipped.map { skip in
            .object([
                ("id", .string(skip.id)), ("name", .string(skip.name)), ("sysfs_path", .string(skip.sysfsPath)),
                ("reason", .string(skip.reason)),
            ])
        }
        return JSON.object([("devices", .array(devices)), ("skipped", .array(skipped))]).rendered + "\n"
    }
}

/// A minimal JSON value with ordered keys, for the device report.
indirect enum JSON {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    var rendered: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let value):
            guard value.isFinite else { return "null" }
            return DeviceValueText.number(value)
        case .string(let value): return JSON.quote(value)
        case .array(let values): return "[" + values.map(\.rendered).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { JSON.quote($0.0) + ":" + $0.1.rendered }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ text: String) -> String { JSONString.quoted(text) }
}

/// Writes text to stdout in full.
enum StandardOutput {
    static func write(_ text: String) throws(MotionError) {
        try TextOutput.write(text, to: 1, name: "<stdout>")
    }
}
