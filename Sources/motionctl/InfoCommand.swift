import ArgumentParser
import MotionCore
import MotionTesting
import MotionTrace

/// `motionctl info`: what a trace holds (time span, rate and gaps, ranges per sensor, metadata), in one pass in
/// bounded memory.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a trace: duration, rate and gaps, ranges per sensor, metadata.",
        discussion: """
            The trace is read once, as it streams ('-' reads stdin), in bounded memory. Per sensor: the readings, \
            the median interval and rate, the gaps (intervals longer than 3 × the median), the five largest \
            intervals with their times, and each axis' minimum and maximum (g, rad/s, µT). --format json prints \
            one JSON object with the keys listed in Docs/CLI.md. With --lenient, malformed rows are skipped and \
            reported (counts by reason and the first ones with their line numbers).
            """
    )

    /// `text` or `json`.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Argument(help: ArgumentHelp("The trace, in the canonical CSV format; '-' reads stdin.", valueName: "trace"))
    var trace: String

    @Option(help: "Output format: text (for people) or json (one object, stable keys).")
    var format: Format = .text

    @Flag(help: "Skip malformed rows instead of stopping, and report them.")
    var lenient = false

    func run() throws {
        do {
            let reader = try TraceReader(path: trace, options: .init(lenient: lenient))
            var summary = TraceSummary(sensors: reader.sensors)
            while let sample = try reader.next() {
                summary.add(sample)
            }
            let text =
                format == .json
                ? Self.json(summary, reader: reader, lenient: lenient)
                : Self.text(summary, reader: reader, lenient: lenient)
            try TextOutput.write(text, to: 1, name: "<stdout>")
        } catch {
            throw report(error)
        }
    }

    // MARK: - Text

    /// The report for people: one section for the trace, then one per sensor.
    static func text(_ summary: TraceSummary, reader: TraceReader, lenient: Bool) -> String {
        var lines: [String] = []
        lines.append("trace: \(reader.name)")
        if let start = summary.start, let end = summary.end {
            lines.append(
                "rows: \(summary.rows), from \(number(start)) s to \(number(end)) s (duration \(number(summary.duration)) s)")
        } else {
            lines.append("rows: 0")
        }
        lines.append("columns: \(reader.columnNames.joined(separator: ","))")
        let metadata = reader.metadata.lines
        lines.append("metadata: \(metadata.isEmpty ? "none" : "\(metadata.count) line\(metadata.count == 1 ? "" : "s")")")
        for line in metadata {
            switch line {
            case .entry(let key, let value): lines.append("  # \(key): \(value)")
            case .comment(let text): lines.append("  # \(text)")
            }
        }
        for sensor in summary.sensors {
            lines.append("")
            lines.append(contentsOf: text(sensor))
        }
        if lenient {
            lines.append("")
            let skipped = reader.skipReport
            lines.append(skipped.skippedRows == 0 ? "skipped rows: 0" : "skipped rows: \(skipped)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func text(_ sensor: SensorSummary) -> [String] {
        var lines = ["\(sensor.title) (\(sensor.unit)): \(sensor.samples) reading\(sensor.samples == 1 ? "" : "s")"]
        guard let first = sensor.first, let last = sensor.last else { return lines }
        lines[0] += ", from \(number(first)) s to \(number(last)) s"
        if let median = sensor.medianInterval, let threshold = sensor.gapThreshold {
            let rate = sensor.medianRate.map { "\(fixed($0, 3)) Hz" } ?? "no rate (equal timestamps)"
            lines.append("  rate: \(rate), median interval \(milliseconds(median))")
            lines.append(
                "  gaps (intervals > \(fixed(SensorSummary.gapFactor, 0)) × median = \(milliseconds(threshold))): "
                    + "\(sensor.gapCount)")
            let gaps = sensor.largestGaps.map { "\(milliseconds($0.length)) at \(number($0.start)) s" }
            lines.append("  largest intervals: " + gaps.joined(separator: ", "))
        }
        for (axis, index) in [("x", 0), ("y", 1), ("z", 2)] {
            lines.append(
                "  \(axis): min \(number(sensor.minimum[index])) \(sensor.unit), max \(number(sensor.maximum[index])) \(sensor.unit)")
        }
        return lines
    }

    /// A value's shortest exact text (`0.0035`, `59.9965`).
    private static func number(_ value: Double) -> String { JSONNumber.text(value) }

    /// Seconds as milliseconds with 3 decimals: `3.500 ms`.
    private static func milliseconds(_ seconds: Double) -> String { "\(fixed(seconds * 1000, 3)) ms" }

    // MARK: - JSON

    /// One JSON object, keys in a fixed order (Docs/CLI.md lists them).
    static func json(_ summary: TraceSummary, reader: TraceReader, lenient: Bool) -> String {
        var object = JSONObject()
        object.add("file", string: reader.name)
        object.add("columns", raw: "[" + reader.columnNames.map(JSONString.quoted).joined(separator: ",") + "]")
        object.add("rows", summary.rows)
        object.add("start_s", summary.start)
        object.add("end_s", summary.end)
        object.add("duration_s", summary.duration)
        let metadata = reader.metadata.lines.map { line in
            switch line {
            case .entry(let key, let value): "{\"key\":\(JSONString.quoted(key)),\"value\":\(JSONString.quoted(value))}"
            case .comment(let text): "{\"comment\":\(JSONString.quoted(text))}"
            }
        }
        object.add("metadata", raw: "[" + metadata.joined(separator: ",") + "]")
        var sensors = JSONObject()
        for sensor in summary.sensors { sensors.add(sensor.name, raw: json(sensor)) }
        object.add("sensors", raw: sensors.text)
        let skipped = reader.skipReport
        var skip = JSONObject()
        skip.add("rows", skipped.skippedRows)
        var reasons = JSONObject()
        for reason in SkipReport.Reason.allReasons {
            if let count = skipped.counts[reason] { reasons.add(reason.description, count) }
        }
        skip.add("by_reason", raw: reasons.text)
        let examples = skipped.examples.map { example in
            var item = JSONObject()
            item.add("line", example.line)
            item.add("column", string: example.column)
            item.add("reason", string: example.reason.description)
            item.add("message", string: example.message)
            return item.text
        }
        skip.add("examples", raw: "[" + examples.joined(separator: ",") + "]")
        object.add("skipped", raw: skip.text)
        return object.text + "\n"
    }

    private static func json(_ sensor: SensorSummary) -> String {
        var object = JSONObject()
        object.add("unit", string: sensor.unit)
        object.add("samples", sensor.samples)
        object.add("start_s", sensor.first)
        object.add("end_s", sensor.last)
        object.add("median_interval_s", sensor.medianInterval)
        object.add("median_rate_hz", sensor.medianRate)
        object.add("gap_threshold_s", sensor.gapThreshold)
        object.add("gaps", sensor.gapCount)
        let gaps = sensor.largestGaps.map { gap in
            var item = JSONObject()
            item.add("start_s", gap.start)
            item.add("end_s", gap.end)
            item.add("length_s", gap.length)
            return item.text
        }
        object.add("largest_gaps", raw: "[" + gaps.joined(separator: ",") + "]")
        let hasReadings = sensor.samples > 0
        object.add("min", raw: hasReadings ? vector(sensor.minimum) : "null")
        object.add("max", raw: hasReadings ? vector(sensor.maximum) : "null")
        return object.text
    }

    private static func vector(_ value: SIMD3<Double>) -> String {
        var object = JSONObject()
        object.add("x", value.x)
        object.add("y", value.y)
        object.add("z", value.z)
        return object.text
    }
}

/// A JSON object built as text, members in the order they are added.
struct JSONObject {
    private var members: [String] = []

    mutating func add(_ key: String, raw: String) {
        members.append(JSONString.quoted(key) + ":" + raw)
    }

    mutating func add(_ key: String, string: String?) {
        add(key, raw: string.map(JSONString.quoted) ?? "null")
    }

    mutating func add(_ key: String, _ number: Double?) {
        add(key, raw: number.map(JSONNumber.text) ?? "null")
    }

    mutating func add(_ key: String, _ number: Int) {
        add(key, raw: String(number))
    }

    var text: String { "{" + members.joined(separator: ",") + "}" }
}
