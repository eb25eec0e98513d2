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
        (["shake"], "Give an input: --trace FILE, --device auto|NAME|PATH, or --evaluate."),
        (["orientation"], "Give an input: --trace FILE, --device auto|NAME|PATH, or --evaluate."),
    ])
    func rejectsOutOfRangeValuesByName(arguments: [String], message: String) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("Missing value"))
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
