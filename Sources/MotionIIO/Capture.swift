package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// Why reading a device failed: carried as the `MotionError.underlying` error of capture errors, so the session
/// tells a timeout from a removal or a truncated scan, and which device it was (package: users see the
/// `MotionError`'s code and message).
package struct IIOReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of read failures.
    package enum Kind: String, Hashable, Sendable {
        /// No data arrived within the configured timeout.
        case timeout
        /// The device stopped in the middle of a scan: the last scan was cut short.
        case truncatedScan
        /// The device went away (removed, unbound, or its data ended).
        case disconnected
        /// Another program is capturing from the device (its buffer is in use).
        case busy
        /// `read(2)` or libiio failed otherwise.
        case readFailed
    }

    /// What happened.
    package var kind: Kind
    /// The device id, such as `iio:device0`.
    package var device: String
    /// The system error behind it, when there is one.
    package var systemError: SystemErrno?

    /// Creates an error.
    package init(_ kind: Kind, device: String, systemError: SystemErrno? = nil) {
        self.kind = kind
        self.device = device
        self.systemError = systemError
    }

    /// `timeout on iio:device0`, with the system error when there is one.
    package var description: String {
        "\(kind.rawValue) on \(device)" + (systemError.map { ": \($0)" } ?? "")
    }
}

/// One open device: something the capture waits on and reads from.
protocol SampleReader: AnyObject {
    var details: CaptureDetails { get }
    /// The descriptor that becomes readable when data is available, or `nil` (polled readers).
    var pollFD: Int32? { get }
    /// When the reader must run even without data (the next poll, or a timeout), on `CLOCK_MONOTONIC` ns.
    var nextDeadline: UInt64? { get }
    /// Reads what is available (never blocks); `readable` says whether its descriptor was reported ready.
    func read(readable: Bool, now: UInt64) throws(MotionError) -> [MotionSample]
    /// Bytes of a scan read so far but not yet complete (0 for polled readers).
    var pendingBytes: Int { get }
    /// Releases the device (buffer disabled). Idempotent.
    func close()
}

/// Captures samples from one or more IIO devices.
///
/// Opening a capture configures each device (rate, trigger, timestamp clock, scan elements, watermark) and
/// enables its buffer; `close()` disables it again (`buffer/enable` back to 0), as do errors and `deinit`.
/// Prefer the scoped ``withCapture(from:configuration:_:)``, which closes on every path.
///
/// ``next()`` suspends the task until a device has data — waiting on the buffer's poll fd in the async
/// runtime, so a stream wakes about once per batch and never polls — and returns every scan since the last
/// call as samples, in time order, in the device frame and swift-motion's units (see ``IIOSensor/convert(raw:)``).
/// With several devices the batches are merged by timestamp.
///
/// A capture is used by one task at a time; it is not `Sendable`.
package final class IIOCapture {
    /// What was set up on each device. An entry changes when its device falls back from a silent buffer to
    /// polling (``CaptureDetails/fallback``), which happens before that device's first sample.
    package private(set) var details: [CaptureDetails]

    private var readers: [any SampleReader]
    /// The sources as opened (mount-matrix overrides applied), and the configuration, for a fallback.
    private let sources: [CaptureSource]
    private let configuration: CaptureConfiguration
    /// When each buffered reader that may still fall back to polling must have delivered, `CLOCK_MONOTONIC` ns.
    private var fallbackDeadlines: [Int: UInt64] = [:]
    /// When the first sample must have arrived (``CaptureConfiguration/startTimeout``); `nil` once it has.
    private var startDeadline: UInt64?
    private var merger: SampleMerger?
    private var monitor: UdevMonitor?
    private var isClosed = false
    /// An error that ended the capture while samples were held, thrown by the next ``next()`` call.
    private var pendingError: MotionError?

    /// Opens the sources.
    ///
    /// - Throws: `MotionError.Code.invalidArgument` for a bad configuration or no sources;
    ///   `MotionError.Code.permissionDenied` naming the file when the device node or a sysfs attribute
    ///   cannot be opened; `MotionError.Code.unsupported` when buffered mode was asked of a device that
    ///   cannot buffer; `MotionError.Code.disconnected` or `MotionError.Code.ioFailure` otherwise.
    package init(sources: [CaptureSource], configuration: CaptureConfiguration = .init()) throws(MotionError) {
        try configuration.validate()
        guard !sources.isEmpty else {
            throw MotionError(.invalidArgument, "no device to capture from")
        }
        let sources = sources.map { source in
            var source = source
            for (kind, matrix) in configuration.mountMatrixOverrides {
                if let index = source.device.sensors.firstIndex(where: { $0.kind == kind }) {
                    source.device.sensors[index].mountMatrix = Sourced(matrix, from: .override)
                }
            }
            return source
        }
        let openedAt = monotonicNanoseconds()
        var opened: [any SampleReader] = []
        var fallbackDeadlines: [Int: UInt64] = [:]
        do throws(MotionError) {
            for source in sources {
                let buffered: Bool
                switch configuration.mode {
                case .buffered:
                    guard source.canBuffer else {
                        throw MotionError(
                            .unsupported,
                            "\(source.device.id) (\(source.device.name)) cannot buffer "
                                + "\(source.sensors.map(\.rawValue).joined(separator: ", ")); use polled mode",
                            at: .init(file: source.device.sysfsPath))
                    }
                    buffered = true
                case .polled:
                    buffered = false
                case .automatic:
                    buffered = source.canBuffer
                }
                if !buffered {
                    opened.append(try PolledReader(source: source, configuration: configuration))
                } else if let file = ScanFileReader.dataFile {
                    // iio-sensor-proxy's test suite: its recorded scans, where iio-sensor-proxy reads them.
                    opened.append(try ScanFileReader(source: source, configuration: configuration, file: file))
                } else if configuration.mode == .automatic && source.canPoll {
                    do {
                        opened.append(try BufferedReader(source: source, configuration: configuration))
                        if let wait = configuration.bufferStartTimeout {
                            fallbackDeadlines[opened.count - 1] = monotonicNanoseconds() + nanoseconds(clamping: wait)
                        }
                    } catch where (error.underlying as? IIOReadError)?.kind == .busy {
                        // iio-sensor-proxy (or another reader) holds the buffer: the values are still in sysfs.
                        opened.append(
                            try PolledReader(source: source, configuration: configuration, fallback: error.message))
                    }
                } else {
                    opened.append(try BufferedReader(source: source, configuration: configuration))
                }
            }
            if configuration.watchForRemoval { monitor = try? UdevMonitor(subsystem: "iio") }
        } catch {
            opened.forEach { $0.close() }
            throw error
        }
        readers = opened
        details = opened.map(\.details)
        self.sources = sources
        self.configuration = configuration
        self.fallbackDeadlines = fallbackDeadlines
        startDeadline = configuration.startTimeout.map { openedAt + nanoseconds(clamping: $0) }
        if opened.count > 1 {
            merger = SampleMerger(
                sourceCount: opened.count, tolerance: configuration.mergeTolerance,
                maximumDelay: max(0.5, 4 * configuration.batchDuration))
        }
    }

    /// Opens a capture, runs `body` with it and closes it, whether `body` returns, throws or is cancelled.
    ///
    /// `body` runs with a preference for ``executor``, so the thread that sees the data also runs it.
    package static func withCapture<Result>(
        from sources: [CaptureSource], configuration: CaptureConfiguration = .init(),
        _ body: (IIOCapture) async throws -> Result
    ) async throws -> Result {
        let capture = try IIOCapture(sources: sources, configuration: configuration)
        defer { capture.close() }
        return try await withTaskExecutorPreference(executor) { try await body(capture) }
    }

    /// The task executor of the thread that waits for device data. A task that prefers it
    /// (`withTaskExecutorPreference(IIOCapture.executor) { … }` or `Task(executorPreference:)`) is resumed on
    /// that thread when data arrives and runs there until its next wait: the process wakes once per batch
    /// instead of twice (the waiting thread, then a thread of the global pool). Keep such tasks short:
    /// while one runs, no other wait is served.
    package static var executor: any TaskExecutor { Reactor.shared }

    deinit {
        close()
    }

    /// The next batch of samples: every scan that arrived since the last call (at least one sample).
    ///
    /// - Throws: `MotionError.Code.cancelled` when the task is cancelled or the capture closed;
    ///   `MotionError.Code.disconnected` when a device goes away;
    ///   `MotionError.Code.ioFailure` for read errors, timeouts and truncated scans. The capture is closed
    ///   as soon as the error happens. Samples already read are never lost: when a device fails (or the task
    ///   is cancelled) while samples are held (by the merger, or read from another device in the same
    ///   wake-up), this call returns them, readings the merger could not pair as partial samples, and the
    ///   next call throws the error.
    package func next() async throws(MotionError) -> [MotionSample] {
        if let error = pendingError {
            pendingError = nil
            throw error
        }
        var samples: [MotionSample] = []
        do {
            try await nextBatch(into: &samples)
            return samples
        } catch {
            close()
            // Samples already read are never lost: they are delivered first (what the merger holds too, groups
            // it could not complete as partial samples), and the error on the next call.
            merger?.finish(into: &samples)
            guard samples.isEmpty else {
                pendingError = error
                return samples
            }
            throw error
        }
    }

    /// Appends the next batch to `output`; on an error, `output` holds what was read before it.
    private func nextBatch(into output: inout [MotionSample]) async throws(MotionError) {
        while true {
            guard !isClosed else { throw MotionError(.cancelled, "the capture is closed") }
            var fds = readers.compactMap(\.pollFD)
            if let monitor { fds.append(monitor.fileDescriptor) }
            let deadlines = readers.compactMap(\.nextDeadline) + fallbackDeadlines.values
            let deadline = (deadlines + (startDeadline.map { [$0] } ?? [])).min()
            let ready: [Int32]
            do {
                ready = try await Reactor.shared.wait(readable: fds, until: deadline)
            } catch is CancellationError {
                throw MotionError(.cancelled, "the capture was cancelled")
            } catch {
                throw MotionError(.ioFailure, "cannot wait for device data (\(error))")
            }
            guard !isClosed else { throw MotionError(.cancelled, "the capture is closed") }
            let now = monotonicNanoseconds()
            // Every ready device is read before any error surfaces, so what they delivered is not lost.
            var failure: MotionError?
            for (index, reader) in readers.enumerated() {
                let readable = reader.pollFD.map { ready.contains($0) } ?? false
                guard readable || (reader.nextDeadline.map { $0 <= now } ?? false) else { continue }
                let batch: [MotionSample]
                do {
                    batch = try reader.read(readable: readable, now: now)
                } catch {
                    failure = failure ?? error
                    continue
                }
                if !batch.isEmpty {
                    fallbackDeadlines[index] = nil
                    startDeadline = nil
                }
                if merger != nil {
                    merger!.append(batch, from: index)
                } else {
                    output += batch
                }
            }
            if let failure { throw failure }
            try fallBackFromSilentBuffers(now: now)
            if let startDeadline, now >= startDeadline { throw startTimeoutError() }
            if let monitor, ready.contains(monitor.fileDescriptor) { try checkRemovals(monitor) }
            merger?.drain(into: &output)
            if !output.isEmpty { return }
        }
    }

    /// Replaces each buffered reader that has delivered nothing by its deadline with a polled one.
    private func fallBackFromSilentBuffers(now: UInt64) throws(MotionError) {
        for (index, deadline) in fallbackDeadlines where deadline <= now {
            fallbackDeadlines[index] = nil
            readers[index].close()
            let waited = formatDecimal(configuration.bufferStartTimeout ?? 0)
            let reader = try PolledReader(
                source: sources[index], configuration: configuration,
                fallback: "the buffer of \(details[index].device.id) delivered nothing in \(waited) s")
            readers[index] = reader
            details[index] = reader.details
        }
    }

    /// The error for a capture that delivered nothing within ``CaptureConfiguration/startTimeout``.
    private func startTimeoutError() -> MotionError {
        let names = details.map { "\($0.device.id) (\($0.device.name), \($0.mode.rawValue))" }.joined(separator: ", ")
        let waited = formatDecimal(configuration.startTimeout ?? 0)
        return MotionError(
            .ioFailure,
            "\(names) delivered no sample within \(waited) s of starting; check that the sensor is powered and "
                + "its driver works (cat its in_*_raw attributes), or that no other program holds it",
            at: .init(file: details.first?.device.deviceNode ?? details.first?.device.sysfsPath),
            underlying: IIOReadError(.timeout, device: details.first?.device.id ?? ""))
    }

    private func checkRemovals(_ monitor: UdevMonitor) throws(MotionError) {
        while let event = monitor.receive() {
            guard event.action == "remove",
                let index = details.firstIndex(where: { $0.device.sysfsPath == event.sysfsPath })
            else { continue }
            let device = details[index].device
            let pending = readers[index].pendingBytes
            throw MotionError(
                .disconnected,
                "\(device.id) (\(device.name)) was removed"
                    + (pending > 0 ? " in the middle of a scan (\(pending) bytes of it read)" : ""),
                at: .init(file: device.deviceNode ?? device.sysfsPath),
                underlying: IIOReadError(pending > 0 ? .truncatedScan : .disconnected, device: device.id))
        }
    }

    /// Disables every buffer (`buffer/enable` = 0) and releases the devices. Idempotent; later ``next()``
    /// calls throw `MotionError.Code.cancelled`.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        readers.forEach { $0.close() }
        monitor = nil
    }

    /// The batches as an asynchronous sequence (each element is one ``next()`` result); it ends without an
    /// error when the task is cancelled.
    package var batches: Batches { Batches(capture: self) }

    /// An asynchronous sequence of sample batches from a capture.
    package struct Batches: AsyncSequence {
        package typealias Element = [MotionSample]
        package typealias Failure = MotionError

        let capture: IIOCapture

        /// Creates the iterator.
        package func makeAsyncIterator() -> Iterator { Iterator(capture: capture) }

        /// Calls ``IIOCapture/next()``.
        package struct Iterator: AsyncIteratorProtocol {
            package typealias Element = [MotionSample]
            package typealias Failure = MotionError

            let capture: IIOCapture

            /// The next batch, or `nil` once cancelled or closed.
            package mutating func next() async throws(MotionError) -> [MotionSample]? {
                do {
                    return try await capture.next()
                } catch where error.code == .cancelled {
                    return nil
                }
            }
        }
    }
}

extension CaptureSource {
    /// Whether every chosen sensor has scan elements and the device has a buffer and a node.
    var canBuffer: Bool {
        device.buffer != nil && device.deviceNode != nil
            && sensors.allSatisfy { kind in device.sensor(kind)?.scanChannels != nil }
    }

    /// Whether every chosen sensor has `in_<type>_<axis>_raw` attributes to poll.
    var canPoll: Bool {
        sensors.allSatisfy { kind in device.sensor(kind)?.hasRawAttributes == true }
    }
}

// MARK: - A device readied as iio-sensor-proxy opens it

extension CaptureSource {
    /// Readies the device as iio-sensor-proxy opens it, at its start and when a device is plugged in, before
    /// anyone claims it: for a service in its place (motiond), which must leave the device as it would.
    ///
    /// - Each chosen sensor's sampling frequency below 10 Hz (or 0) is raised to the nearest available value at or
    ///   above 10 Hz (the highest available below it when there is none), or to 10 Hz without
    ///   `sampling_frequency_available` (iio-sensor-proxy's `iio_fixup_sampling_frequency`: a buffered device
    ///   left at 0 Hz delivers nothing, a polled one at 1 Hz makes every `*_raw` read wait a second). A frequency
    ///   of 10 Hz or more is kept.
    /// - When the device can buffer the sensors, their scan elements and the timestamp's are enabled
    ///   (`scan_elements/in_*_en` = 1), its buffer left disabled, as iio-sensor-proxy's buffer driver leaves them
    ///   until a claim enables the buffer.
    ///
    /// A capture opened later sets its own rate and channels (``IIOCapture``). Nothing is thrown: a value that
    /// cannot be written leaves the device as it was, and is returned as a line for the log.
    /// - Returns: What could not be done, one line each.
    package func prepareAsIioSensorProxy() -> [String] {
        var warnings: [String] = []
        do {
            _ = try DeviceSetup.configureRate(self, rate: nil, warnings: &warnings)
        } catch {
            warnings.append(error.message)
        }
        guard canBuffer else { return warnings }
        for channel in scanElements.channels {
            let path = device.sysfsPath + "/scan_elements/in_\(channel.id)_en"
            guard (try? Sysfs.read(path).get()) != "1" else { continue }
            if case .failure(let error) = Sysfs.write(path, "1") {
                warnings.append("could not enable \(device.id)'s scan element in_\(channel.id)_en (\(error))")
            }
        }
        return warnings
    }

    /// The chosen sensors that have scan channels, and their channels with the device's timestamp: the scan
    /// elements iio-sensor-proxy enables.
    var scanElements: (sensors: [IIOSensor], channels: [ScanChannel]) {
        let sensors = self.sensors.compactMap { device.sensor($0) }.filter { $0.scanChannels != nil }
        return (sensors, sensors.flatMap { $0.scanChannels! } + (device.buffer?.timestamp.map { [$0] } ?? []))
    }
}

// MARK: - Device setup shared by both readers

enum DeviceSetup {
    /// The lowest rate a device is left at when no rate is asked for, in Hz (iio-sensor-proxy's
    /// `IIO_MIN_SAMPLING_FREQUENCY`).
    static let minimumUnaskedRate = 10.0

    /// Sets each chosen sensor's sampling frequency attribute to the nearest available value at or above
    /// `rate` (without a rate, only a frequency below ``minimumUnaskedRate`` is raised to it), and returns the
    /// frequency in effect afterwards (the first sensor's), if known.
    static func configureRate(
        _ source: CaptureSource, rate: Double?, warnings: inout [String]
    ) throws(MotionError) -> Double? {
        var effective: Double?
        var done: Set<String> = []
        for kind in source.sensors {
            guard let sensor = source.device.sensor(kind), let current = sensor.samplingFrequency,
                let name = current.source.name, done.insert(name).inserted
            else { continue }
            let path = source.device.sysfsPath + "/" + name
            var value = current.value
            // Without a rate asked for, a device left below 10 Hz (or at 0) is raised as iio-sensor-proxy does
            // (iio_fixup_sampling_frequency): a slower one would keep a stream waiting for its first sample.
            let floor = minimumUnaskedRate
            if let wanted = rate ?? (value < floor ? floor : nil) {
                let target = sensor.availableSamplingFrequencies?.value.nearest(atLeast: wanted) ?? wanted
                if target != value {
                    switch Sysfs.write(path, formatDecimal(target)) {
                    case .success:
                        value = (try? Sysfs.read(path).get()).flatMap(parseDecimal) ?? target
                    case .failure(let error) where error.isPermissionDenied:
                        throw MotionError.deviceAccess(error, "write", path, attribute: name)
                    case .failure(let error):
                        warnings.append(
                            "could not set \(name) to \(formatDecimal(target)) Hz (\(error)); using \(formatDecimal(value)) Hz")
                    }
                }
                if let rate, value < rate {
                    warnings.append(
                        "\(source.device.id) runs at most at \(formatDecimal(value)) Hz, below the \(formatDecimal(rate)) Hz asked for")
                }
            }
            if effective == nil { effective = value }
        }
        return effective
    }
}

/// Reads a device's kernel buffer: libiio sets it up (channels, length, enable) and, on the kernels where libiio
/// itself reads it with `read(2)` (every mainline kernel), the reader reads the node directly, so that a wake-up
/// costs one `read` (libiio's refill reads until `EAGAIN`: two per wake-up at one scan per batch).
final class BufferedReader: SampleReader {
    let details: CaptureDetails
    let pollFD: Int32?
    private(set) var nextDeadline: UInt64?

    private struct Slot {
        let sensor: IIOSensor
        let x: ScanLayout.Element
        let y: ScanLayout.Element
        let z: ScanLayout.Element
    }

    private let context: IIOContextHandle
    private var buffer: OpaquePointer?
    private let layout: ScanLayout
    private let slots: [Slot]
    private let timestampElement: ScanLayout.Element?
    /// Nanoseconds added to device timestamps to put them on CLOCK_BOOTTIME (0 when the device stamps on it).
    private let timestampOffset: Int64
    private let period: Double
    /// Bytes one refill reads at most: the buffer's scans (the batch) × the scan size.
    private let bufferBytes: Int
    /// Where a direct read puts the bytes: room for four batches (the kernel buffer libiio asks for when it reads
    /// with `read(2)`), so a read shorter than this has emptied the device. `nil`: libiio's refill reads.
    private let directBuffer: UnsafeMutableRawBufferPointer?
    private let timeout: UInt64?
    private let deviceName: String
    private let node: String
    private var carry: [UInt8] = []
    private var lastTimestamp = -Double.infinity

    var pendingBytes: Int { carry.count }

    init(source: CaptureSource, configuration: CaptureConfiguration) throws(MotionError) {
        let device = source.device
        deviceName = "\(device.id) (\(device.name))"
        guard let node = device.deviceNode, let support = device.buffer else {
            throw MotionError(.unsupported, "\(device.id) has no buffer", at: .init(file: device.sysfsPath))
        }
        self.node = node
        var warnings: [String] = []

        // Permissions first, so the error names the file and the fix (libiio would only say EACCES).
        guard Sysfs.isAccessible(node, mode: R_OK | W_OK) else {
            throw MotionError.deviceAccess(SystemErrno(EACCES), "open", node)
        }
        let sensors = source.sensors.compactMap { device.sensor($0) }
        let channelIDs = sensors.flatMap { $0.scanChannels?.map(\.id) ?? [] }
        for name in ["buffer/enable", "buffer/length"] + channelIDs.map({ "scan_elements/in_\($0)_en" }) {
            let path = device.sysfsPath + "/" + name
            guard Sysfs.isAccessible(path, mode: W_OK) else {
                throw MotionError.deviceAccess(SystemErrno(EACCES), "write", path, attribute: name)
            }
        }

        // Timestamps on CLOCK_BOOTTIME: the device's, when it stamps scans and its clock is or can be set to
        // boottime; converted by the offset measured now when its clock is another one that cannot be changed.
        var timestampChannel: ScanChannel?
        var timestamps = CaptureDetails.TimestampSource.readTime
        var offset: Int64 = 0
        if let channel = support.timestamp {
            let clockPath = device.sysfsPath + "/current_timestamp_clock"
            switch Sysfs.read(clockPath) {
            case .success("boottime"):
                timestampChannel = channel
                timestamps = .deviceTimestamps
            case .success(let original):
                let written = Sysfs.write(clockPath, "boottime")
                let clock = (try? Sysfs.read(clockPath).get()) ?? original
                let why: String
                switch written {
                case .failure(let error): why = "cannot be set to boottime (\(error))"
                case .success: why = "stays \(clock) when set to boottime"
                }
                if clock == "boottime" {
                    timestampChannel = channel
                    timestamps = .deviceTimestamps
                } else if let known = TimestampClock(name: clock) {
                    timestampChannel = channel
                    offset = known.offsetToBoottime()
                    timestamps = .convertedDeviceTimestamps(clock: clock, offset: Double(offset) * 1e-9)
                    warnings.append(
                        "current_timestamp_clock is \(clock) and \(why); converting its timestamps by the \(clock) → "
                            + "boottime offset measured at start, \(formatDecimal(Double(offset) * 1e-9)) s")
                } else {
                    warnings.append(
                        "current_timestamp_clock is \(clock), an unknown clock, and \(why); stamping batches at read time")
                }
            case .failure:
                warnings.append("no current_timestamp_clock (kernel before 4.5?); stamping batches at read time")
            }
        }
        timestampOffset = offset

        let frequency = try DeviceSetup.configureRate(source, rate: configuration.rate, warnings: &warnings)
        let rate = PolledReader.clampedRate(frequency ?? configuration.rate ?? 100)
        period = 1 / rate
        let batch = Int(min(4096, max(1, (rate * configuration.batchDuration).rounded(.up))))

        // The trigger: keep the one set; otherwise the device's own (`<name>-dev<N>`, `<name>-trigger`, same parent).
        var trigger = support.currentTrigger
        if support.acceptsTrigger && trigger == nil {
            if let candidate = device.triggers.first {
                let path = device.sysfsPath + "/trigger/current_trigger"
                switch Sysfs.write(path, candidate) {
                case .success: trigger = candidate
                case .failure(let error) where error.isPermissionDenied:
                    throw MotionError.deviceAccess(error, "write", path, attribute: "trigger/current_trigger")
                case .failure(let error):
                    warnings.append("could not set trigger \(candidate) (\(error)); trying without one")
                }
            } else {
                warnings.append("no trigger found for \(device.id); trying without one (hardware FIFOs need none)")
            }
        }

        // One wake-up per batch: the kernel wakes a poller when `watermark` scans are buffered. The length is
        // written first because the kernel rejects a watermark above the current length.
        if support.hasWatermark {
            _ = Sysfs.write(device.sysfsPath + "/buffer/length", "\(4 * batch)")
            if case .failure(let error) = Sysfs.write(device.sysfsPath + "/buffer/watermark", "\(batch)") {
                warnings.append("could not set buffer/watermark to \(batch) (\(error)); wake-ups may be more frequent")
            }
        }

        // Scan layout of the enabled channels.
        var layoutChannels: [(index: Int, type: ScanElementType)] = []
        for sensor in sensors { for channel in sensor.scanChannels ?? [] { layoutChannels.append((channel.index, channel.type)) } }
        if let timestampChannel { layoutChannels.append((timestampChannel.index, timestampChannel.type)) }
        let layout = ScanLayout(channels: layoutChannels)
        self.layout = layout
        slots = sensors.map { sensor in
            let elements = sensor.scanChannels!.map { layout.element(forIndex: $0.index)! }
            return Slot(sensor: sensor, x: elements[0], y: elements[1], z: elements[2])
        }
        timestampElement = timestampChannel.flatMap { layout.element(forIndex: $0.index) }

        // libiio: enable exactly these channels and open the buffer (writes scan_elements/*_en, buffer/length,
        // buffer/enable, and opens the node).
        context = try IIOContextHandle()
        let enabled = channelIDs + (timestampChannel.map { [$0.id] } ?? [])
        let opened = try context.openBuffer(deviceID: device.id, channels: enabled, samples: batch, node: node)
        buffer = opened.buffer
        bufferBytes = batch * layout.scanSize
        let fd = iioBufferPollFD(opened.buffer)
        pollFD = fd >= 0 ? fd : nil
        directBuffer =
            opened.readsWithRead && fd >= 0
            ? .allocate(byteCount: 4 * bufferBytes, alignment: MemoryLayout<UInt64>.alignment) : nil
        timeout = configuration.timeout.map { nanoseconds(clamping: $0) }
        nextDeadline = timeout.map { monotonicNanoseconds() + $0 }
        details = CaptureDetails(
            device: device, sensors: source.sensors, mode: .buffered, samplingFrequency: frequency, trigger: trigger,
            batchSize: batch, timestamps: timestamps, warnings: warnings)
    }

    deinit {
        close()
        directBuffer?.deallocate()
    }

    func close() {
        guard let buffer else { return }
        self.buffer = nil
        if let pollFD { Reactor.shared.forget(pollFD) }
        iioBufferDestroy(buffer)
    }

    /// Reads what the device has: the bytes, valid until the next call, or `EAGAIN` when it has nothing.
    private func fill(_ buffer: OpaquePointer) -> Result<UnsafeRawBufferPointer, SystemErrno> {
        guard let directBuffer, let pollFD else { return iioBufferRefill(buffer) }
        switch SystemErrno.retryingInterrupts({ Glibc.read(pollFD, directBuffer.baseAddress, directBuffer.count) }) {
        case .success(0):
            return .failure(SystemErrno(EIO))  // the end of the node: as libiio reports it
        case .success(let count):
            return .success(UnsafeRawBufferPointer(rebasing: directBuffer[0..<count]))
        case .failure(let error):
            return .failure(error)
        }
    }

    func read(readable: Bool, now: UInt64) throws(MotionError) -> [MotionSample] {
        guard let buffer else { throw MotionError(.cancelled, "the capture is closed") }
        // The reactor waits for edges (new data), so read until the device has no more: a refill that fills
        // the buffer may have left some (libiio stops at the buffer size, otherwise at EAGAIN). On a real node
        // the last, empty read returns EAGAIN at once.
        var samples: [MotionSample] = []
        for _ in 0..<16 {
            let bytes: UnsafeRawBufferPointer
            switch fill(buffer) {
            case .success(let data):
                bytes = data
            case .failure(let error) where error.isWouldBlock:
                if samples.isEmpty, let timeout, let deadline = nextDeadline, deadline <= now {
                    throw MotionError(
                        .ioFailure, "\(deviceName) delivered no data for \(Double(timeout) / 1e9) s",
                        at: .init(file: node), underlying: IIOReadError(.timeout, device: details.device.id))
                }
                return samples
            case .failure(let error):
                guard samples.isEmpty else {
                    // Deliver what was read; the error comes again at the next read.
                    if let pollFD { Reactor.shared.markReadable(pollFD) }
                    return samples
                }
                throw readFailure(error)
            }
            if let timeout { nextDeadline = now + timeout }
            samples += decode(bytes)
            if bytes.count < (directBuffer?.count ?? bufferBytes) { return samples }  // the device is empty
        }
        if let pollFD { Reactor.shared.markReadable(pollFD) }  // 16 full buffers: let the others have a turn
        return samples
    }

    private func readFailure(_ error: SystemErrno) -> MotionError {
        let id = details.device.id
        switch error.rawValue {
        case EIO, ENODEV, ENXIO, EBADF:  // the device went away under the read
            let kind: IIOReadError.Kind = carry.isEmpty ? .disconnected : .truncatedScan
            let message =
                carry.isEmpty
                ? "\(deviceName) stopped delivering data (removed?)"
                : "\(deviceName) stopped in the middle of a scan (\(carry.count) of \(layout.scanSize) bytes)"
            return MotionError(
                .disconnected, message, at: .init(file: node),
                underlying: IIOReadError(kind, device: id, systemError: error))
        case SystemErrno.timedOut.rawValue:
            return MotionError(
                .ioFailure, "\(deviceName) timed out", at: .init(file: node),
                underlying: IIOReadError(.timeout, device: id, systemError: error))
        default:
            return MotionError(
                .ioFailure, "reading \(deviceName) failed", at: .init(file: node),
                underlying: IIOReadError(.readFailed, device: id, systemError: error))
        }
    }

    /// Decodes every whole scan in `carry` + `bytes`, keeping a trailing partial scan for the next read.
    private func decode(_ bytes: UnsafeRawBufferPointer) -> [MotionSample] {
        let scanSize = layout.scanSize
        var samples: [MotionSample] = []
        samples.reserveCapacity((carry.count + bytes.count) / scanSize)
        var offset = 0
        if !carry.isEmpty {
            let needed = scanSize - carry.count
            let taken = min(needed, bytes.count)
            carry += bytes[0..<taken]
            offset = taken
            if carry.count == scanSize {
                carry.withUnsafeBytes { samples.append(decodeScan($0)) }
                carry.removeAll(keepingCapacity: true)
            }
        }
        while offset + scanSize <= bytes.count {
            samples.append(decodeScan(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + scanSize])))
            offset += scanSize
        }
        if offset < bytes.count { carry += bytes[offset...] }
        stamp(&samples)
        return samples
    }

    private func decodeScan(_ scan: UnsafeRawBufferPointer) -> MotionSample {
        var sample = MotionSample(timestamp: 0)
        for slot in slots {
            let raw = SIMD3(
                Double(slot.x.type.decode(scan, at: slot.x.offset)), Double(slot.y.type.decode(scan, at: slot.y.offset)),
                Double(slot.z.type.decode(scan, at: slot.z.offset)))
            let value = slot.sensor.convert(raw: raw)
            switch slot.sensor.kind {
            case .accelerometer: sample.acceleration = Acceleration(value)
            case .gyroscope: sample.rotationRate = RotationRate(value)
            case .magnetometer: sample.magneticField = MagneticField(value)
            }
        }
        if let element = timestampElement {
            sample.timestamp = Double(element.type.decode(scan, at: element.offset) &+ timestampOffset) * 1e-9
        }
        return sample
    }

    /// Device timestamps are kept (never going back in time); otherwise the batch ends at the read time and
    /// is spread back at the sampling period, starting no earlier than one period after the last sample.
    private func stamp(_ samples: inout [MotionSample]) {
        guard !samples.isEmpty else { return }
        if timestampElement != nil {
            for i in samples.indices {
                samples[i].timestamp = max(samples[i].timestamp, lastTimestamp)
                lastTimestamp = samples[i].timestamp
            }
            return
        }
        let now = boottimeSeconds()
        let start = max(now - Double(samples.count - 1) * period, lastTimestamp + period)
        for i in samples.indices { samples[i].timestamp = start + Double(i) * period }
        lastTimestamp = samples[samples.count - 1].timestamp
    }
}

/// Reads `in_<type>_<axis>_raw` at a fixed interval (devices without a buffer, or whose buffer is busy or silent).
final class PolledReader: SampleReader {
    let details: CaptureDetails
    let pollFD: Int32? = nil
    let pendingBytes = 0
    private(set) var nextDeadline: UInt64?

    private let sensors: [(sensor: IIOSensor, paths: [String])]
    private let interval: UInt64
    private let deviceName: String
    private var lastTimestamp = -Double.infinity

    /// Opens the reader; `fallback` says why a device that can buffer is polled (``CaptureDetails/fallback``).
    init(source: CaptureSource, configuration: CaptureConfiguration, fallback: String? = nil) throws(MotionError) {
        let device = source.device
        deviceName = "\(device.id) (\(device.name))"
        var warnings: [String] = []
        var sensors: [(IIOSensor, [String])] = []
        for kind in source.sensors {
            guard let sensor = device.sensor(kind) else { continue }
            guard sensor.hasRawAttributes else {
                throw MotionError(
                    .unsupported, "\(deviceName) has no in_\(kind.channelType)_*_raw attributes to poll",
                    at: .init(file: device.sysfsPath))
            }
            let paths = ["x", "y", "z"].map { "\(device.sysfsPath)/in_\(kind.channelType)_\($0)_raw" }
            for path in paths where !Sysfs.isAccessible(path, mode: R_OK) {
                throw MotionError.deviceAccess(SystemErrno(EACCES), "read", path)
            }
            sensors.append((sensor, paths))
        }
        self.sensors = sensors
        let frequency = try DeviceSetup.configureRate(source, rate: configuration.rate, warnings: &warnings)
        interval = nanoseconds(clamping: 1 / Self.clampedRate(configuration.rate ?? frequency ?? 10))
        nextDeadline = monotonicNanoseconds()
        details = CaptureDetails(
            device: device, sensors: source.sensors, mode: .polled, samplingFrequency: frequency, trigger: nil,
            batchSize: 1, timestamps: .pollTime, warnings: warnings, fallback: fallback)
    }

    /// A rate in Hz within what a device can be read at: 0.1 Hz to 100 kHz (10 for NaN). Rates come from sysfs and
    /// from clients' intervals (a 10¹¹ s interval is a 10⁻¹¹ Hz rate); no period or batch is made of one outside.
    static func clampedRate(_ rate: Double) -> Double {
        rate.isNaN ? 10 : min(max(rate, 0.1), 100_000)
    }

    func close() {
        nextDeadline = nil
    }

    func read(readable: Bool, now: UInt64) throws(MotionError) -> [MotionSample] {
        guard let deadline = nextDeadline else { throw MotionError(.cancelled, "the capture is closed") }
        guard deadline <= now else { return [] }
        // The next poll on the fixed grid; after a stall, restart the grid instead of catching up in a burst.
        let next = deadline + interval
        nextDeadline = next > now ? next : now + interval
        var sample = MotionSample(timestamp: max(boottimeSeconds(), lastTimestamp))
        lastTimestamp = sample.timestamp
        for (sensor, paths) in sensors {
            var raw = SIMD3<Double>()
            for (axis, path) in paths.enumerated() {
                switch Sysfs.read(path) {
                case .success(let text):
                    guard let value = parseDecimal(text) else {
                        throw MotionError(
                            .ioFailure, "\(deviceName) returned \"\(text)\", not a number", at: .init(file: path),
                            underlying: IIOReadError(.readFailed, device: details.device.id))
                    }
                    raw[axis] = value
                case .failure(let error):
                    throw MotionError.deviceAccess(error, "read", path)
                }
            }
            let value = sensor.convert(raw: raw)
            switch sensor.kind {
            case .accelerometer: sample.acceleration = Acceleration(value)
            case .gyroscope: sample.rotationRate = RotationRate(value)
            case .magnetometer: sample.magneticField = MagneticField(value)
            }
        }
        return [sample]
    }
}
