import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Reads a buffered device's scans from `$UMOCKDEV_DIR/iio-dev-data.bin`: iio-sensor-proxy's test hook, for
/// its integration suite.
///
/// Under umockdev, iio-sensor-proxy 3.1+ reads a buffered device's data from that file instead of its node
/// (`utils.c`, `get_device_file`), opening it at each poll and taking the last whole scan it holds; its suite
/// records scans there, and removes and rewrites the file to change them. A capture that opens a buffered device
/// while `UMOCKDEV_DIR` is set and that file exists reads it the same way (``IIOCapture``), so that the suite's
/// recordings reach a service in iio-sensor-proxy's place. `UMOCKDEV_DIR` is set by umockdev alone, and the
/// project's own tests stream through the node (a pty) and write no such file: outside iio-sensor-proxy's suite
/// nothing reads it.
///
/// Each poll (at the device's rate) opens the file, decodes the last whole scan of the enabled channels (the
/// sensors' and the timestamp's, as iio-sensor-proxy enables them), and returns it stamped at the poll time; an
/// absent or short file gives nothing, and the last value stands. The scan elements and `buffer/enable` are
/// written as for a real buffer (enabled at open, the buffer disabled at `close()`).
final class ScanFileReader: SampleReader {
    let details: CaptureDetails
    let pollFD: Int32? = nil
    let pendingBytes = 0
    private(set) var nextDeadline: UInt64?

    /// `$UMOCKDEV_DIR/iio-dev-data.bin` when `UMOCKDEV_DIR` is set and the file exists, else `nil`.
    static var dataFile: String? {
        guard let directory = getenv("UMOCKDEV_DIR") else { return nil }
        let path = String(cString: directory) + "/iio-dev-data.bin"
        return access(path, F_OK) == 0 ? path : nil
    }

    private struct Slot {
        let sensor: IIOSensor
        let axes: [ScanLayout.Element]
    }

    private let file: String
    private let sysfsPath: String
    private let layout: ScanLayout
    private let slots: [Slot]
    private let interval: UInt64
    private var lastTimestamp = -Double.infinity

    init(source: CaptureSource, configuration: CaptureConfiguration, file: String) throws(MotionError) {
        let device = source.device
        self.file = file
        sysfsPath = device.sysfsPath
        var warnings = ["reading the scans of iio-sensor-proxy's test suite from \(file) (UMOCKDEV_DIR is set)"]
        let frequency = try DeviceSetup.configureRate(source, rate: configuration.rate, warnings: &warnings)
        let (sensors, channels) = source.scanElements
        for channel in channels { _ = Sysfs.write(device.sysfsPath + "/scan_elements/in_\(channel.id)_en", "1") }
        _ = Sysfs.write(device.sysfsPath + "/buffer/enable", "1")
        let layout = ScanLayout(channels: channels.map { ($0.index, $0.type) })
        self.layout = layout
        slots = sensors.map { sensor in
            Slot(sensor: sensor, axes: sensor.scanChannels!.map { layout.element(forIndex: $0.index)! })
        }
        interval = nanoseconds(clamping: 1 / PolledReader.clampedRate(configuration.rate ?? frequency ?? 10))
        nextDeadline = monotonicNanoseconds()
        details = CaptureDetails(
            device: device, sensors: source.sensors, mode: .buffered, samplingFrequency: frequency, trigger: nil,
            batchSize: 1, timestamps: .pollTime, warnings: warnings)
    }

    func close() {
        guard nextDeadline != nil else { return }
        nextDeadline = nil
        _ = Sysfs.write(sysfsPath + "/buffer/enable", "0")
    }

    func read(readable: Bool, now: UInt64) throws(MotionError) -> [MotionSample] {
        guard let deadline = nextDeadline else { throw MotionError(.cancelled, "the capture is closed") }
        guard deadline <= now else { return [] }
        let next = deadline + interval
        nextDeadline = next > now ? next : now + interval
        guard let bytes = Self.contents(of: file), bytes.count >= layout.scanSize, layout.scanSize > 0 else { return [] }
        let last = (bytes.count / layout.scanSize - 1) * layout.scanSize
        var sample = MotionSample(timestamp: max(boottimeSeconds(), lastTimestamp))
        lastTimestamp = sample.timestamp
        bytes.withUnsafeBytes { all in
            let scan = UnsafeRawBufferPointer(rebasing: all[last..<last + layout.scanSize])
            for slot in slots {
                let raw = SIMD3(
                    Double(slot.axes[0].type.decode(scan, at: slot.axes[0].offset)),
                    Double(slot.axes[1].type.decode(scan, at: slot.axes[1].offset)),
                    Double(slot.axes[2].type.decode(scan, at: slot.axes[2].offset)))
                let value = slot.sensor.convert(raw: raw)
                switch slot.sensor.kind {
                case .accelerometer: sample.acceleration = Acceleration(value)
                case .gyroscope: sample.rotationRate = RotationRate(value)
                case .magnetometer: sample.magneticField = MagneticField(value)
                }
            }
        }
        return [sample]
    }

    /// The file's bytes (at most 64 KiB), or `nil` when it cannot be opened (removed between polls).
    private static func contents(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 65536)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
        guard count >= 0 else { return nil }
        return Array(bytes[0..<count])
    }
}
