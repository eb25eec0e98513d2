public import ArgumentParser
public import MotionAlgorithms
import Motion
public import MotionCore
public import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

/// How fast a trace is replayed: like a live device (`realtime`), scaled by a factor, or as fast as possible.
extension ReplayPacing: ExpressibleByArgument {
    /// `--speed max`: as fast as the command takes the samples.
    static let max = ReplayPacing.asFastAsConsumed

    public init?(argument: String) {
        switch argument {
        case "realtime": self = .realTime
        case "max": self = .max
        default:
            guard let factor = Double(argument), factor > 0, factor.isFinite else { return nil }
            self = .scaled(by: factor)
        }
    }

    public var defaultValueDescription: String {
        speedFactor.map { $0 == 1 ? "realtime" : "\($0)" } ?? "max"
    }

    public static var allValueStrings: [String] { ["realtime", "max", "<factor > 0>"] }
}

extension TraceFormat: ExpressibleByArgument {}

extension CompletionKind {
    /// `--trace`: the shells complete trace files (`.csv`).
    static var traceFile: CompletionKind { .file(extensions: ["csv"]) }
    /// `--output`: the shells complete the files a trace is written to (`.csv`, `.jsonl`), and folders.
    static var outputFile: CompletionKind { .file(extensions: ["csv", "jsonl"]) }
}

extension FilterStart: ExpressibleByArgument {
    public init?(argument: String) {
        switch argument {
        case "zero": self = .zero
        case "first-sample": self = .firstSample
        default: return nil
        }
    }

    public static var allValueStrings: [String] { ["zero", "first-sample"] }
    public var defaultValueDescription: String { self == .zero ? "zero" : "first-sample" }
    public static var allValueDescriptions: [String: String] {
        [
            "zero": "the filter starts from 0, as the iPhone guide's (a low-pass output rises from 0 at first)",
            "first-sample": "the filter starts from the first reading (no start-up transient)",
        ]
    }
}

/// A `--sensors accel,gyro,mag` list.
struct SensorList: ExpressibleByArgument {
    let set: SensorSet

    init?(argument: String) {
        guard let set = SensorSet(shortNames: argument) else { return nil }
        self.set = set
    }

    static var allValueStrings: [String] { SensorSet.shortNames.map(\.name) }
}

/// Output options shared by every command that writes samples or events.
struct OutputOptions: ParsableArguments {
    @Option(help: "Output format: csv (the canonical trace format) or jsonl (JSON Lines, one object per line).")
    var format: TraceFormat = .csv

    @Flag(help: "Flush stdout after every line (the default on a terminal; otherwise output is block-buffered).")
    var flush = false

    /// Line-buffered on a terminal or with `--flush`, block-buffered otherwise.
    var flushing: TraceWriter.Flushing {
        flush || isatty(1) == 1 ? .eachLine : .whenFull
    }
}

/// The filter and rate options of `stream`.
struct ProcessingOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Sensors to deliver, comma-separated.", valueName: "accel,gyro,mag"))
    var sensors: SensorList?

    @Option(help: ArgumentHelp(
        "Deliver at most one reading per sensor per interval, on a fixed grid (like Core Motion's update interval).",
        valueName: "seconds"))
    var interval: Double = 0

    @Option(name: .customLong("low-pass"), help: ArgumentHelp(
        "Low-pass every vector: y = α·x + (1−α)·y_prev, 0 < α ≤ 1 (the iPhone guide uses 0.1; 1 passes the "
            + "input unchanged).", valueName: "α"))
    var lowPass: Double?

    @Option(name: .customLong("high-pass"), help: ArgumentHelp(
        "High-pass every vector: x − lowpass(x) with factor α, 0 < α < 1 (the iPhone guide uses 0.1).",
        valueName: "α"))
    var highPass: Double?

    @Option(help: ArgumentHelp(
        "Low-pass with a cutoff frequency, its factor computed from each sample interval.", valueName: "hz"))
    var cutoff: Double?

    @Option(name: .customLong("high-pass-cutoff"), help: ArgumentHelp(
        "High-pass with a cutoff frequency, its factor computed from each sample interval.", valueName: "hz"))
    var highPassCutoff: Double?

    @Option(name: .customLong("filter-start"), help: "Where filter state starts: zero (as the iPhone guide) or first-sample.")
    var filterStart: FilterStart = .zero

    func validate() throws {
        guard interval >= 0, interval.isFinite else {
            throw ValidationError("--interval must be a number of seconds ≥ 0, got \(interval).")
        }
        let chosen = [lowPass, highPass, cutoff, highPassCutoff].compactMap { $0 }
        guard chosen.count <= 1 else {
            throw ValidationError("Choose one of --low-pass, --high-pass, --cutoff and --high-pass-cutoff.")
        }
        if let lowPass, !(lowPass > 0 && lowPass <= 1) {
            throw ValidationError(
                "--low-pass must be a factor α with 0 < α ≤ 1 (0 would output zeros for ever), got \(lowPass).")
        }
        if let highPass, !(highPass > 0 && highPass < 1) {
            throw ValidationError(
                "--high-pass must be a factor α with 0 < α < 1 (0 passes the input unchanged, 1 outputs zeros), "
                    + "got \(highPass).")
        }
        for hertz in [cutoff, highPassCutoff].compactMap({ $0 }) where !(hertz > 0 && hertz.isFinite) {
            throw ValidationError("A cutoff frequency must be a positive number of hertz, got \(hertz).")
        }
    }

    /// The filter the options ask for, or `nil`.
    var filter: VectorFilter? {
        if let lowPass { return .lowPass(.factor(lowPass), start: filterStart) }
        if let highPass { return .highPass(.factor(highPass), start: filterStart) }
        if let cutoff { return .lowPass(.cutoff(hertz: cutoff), start: filterStart) }
        if let highPassCutoff { return .highPass(.cutoff(hertz: highPassCutoff), start: filterStart) }
        return nil
    }
}
