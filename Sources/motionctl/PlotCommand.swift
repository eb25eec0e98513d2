import ArgumentParser
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import MotionTrace

/// `motionctl plot`: an SVG of a trace, one panel per sensor (and attitude), decimated to one min/max pair per pixel
/// column so its size is bounded whatever the trace's length.
struct PlotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract: "Draw a trace as an SVG: one panel per sensor, optionally attitude and events.",
        discussion: """
            One panel per sensor in the trace (acceleration in g, rotation rate in rad/s, magnetic field in µT; x, y \
            and z in red, green and blue), time in seconds. --attitude adds roll, pitch and yaw in degrees from the \
            same fusion as the attitude command (frame and settings as it, without flags), --events marks shakes and \
            orientation changes found as the shake and orientation commands find them (their settings, default \
            flags). The trace is read once, in bounded memory, and reduced to the extremes of each of the 1000 \
            pixel columns, so the SVG stays under 1 MB for any trace (see Docs/CLI.md). The file is written \
            atomically (a temporary file in the same folder, then renamed); an existing file is kept (status 73) \
            unless --overwrite is given. --output - writes to stdout.
            """
    )

    @Argument(help: ArgumentHelp("The trace, in the canonical CSV format; '-' reads stdin.", valueName: "trace"))
    var trace: String

    @Option(help: ArgumentHelp("The SVG file to write; '-' is stdout.", valueName: "file"))
    var output: String

    @Flag(help: "Replace the --output file if it exists (atomically, once the plot is written).")
    var overwrite = false

    @Flag(help: "Add a panel of roll, pitch and yaw (degrees), fused as the attitude command does.")
    var attitude = false

    @Flag(help: "Mark shakes and orientation changes, found as the shake and orientation commands find them.")
    var events = false

    @Flag(help: "Skip malformed rows instead of stopping; a count of skipped rows by reason goes to stderr.")
    var lenient = false

    /// The largest SVG this command writes, bytes (Docs/CLI.md; a test checks it on a long, noisy trace).
    static let maximumBytes = 1_000_000

    func run() async throws {
        Interruption.install()
        do {
            if !overwrite { try TraceOutputFile.checkAbsent(output) }  // before reading anything
            let svg = try await plot()
            let file = try TraceOutputFile(path: output, existing: overwrite ? .replace : .refuse)
            defer { file.close() }
            try TextOutput.write(svg, to: file.fileDescriptor, name: file.name)
            try file.commit()
        } catch {
            throw report(error)
        }
    }

    /// Reads the trace and returns the SVG text.
    func plot() async throws(MotionError) -> String {
        let settings = try MotionSettings.load()
        let reader = try TraceReader(path: trace, options: .init(lenient: lenient))
        defer { warnAboutSkippedRows(reader) }
        var configuration = settings.motionConfiguration
        do {  // the configurations `shake` and `orientation` use without flags
            configuration.shake = try ShakeSensitivityOptions.parse([]).configuration(settings)
            configuration.orientation = try OrientationSettingsOptions.parse([]).configuration(settings)
        } catch {
            throw MotionError(.invalidArgument, "the event detectors' default options: \(error)")
        }
        let frame = configuration.referenceFrame
        if attitude, !reader.sensors.isSuperset(of: frame.requiredSensors) {
            throw MotionError(
                .invalidArgument,
                "--attitude in the \(frame.shortName) frame (the setting deviceMotion.referenceFrame) needs "
                    + "\(frame.requiredSensors) but the trace has \(reader.sensors)",
                at: .init(file: reader.name))
        }
        if events { try requireAccelerometer(reader, path: reader.name) }

        let columns = SVGPlot.plotWidth
        var sensors = SensorSet.shortNames.filter { reader.sensors.contains($0.sensor) }.map {
            (name: $0.name, sensor: $0.sensor, series: Decimator(capacity: columns))
        }
        var angles = Decimator(capacity: columns)
        var markers: [SVGPlot.Marker] = []
        var droppedMarkers = 0
        var (start, end): (Double?, Double) = (nil, 0)
        func mark(_ time: Double, _ label: String, _ color: String) {
            if markers.count < SVGPlot.maximumMarkers {
                markers.append(SVGPlot.Marker(time: time, label: label, color: color))
            } else {
                droppedMarkers += 1
            }
        }

        let toDegrees = 180 / Double.pi
        let attitude = attitude
        let request = MotionProcessor.Request(
            sensors: reader.sensors, updateInterval: 0, referenceFrames: attitude ? [frame] : [], shake: events,
            orientation: events)
        try await drive(.trace(reader, pacing: .max), configuration: configuration, request: request, flush: {}) {
            outputs throws(MotionError) in
            if let sample = outputs.sample {
                if start == nil { start = sample.timestamp }
                end = sample.timestamp
                for index in sensors.indices {
                    if let reading = sample.vector(of: sensors[index].sensor) {
                        sensors[index].series.add(reading, at: sample.timestamp)
                    }
                }
            }
            if attitude, let motion = outputs.deviceMotion(in: frame) {
                let a = motion.attitude
                angles.add(SIMD3(a.roll, a.pitch, a.yaw) * toDegrees, at: outputs.timestamp)
            }
            if let shake = outputs.shake {
                switch shake.phase {
                case .began: mark(shake.timestamp, "shake", "#ff7f0e")
                case .ended: mark(shake.timestamp, "shake end", "#8c564b")
                case .cancelled(let reason): mark(shake.timestamp, "shake cancelled (\(reason))", "#8c564b")
                }
            }
            if let change = outputs.orientationChange {
                for report in OutputRecords.reports(of: change, iioSensorProxyNames: false) {
                    mark(change.timestamp, report.value, "#9467bd")
                }
            }
            return true
        }

        let titles: [String: (String, String)] = [
            "accel": ("acceleration", "g"), "gyro": ("rotation rate", "rad/s"), "mag": ("magnetic field", "µT"),
        ]
        var panels = sensors.map { sensor in
            SVGPlot.Panel(
                title: titles[sensor.name]!.0, unit: titles[sensor.name]!.1, names: ["x", "y", "z"],
                series: sensor.series)
        }
        if attitude {
            panels.append(
                SVGPlot.Panel(
                    title: "attitude (\(frame.shortName))", unit: "degrees", names: ["roll", "pitch", "yaw"],
                    series: angles))
        }
        let metadata = reader.metadata.lines.map { line in
            switch line {
            case .entry(let key, let value): "\(key): \(value)"
            case .comment(let text): text
            }
        }
        let plot = SVGPlot(
            title: reader.name, metadata: metadata, panels: panels, markers: markers, droppedMarkers: droppedMarkers,
            start: start ?? 0, end: end)
        return plot.text
    }
}
