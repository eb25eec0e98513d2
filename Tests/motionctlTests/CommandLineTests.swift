import Foundation
import Testing

/// What a new user meets first: values that start with '-', ranges named in errors, and help that reads well.
@Suite struct CommandLineTests {
    static let trace = "Recordings/simulated-shakes-with-distractors.csv"
    static let commands = [
        "stream", "attitude", "simulate", "orientation", "shake", "steps", "activity", "devices", "record", "settings", "info", "plot",
    ]

    /// `-1` after an option is its value: the option's own check answers, naming the flag and the range.
    @Test(arguments: [
        (["stream", "--trace", trace, "--speed", "-1"], "'--speed <speed>'. Please provide one of 'realtime', 'max' or '<factor > 0>'"),
        (["stream", "--trace", trace, "--interval", "-1"], "--interval must be a number of seconds ≥ 0, got -1.0"),
        (["stream", "--trace", trace, "--low-pass", "-.5"], "--low-pass must be a factor α with 0 < α ≤ 1"),
        (["stream", "--trace", trace, "--high-pass", "0"], "--high-pass must be a factor α with 0 < α < 1"),
        (["stream", "--trace", trace, "--high-pass", "1"], "--high-pass must be a factor α with 0 < α < 1"),
        (["attitude", "--trace", trace, "--predict", "-1"], "--predict must be between 0 and 1 second, got -1.0"),
        (["simulate", "--scenario", "walking", "--rate", "-100"], "--rate must be a positive number of hertz"),
        (["shake"], "Give an input: --trace FILE, --device auto|NAME|PATH, --service, or --evaluate."),
        (["orientation"], "Give an input: --trace FILE, --device auto|NAME|PATH, --service, or --evaluate."),
        (["stream"], "Give an input: --trace FILE, --device auto|NAME|PATH, or --service."),
        // An empty --device is a usage error for every command that reads a device, as motiond's is.
        (["stream", "--device", ""], "--device needs a value: auto, or a device's name or path."),
        (["shake", "--device", ""], "--device needs a value: auto, or a device's name or path."),
        (["steps", "--device", ""], "--device needs a value: auto, or a device's name or path."),
        (["record", "--device", "", "--output", "-"], "--device needs a value: auto, or a device's name or path."),
    ])
    func rejectsOutOfRangeValuesByName(arguments: [String], message: String) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Missing value"))
    }

    /// An option of another input is refused, naming the option and the input it applies to, instead of being
    /// ignored. Each of these ran before, with the option silently dropped.
    @Test(arguments: [
        (["stream", "--trace", trace, "--mount-matrix", "0, 1, 0; 1, 0, 0; 0, 0, 1"], "--mount-matrix applies to --device only, not to --trace."),
        (["stream", "--trace", trace, "--gyro-mount-matrix", "0, 1, 0; 1, 0, 0; 0, 0, 1"], "--gyro-mount-matrix applies to --device only, not to --trace."),
        (["stream", "--trace", trace, "--rate", "100"], "--rate applies to --device only, not to --trace."),
        (["stream", "--trace", trace, "--mode", "polled"], "--mode applies to --device only, not to --trace."),
        (["stream", "--trace", trace, "--timeout", "1"], "--timeout applies to --device only, not to --trace."),
        (["stream", "--trace", trace, "--batch", "0.1"], "--batch applies to --device only, not to --trace."),
        (["stream", "--service", "--rate", "100"], "--rate applies to --device only, not to --service."),
        (["stream", "--device", "auto", "--speed", "2"], "--speed applies to --trace only, not to --device."),
        (["stream", "--device", "auto", "--lenient"], "--lenient applies to --trace only, not to --device."),
        (["stream", "--service", "--speed", "max"], "--speed applies to --trace only, not to --service."),
        (["stream", "--trace", trace, "--service"], "Choose one of --trace, --device and --service; given --trace and --service."),
        (["attitude", "--service", "--sensors", "accel,gyro"], "--sensors applies to --trace only, not to --service."),
        (["orientation", "--trace", trace, "--include-base"], "--include-base applies to --device only, not to --trace."),
        (["shake", "--service", "--exit-on-disconnect"], "--exit-on-disconnect applies to --device only, not to --service."),
        (["shake", "--trace", trace, "--rate", "50"], "--rate applies to --device and --evaluate only, not to --trace."),
        // One input group on every command: the device options exist on the event commands too.
        (["orientation", "--trace", trace, "--mount-matrix", "0, 1, 0; 1, 0, 0; 0, 0, 1"], "--mount-matrix applies to --device only, not to --trace."),
        (["steps", "--service", "--rate", "50"], "--rate applies to --device only, not to --service."),
        (["activity", "--trace", trace, "--timeout", "1"], "--timeout applies to --device only, not to --trace."),
        (["attitude", "--trace", trace, "--mode", "polled"], "--mode applies to --device only, not to --trace."),
        (["shake", "--trace", trace, "--seismic", "13"], "--seismic applies to --evaluate only, not to --trace."),
        (["orientation", "--evaluate", "--speed", "2"], "--speed applies to --trace only, not to --evaluate."),
        (["steps", "--service", "--lenient"], "--lenient applies to --trace only, not to --service."),
    ])
    func refusesOptionsOfAnotherInput(arguments: [String], message: String) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// An unknown option or command is named with the closest valid one, whatever else is missing (`--trac FILE`
    /// used to answer "Give an input: --trace FILE, …").
    @Test(arguments: [
        (["stream", "--trac", "x.csv"], "Unknown option '--trac'. Did you mean '--trace'? (see 'motionctl stream --help')"),
        (["stream", "-t", "x.csv"], "Unknown option '-t'. Did you mean '--trace'? (see 'motionctl stream --help')"),
        (["stream", "--device", "auto", "--mount-matrx=1, 0, 0; 0, 1, 0; 0, 0, 1"], "Unknown option '--mount-matrx'. Did you mean '--mount-matrix'?"),
        (["shake", "--trace", trace, "--treshold", "0.3"], "Unknown option '--treshold'. Did you mean '--threshold'? (see 'motionctl shake --help')"),
        (["attitude", "--trace", trace, "--frme", "true-north"], "Unknown option '--frme'. Did you mean '--frame'?"),
        (["stream", "--trace", trace, "--zzzzzz"], "Unknown option '--zzzzzz'. (see 'motionctl stream --help')"),
        (["strem", "--trace", "x.csv"], "Unknown command 'strem'. Did you mean 'stream'? (see 'motionctl --help')"),
        (["orientaton"], "Unknown command 'orientaton'. Did you mean 'orientation'?"),
        (["frobnicate"], "Unknown command 'frobnicate'. The commands are stream, attitude, simulate,"),
    ])
    func namesTheClosestValidWord(arguments: [String], message: String) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("motionctl: error: Unknown "), "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// Values that look like options are still values: `--trace -`, a negative number, a matrix.
    @Test func valuesAreNotTakenForUnknownOptions() async throws {
        let excerpt = "Recordings/broad-slow-rotation-excerpt.csv"
        let stdin = try await Motionctl.run(
            ["stream", "--trace", "-", "--speed", "max"], stdin: Data("t,ax,ay,az\n0,0,-1,0\n".utf8))
        #expect(stdin.status == 0, "\(stdin.stderr)")
        let negative = try await Motionctl.run(["attitude", "--trace", excerpt, "--declination", "-1", "--frame", "true-north"])
        #expect(negative.status == 0, "\(negative.stderr)")
    }

    /// A negative number is still taken as a value with '=', and in a mount matrix that starts with '-'.
    @Test func negativeValuesReachTheirOptions() async throws {
        let result = try await Motionctl.run([
            "attitude", "--trace", "Recordings/broad-slow-rotation-excerpt.csv", "--declination", "-12.5",
            "--frame", "true-north",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let matrix = try await Motionctl.run(["stream", "--device", "auto", "--mount-matrix", "-1, 0, 0; 0, 1, 0; 0, 0, 0"])
        #expect(matrix.status == 64)
        #expect(matrix.stderr.contains("all-zero row for axis z"), "\(matrix.stderr)")
    }

    /// Every listed value has a description, a shown default is one of the listed values, and the overview's
    /// sentences are not broken across short lines.
    @Test(arguments: commands)
    func helpReadsWell(command: String) async throws {
        let result = try await Motionctl.run([command, "--help"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for line in lines where line.hasSuffix(" - ") || line.hasSuffix(" -") {
            Issue.record("a value without a description in '\(command) --help': \(line)")
        }
        // "(values: a, b; default: c)", possibly wrapped over several lines.
        let text = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        var rest = Substring(text)
        while let start = rest.range(of: "(values: ") {
            guard let end = rest[start.upperBound...].firstIndex(of: ")") else { break }
            let parts = rest[start.upperBound..<end].split(separator: ";")
            let values = parts[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count > 1, let shown = parts[1].split(separator: ":").last?.trimmingCharacters(in: .whitespaces) {
                #expect(values.contains(shown), "'\(command) --help': default \(shown) is not among \(values)")
            }
            rest = rest[end...]
        }
        // The overview: text up to USAGE, wrapped at 80 columns; a paragraph's lines but its last are long.
        let overview = lines.prefix { !$0.hasPrefix("USAGE:") }
        for (line, next) in zip(overview, overview.dropFirst()) where !line.isEmpty && !next.isEmpty {
            #expect(line.count >= 60, "'\(command) --help' breaks a sentence after: \(line)")
        }
    }

    /// attitude takes its frame and declination from the settings unless the flags say otherwise.
    @Test func attitudeFollowsTheReferenceFrameSetting() async throws {
        let excerpt = "Recordings/broad-slow-rotation-excerpt.csv"
        let environment = ["SWIFT_MOTION_DEVICE_MOTION_REFERENCE_FRAME": "xMagneticNorthZVertical"]
        let fromSetting = try await Motionctl.run(["attitude", "--trace", excerpt], environment: environment)
        #expect(fromSetting.status == 0, "\(fromSetting.stderr)")
        #expect(fromSetting.stdout.contains("# frame: xMagneticNorthZVertical (x north, y west, z up)\n"))
        let fromFlag = try await Motionctl.run(["attitude", "--trace", excerpt, "--frame", "arbitrary"], environment: environment)
        #expect(fromFlag.stdout.contains("# frame: xArbitraryZVertical (x arbitrary, z up)\n"))
        let plain = try await Motionctl.run(["attitude", "--trace", excerpt])
        #expect(plain.stdout.contains("# frame: xArbitraryZVertical (x arbitrary, z up)\n"))
    }

    /// --version: ours and the libraries this process runs with, each with the file it was loaded from.
    @Test func versionNamesTheLibrariesInUse() async throws {
        let result = try await Motionctl.run(["--version"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(result.stdout)")
        #expect(lines[0].wholeMatch(of: /motionctl \d+\.\d+\.\d+ \(swift-motion\)/) != nil)
        let iio = try #require(lines[1].wholeMatch(of: /libiio (\d+\.\d+) \((\/.*\/libiio\.so\.[0-9.]+)\)/))
        #expect(FileManager.default.fileExists(atPath: String(iio.2)))
        #expect(iio.2.hasSuffix(".so.\(iio.1)"))
        let udev = try #require(lines[2].wholeMatch(of: /libudev ([0-9.]+) \((\/.*\/libudev\.so\.[0-9.]+)\)/))
        #expect(FileManager.default.fileExists(atPath: String(udev.2)))
        #expect(udev.2.hasSuffix(".so.\(udev.1)"))
    }
}
