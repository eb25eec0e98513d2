import ArgumentParser
import Motion
import MotionClient
import MotionCore
import MotionProtocol
import MotionStore
import MotionSystem
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl history`: the samples, device motion or events a history store holds (`motiond --history DIR`, or any
/// `MotionStore`), oldest first, stamped in Unix time.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print the samples, device motion or events kept in a history store, oldest first.",
        discussion: """
            Reads the store in --store (the folder given to motiond --history; reading needs only read access, \
            also while it is written), or with --service asks the motion service for it (at most 25 Hz without \
            the high-rate right, as for streams), and prints its samples as a canonical trace, CSV or JSON Lines, with t in \
            Unix seconds (the samples' own clock plus the offset measured when they were written), so that a \
            history spanning reboots stays in order. --since SECONDS takes the last SECONDS until now; --from and \
            --to take Unix times; without them, everything. Damaged parts of the store are skipped and reported on \
            stderr, the rest is printed (status 0). --kind device-motion prints the recorded device motion \
            (motiond --history-device-motion) as motionctl attitude --all does, --kind events the recorded shakes \
            and orientation changes (motiond --history-events). See Docs/History.md.
            """
    )

    @Option(help: "The store's folder (motiond --history DIR), read directly (needs read access to it).", completion: .directory)
    var store: String?

    @Flag(help: "Ask the motion service for the history it records (motiond --history): at most 25 Hz without the high-rate right.")
    var service = false

    @Option(help: "Only the samples of the last SECONDS, until now.")
    var since: Double?

    @Option(help: "The first sample's earliest time, in Unix seconds.")
    var from: Double?

    @Option(help: "The last sample's latest time, in Unix seconds.")
    var to: Double?

    @Option(help: "The sensors printed (columns): a comma-separated list of accel, gyro, mag (default: those of the first sample).")
    var sensors: String?

    @Option(help: "Output format: csv or jsonl.")
    var format: TraceFormat = .csv

    @Option(help: "What to print: samples, device-motion or events.")
    var kind = "samples"

    var historyKind: Motion1Interface.HistoryKind { Motion1Interface.HistoryKind(rawValue: kind) ?? .samples }

    func validate() throws {
        guard (store == nil) != !service else { throw ValidationError("give one of --store DIR or --service") }
        if let since {
            guard since > 0, since.isFinite else { throw ValidationError("--since must be a number of seconds > 0, not \(since)") }
            guard from == nil, to == nil else { throw ValidationError("give --since, or --from and --to, not both") }
        }
        for (name, value) in [("--from", from), ("--to", to)] {
            if let value, !value.isFinite { throw ValidationError("\(name) must be a Unix time in seconds, not \(value)") }
        }
        if let from, let to, from > to { throw ValidationError("--from (\(from)) is after --to (\(to))") }
        guard Motion1Interface.HistoryKind(rawValue: kind) != nil else {
            throw ValidationError("--kind must be samples, device-motion or events, not '\(kind)'")
        }
        if sensors != nil && historyKind != .samples { throw ValidationError("--sensors goes with --kind samples only") }
        if let sensors, SensorSet(shortNames: sensors) == nil {
            throw ValidationError("--sensors must list accel, gyro or mag (comma-separated), not '\(sensors)'")
        }
    }

    func run() throws {
        Interruption.install()
        do {
            let now = Double(time(nil))
            let start = since.map { now - $0 } ?? from ?? -.infinity
            guard let store else {
                let answer = try MotionServiceQuery.openHistory(
                    from: start, to: to ?? .infinity, format: format, kind: historyKind,
                    sensors: sensors.flatMap(SensorSet.init(shortNames:)))
                defer { close(answer) }
                try copyToEnd(answer)
                return
            }
            var reader = try StoreReader(directory: store, from: start, through: to ?? .infinity)
            var writer: TraceWriter?
            var columns = sensors.flatMap(SensorSet.init(shortNames:))
            var left: SensorSet = []
            var leftCount = 0
            var metadata = TraceMetadata()
            metadata["generator"] = "motionctl history"
            metadata["clock"] = "unix"
            var reported = 0
            func reportDamage(_ reader: StoreReader) {
                for damage in reader.damage.dropFirst(reported) { printToStandardError("motionctl: warning: \(damage)") }
                reported = reader.damage.count
            }
            if historyKind != .samples {
                try printRecords(&reader, metadata: metadata, report: reportDamage)
                return
            }
            while let batch = try reader.next() {
                reportDamage(reader)
                if Interruption.isRequested { break }
                guard !batch.samples.isEmpty else { continue }
                let batchSensors = batch.samples.reduce(into: SensorSet()) { $0.formUnion($1.sensors) }
                if writer == nil {
                    if columns == nil { columns = batchSensors }
                    if !batch.label.isEmpty { metadata["source"] = batch.label }
                    writer = try TraceWriter(
                        fileDescriptor: 1, name: "<stdout>", format: format, sensors: columns!, metadata: metadata)
                }
                let shown = columns!
                for stored in batch.samples {
                    let extra = stored.sensors.subtracting(shown)
                    if !extra.isEmpty {
                        left.formUnion(extra)
                        leftCount += 1
                    }
                    var sample = stored.restricted(to: shown)
                    sample.timestamp += batch.clockOffset
                    guard !sample.sensors.isEmpty else { continue }
                    try writer!.write(sample)
                }
            }
            reportDamage(reader)
            if writer == nil {
                writer = try TraceWriter(
                    fileDescriptor: 1, name: "<stdout>", format: format, sensors: columns ?? .accelerometer,
                    metadata: metadata)
            }
            try writer!.flush()
            if leftCount > 0 {
                printToStandardError(
                    "motionctl: warning: \(leftCount) samples had readings of \(left) not printed; "
                        + "give --sensors to print them")
            }
        } catch {
            throw report(error)
        }
    }
}

extension HistoryCommand {
    /// Prints the device motion (as `attitude` records) or the events of `reader`'s range.
    func printRecords(
        _ reader: inout StoreReader, metadata: TraceMetadata, report: (StoreReader) -> Void
    ) throws(MotionError) {
        let deviceMotion = historyKind == .deviceMotion
        let writer = try HistoryRecords.writer(deviceMotion: deviceMotion, format: format, metadata: metadata, fileDescriptor: 1)
        var values: [Double] = []
        while let batch = try reader.next() {
            report(reader)
            if Interruption.isRequested { break }
            try HistoryRecords.write(batch, deviceMotion: deviceMotion, to: writer, values: &values)
        }
        report(reader)
        try writer.flush()
    }
}

/// The longest the motion service's answer may pause, in seconds: the service writes a frame of the store (about
/// a second of samples) at a time, so a longer silence means it stopped answering.
private let answerPauseLimit = 60.0

/// Copies `descriptor` to stdout until its end; SIGINT or SIGTERM ends the copy at once, and so does a pause of
/// ``answerPauseLimit`` (with an error).
private func copyToEnd(_ descriptor: Int32) throws(MotionError) {
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var lastData = monotonicNanoseconds()
    while !Interruption.isRequested {
        var waits = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        if Interruption.wakeDescriptor >= 0 {
            waits.append(pollfd(fd: Interruption.wakeDescriptor, events: Int16(POLLIN), revents: 0))
        }
        guard poll(&waits, nfds_t(waits.count), 1000) >= 0 || errno == EINTR else {
            throw MotionError(.ioFailure, "cannot wait for the motion service's answer", underlying: SystemErrno.current())
        }
        guard waits[0].revents != 0 else {
            if monotonicNanoseconds() - lastData > nanoseconds(clamping: answerPauseLimit) {
                throw MotionError(
                    .ioFailure,
                    "the motion service sent nothing of its answer for \(Int(answerPauseLimit)) s; check that it runs "
                        + "(systemctl status motiond), then ask again")
            }
            continue
        }
        lastData = monotonicNanoseconds()
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count == 0 { return }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { continue }
            throw MotionError(.ioFailure, "cannot read the motion service's answer", underlying: SystemErrno.current())
        }
        let failure = buffer.withUnsafeBytes { bytes in
            Result { () throws(MotionError) in
                try TextOutput.write(UnsafeRawBufferPointer(rebasing: bytes[..<count]), to: 1, name: "<stdout>")
            }
        }
        try failure.get()
    }
}
