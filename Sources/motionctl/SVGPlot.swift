import MotionTesting

#if canImport(Glibc)
import Glibc
#endif

/// Three time series (x, y, z; or roll, pitch, yaw) reduced, as they arrive, to at most ``capacity`` time buckets,
/// each keeping every channel's minimum and maximum with their times: the min/max-per-pixel-column decimation of a
/// plot, in bounded memory whatever the length of the trace.
///
/// Buckets start 1 ms wide; when a value falls beyond the last bucket, neighbouring buckets are merged in pairs and
/// the width doubles, so a trace of any duration ends with at most ``capacity`` buckets (at least half of them
/// covering the series once it is longer than `capacity` ms).
struct Decimator {
    /// One time bucket: per channel, the extremes and when they occurred, and the first and last time in it.
    struct Bucket {
        var count = 0
        var first = 0.0
        var last = 0.0
        var minimum = SIMD3<Double>(repeating: .infinity)
        var maximum = SIMD3<Double>(repeating: -.infinity)
        var minimumTime = SIMD3<Double>.zero
        var maximumTime = SIMD3<Double>.zero

        mutating func add(_ values: SIMD3<Double>, at time: Double) {
            if count == 0 { first = time }
            count += 1
            last = time
            for channel in 0..<3 {
                if values[channel] < minimum[channel] { (minimum[channel], minimumTime[channel]) = (values[channel], time) }
                if values[channel] > maximum[channel] { (maximum[channel], maximumTime[channel]) = (values[channel], time) }
            }
        }

        mutating func merge(_ other: Bucket) {
            guard other.count > 0 else { return }
            guard count > 0 else {
                self = other
                return
            }
            count += other.count
            last = other.last
            for channel in 0..<3 {
                if other.minimum[channel] < minimum[channel] {
                    (minimum[channel], minimumTime[channel]) = (other.minimum[channel], other.minimumTime[channel])
                }
                if other.maximum[channel] > maximum[channel] {
                    (maximum[channel], maximumTime[channel]) = (other.maximum[channel], other.maximumTime[channel])
                }
            }
        }
    }

    /// The most buckets kept: one per pixel column of the plot.
    let capacity: Int
    private(set) var buckets: [Bucket] = []
    private var start: Double?
    private var previous: Double?
    /// The width of a bucket, s.
    private(set) var width = 0.001
    /// The intervals between the values' times.
    private(set) var intervals = IntervalHistogram()

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Adds the values at `time` (non-finite values are left out).
    mutating func add(_ values: SIMD3<Double>, at time: Double) {
        guard values.x.isFinite, values.y.isFinite, values.z.isFinite, time.isFinite else { return }
        let start = self.start ?? time
        let offset = time - start
        guard offset.isFinite else { return }  // beyond any plot: only for times near ±1.8e308 s
        self.start = start
        if let previous { intervals.add(time - previous) }
        previous = time
        var position = (offset / width).rounded(.down)
        while position >= Double(capacity) {
            var merged: [Bucket] = []
            merged.reserveCapacity(capacity)
            var pair = 0
            while pair < buckets.count {
                var bucket = buckets[pair]
                if pair + 1 < buckets.count { bucket.merge(buckets[pair + 1]) }
                merged.append(bucket)
                pair += 2
            }
            buckets = merged
            width *= 2
            position = (offset / width).rounded(.down)
        }
        let index = Int(position)  // in 0..<capacity
        while buckets.count <= index { buckets.append(Bucket()) }
        buckets[index].add(values, at: time)
    }

    /// An interval longer than this breaks the plotted line: 3 × the median interval (as `info` counts gaps), s.
    var gapThreshold: Double { intervals.median.map { $0 * SensorSummary.gapFactor } ?? .infinity }

    /// The smallest and largest value of every channel, or `nil` without values.
    var range: (minimum: Double, maximum: Double)? {
        let filled = buckets.filter { $0.count > 0 }
        guard !filled.isEmpty else { return nil }
        let low = filled.map { $0.minimum.min() }.min()!
        let high = filled.map { $0.maximum.max() }.max()!
        return (low, high)
    }
}

/// Text made safe for SVG (XML) character data and attribute values: `&`, `<`, `>`, `"` and `'` escaped, and the
/// characters XML 1.0 does not allow (control characters other than tab, line feed and carriage return) replaced by
/// U+FFFD.
func xmlEscaped(_ text: String) -> String {
    var result = ""
    result.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": result += "&amp;"
        case "<": result += "&lt;"
        case ">": result += "&gt;"
        case "\"": result += "&quot;"
        case "'": result += "&#39;"
        case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
        default:
            let value = scalar.value
            let allowed = value >= 0x20 && !(0xD800...0xDFFF).contains(value) && value != 0xFFFE && value != 0xFFFF
            result.unicodeScalars.append(allowed ? scalar : "\u{FFFD}")
        }
    }
    return result
}

/// About `count` round tick values covering `low…high`: multiples of 1, 2 or 5 × 10ⁿ.
func niceTicks(_ low: Double, _ high: Double, count: Int = 5) -> [Double] {
    guard low.isFinite, high.isFinite, high > low else { return low.isFinite ? [low] : [] }
    let raw = (high - low) / Double(count)
    let magnitude = pow(10, (log10(raw)).rounded(.down))
    let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    var ticks: [Double] = []
    var tick = (low / step).rounded(.up) * step
    while tick <= high + step * 1e-9, ticks.count < 50 {
        ticks.append(abs(tick) < step * 1e-9 ? 0 : tick)
        tick += step
    }
    return ticks
}

/// A tick label with as many decimals as the step needs: `0.5`, `10`, `-0.25`.
func tickLabel(_ value: Double, step: Double) -> String {
    let decimals = step > 0 && step.isFinite ? min(9, max(0, -Int(log10(step).rounded(.down)))) : 0
    return fixed(value, decimals)
}

/// An SVG document of stacked panels sharing one time axis, written as text.
struct SVGPlot {
    /// One panel: a title with its unit, and three decimated series.
    struct Panel {
        var title: String
        var unit: String
        var names: [String]
        var series: Decimator
    }

    /// An event drawn as a vertical marker across the panels.
    struct Marker {
        var time: Double
        var label: String
        var color: String
    }

    // Layout, px.
    static let plotWidth = 1000
    static let left = 90
    static let right = 130
    static let panelHeight = 200
    static let panelGap = 60
    static let top = 150
    static let width = left + plotWidth + right
    /// The most markers drawn; later events are counted in a note.
    static let maximumMarkers = 500
    /// The most metadata lines shown, and the most characters of each.
    static let maximumMetadataLines = 4
    static let maximumMetadataCharacters = 160
    /// The series colours: x, y, z (roll, pitch, yaw).
    static let colors = ["#d62728", "#2ca02c", "#1f77b4"]

    var title: String
    var metadata: [String]
    var panels: [Panel]
    var markers: [Marker]
    var droppedMarkers: Int
    var start: Double
    var end: Double

    /// The document.
    var text: String {
        let height = Self.top + panels.count * (Self.panelHeight + Self.panelGap) + 20
        var svg = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(height)" \
            viewBox="0 0 \(Self.width) \(height)" font-family="sans-serif" font-size="12">
            <title>\(xmlEscaped(title))</title>
            <rect x="0" y="0" width="\(Self.width)" height="\(height)" fill="#ffffff"/>
            <text x="\(Self.left)" y="24" font-size="16" font-weight="bold">\(xmlEscaped(title))</text>

            """
        for (index, line) in metadata.prefix(Self.maximumMetadataLines).enumerated() {
            let shown = line.count > Self.maximumMetadataCharacters
                ? String(line.prefix(Self.maximumMetadataCharacters)) + "…" : line
            svg += "<text x=\"\(Self.left)\" y=\"\(44 + 14 * index)\" fill=\"#555555\">\(xmlEscaped(shown))</text>\n"
        }
        if metadata.count > Self.maximumMetadataLines {
            svg += "<text x=\"\(Self.left)\" y=\"\(44 + 14 * Self.maximumMetadataLines)\" fill=\"#555555\">"
                + "(\(metadata.count - Self.maximumMetadataLines) more metadata lines: motionctl info)</text>\n"
        }
        // Halves, so that no difference overflows even for times near ±1.8e308 s.
        let halfSpan = end > start ? end / 2 - start / 2 : 0.5
        func x(_ time: Double) -> Double {
            Double(Self.left) + (time / 2 - start / 2) / halfSpan * Double(Self.plotWidth)
        }
        let timeTicks = niceTicks(start, end > start ? end : start + 1, count: 10)
        let timeStep = timeTicks.count > 1 ? timeTicks[1] - timeTicks[0] : 1
        for (index, panel) in panels.enumerated() {
            let top = Self.top + index * (Self.panelHeight + Self.panelGap)
            svg += self.panel(panel, top: top, x: x, timeTicks: timeTicks, timeStep: timeStep)
        }
        // Events: a dashed line across every panel and a label above the first.
        let bottom = Self.top + panels.count * (Self.panelHeight + Self.panelGap) - Self.panelGap
        for marker in markers {
            let position = fixed(x(marker.time), 1)
            svg += "<line x1=\"\(position)\" y1=\"\(Self.top - 20)\" x2=\"\(position)\" y2=\"\(bottom)\" "
                + "stroke=\"\(marker.color)\" stroke-width=\"1\" stroke-dasharray=\"4 3\"/>"
                + "<text x=\"\(position)\" y=\"\(Self.top - 24)\" fill=\"\(marker.color)\" font-size=\"10\" "
                + "text-anchor=\"middle\">\(xmlEscaped(marker.label))</text>\n"
        }
        if droppedMarkers > 0 {
            svg += "<text x=\"\(Self.left + Self.plotWidth)\" y=\"24\" text-anchor=\"end\" fill=\"#555555\">"
                + "\(droppedMarkers) more events not drawn</text>\n"
        }
        svg += "<text x=\"\(Self.left + Self.plotWidth / 2)\" y=\"\(bottom + 40)\" text-anchor=\"middle\">time (s)</text>\n"
        svg += "</svg>\n"
        return svg
    }

    private func panel(
        _ panel: Panel, top: Int, x: (Double) -> Double, timeTicks: [Double], timeStep: Double
    ) -> String {
        let bottom = top + Self.panelHeight
        var svg = "<g>\n"
        svg += "<text x=\"\(Self.left)\" y=\"\(top - 8)\" font-weight=\"bold\">\(xmlEscaped(panel.title))</text>\n"
        svg += "<rect x=\"\(Self.left)\" y=\"\(top)\" width=\"\(Self.plotWidth)\" height=\"\(Self.panelHeight)\" "
            + "fill=\"none\" stroke=\"#000000\"/>\n"
        var (low, high) = panel.series.range ?? (-1, 1)
        if high - low < 1e-9 {  // a flat series: a band around it
            let pad = max(1, abs(low), abs(high)) * 0.1
            let largest = max(abs(low), abs(high))
            (low, high) = (low - pad).isFinite && (high + pad).isFinite ? (low - pad, high + pad) : (-largest, largest)
        }
        let margin = (high / 2 - low / 2) * 0.1
        if (low - margin).isFinite && (high + margin).isFinite { (low, high) = (low - margin, high + margin) }
        // Halves, so that no difference overflows even for values near ±1.8e308.
        func y(_ value: Double) -> Double {
            Double(bottom) - (value / 2 - low / 2) / (high / 2 - low / 2) * Double(Self.panelHeight)
        }
        // Tick marks, grid and labels.
        let valueTicks = niceTicks(low, high)
        let valueStep = valueTicks.count > 1 ? valueTicks[1] - valueTicks[0] : 1
        for tick in valueTicks {
            let position = fixed(y(tick), 1)
            svg += "<line x1=\"\(Self.left)\" y1=\"\(position)\" x2=\"\(Self.left + Self.plotWidth)\" y2=\"\(position)\" "
                + "stroke=\"#e0e0e0\"/><text x=\"\(Self.left - 6)\" y=\"\(position)\" text-anchor=\"end\" "
                + "dominant-baseline=\"middle\">\(tickLabel(tick, step: valueStep))</text>\n"
        }
        for tick in timeTicks {
            let position = fixed(x(tick), 1)
            svg += "<line x1=\"\(position)\" y1=\"\(bottom)\" x2=\"\(position)\" y2=\"\(bottom + 5)\" stroke=\"#000000\"/>"
                + "<text x=\"\(position)\" y=\"\(bottom + 18)\" text-anchor=\"middle\">"
                + "\(tickLabel(tick, step: timeStep))</text>\n"
        }
        let middle = top + Self.panelHeight / 2
        svg += "<text x=\"20\" y=\"\(middle)\" text-anchor=\"middle\" transform=\"rotate(-90 20 \(middle))\">"
            + "\(xmlEscaped(panel.title)) (\(xmlEscaped(panel.unit)))</text>\n"
        // The series: per bucket its extremes in the order they occurred; a line breaks at a gap (no value for longer
        // than the gap threshold).
        let gapThreshold = panel.series.gapThreshold
        for channel in 0..<3 {
            var path = ""
            var previousTime = -Double.infinity
            for bucket in panel.series.buckets where bucket.count > 0 {
                var points = [
                    (bucket.minimumTime[channel], bucket.minimum[channel]),
                    (bucket.maximumTime[channel], bucket.maximum[channel]),
                ]
                if points[0].0 > points[1].0 { points.swapAt(0, 1) }
                let breaks = previousTime == -.infinity || bucket.first - previousTime > gapThreshold
                for (index, point) in points.enumerated() where index == 0 || point != points[0] {
                    path += (index == 0 && breaks ? "M" : "L") + fixed(x(point.0), 1) + " " + fixed(y(point.1), 1)
                }
                previousTime = bucket.last
            }
            if !path.isEmpty {
                svg += "<path d=\"\(path)\" fill=\"none\" stroke=\"\(Self.colors[channel])\" stroke-width=\"1\"/>\n"
            }
        }
        // Legend.
        for (index, name) in panel.names.enumerated() {
            let row = top + 16 + 18 * index
            svg += "<line x1=\"\(Self.left + Self.plotWidth + 12)\" y1=\"\(row)\" x2=\"\(Self.left + Self.plotWidth + 36)\" "
                + "y2=\"\(row)\" stroke=\"\(Self.colors[index])\" stroke-width=\"2\"/>"
                + "<text x=\"\(Self.left + Self.plotWidth + 42)\" y=\"\(row)\" dominant-baseline=\"middle\">"
                + "\(xmlEscaped(name))</text>\n"
        }
        return svg + "</g>\n"
    }
}
