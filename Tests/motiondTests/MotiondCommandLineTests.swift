import Foundation
import TestFiles
import TestThreads
import Testing

/// motiond's command line follows motionctl's conventions: `--version` in the same format, option values checked
/// with the allowed range named (a negative number reaches the option's own check), and file completions.
@Suite struct MotiondCommandLineTests {
    static let motionctl = URL(fileURLWithPath: ServiceFixture.executable).deletingLastPathComponent()
        .appendingPathComponent("motionctl").path

    /// Runs `path arguments` and returns its status and its stdout and stderr together.
    static func run(_ path: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await Process.output(of: path, arguments, mergingStandardError: true)
    }

    /// Both binaries: `<tool> X.Y.Z (swift-motion)`, then the same libiio and libudev lines (motiond printed its
    /// version number alone).
    @Test func bothBinariesReportTheirVersionTheSameWay() async throws {
        let daemon = try await Self.run(ServiceFixture.executable, ["--version"])
        let tool = try await Self.run(Self.motionctl, ["--version"])
        #expect(daemon.status == 0 && tool.status == 0)
        let lines = daemon.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(daemon.output)")
        #expect(lines[0].wholeMatch(of: /motiond \d+\.\d+\.\d+ \(swift-motion\)/) != nil, "\(lines[0])")
        #expect(lines[0].dropFirst("motiond".count) == tool.output.split(separator: "\n")[0].dropFirst("motionctl".count))
        #expect(Array(lines.dropFirst()) == tool.output.split(separator: "\n").dropFirst().map(String.init))
        #expect(lines[1].hasPrefix("libiio ") && lines[2].hasPrefix("libudev "))
    }

    /// Nonsense values are refused with status 64 and a message naming the option and the allowed range (a
    /// negative number used to be answered "Missing value for '--claim-timeout'").
    @Test(arguments: [
        (["--claim-timeout", "-1"], "--claim-timeout must be more than 0 and at most 3600 seconds, not -1.0"),
        (["--claim-timeout", "nan"], "--claim-timeout must be more than 0 and at most 3600 seconds, not nan"),
        (["--claim-timeout", "1e9"], "--claim-timeout must be more than 0 and at most 3600 seconds"),
        (["--batch-duration", "-0.5"], "--batch-duration must be more than 0 and at most 10 seconds, not -0.5"),
        (["--batch-duration", "0"], "--batch-duration must be more than 0 and at most 10 seconds, not 0.0"),
        (["--max-streams", "-3"], "--max-streams must be a whole number from 1 to 1000000, not -3"),
        (["--state-directory", "var/lib/motiond"], "--state-directory must be an absolute path (starting with '/'), not 'var/lib/motiond'"),
        (["--high-rate-group", ""], "--high-rate-group must be a group name"),
        (["--device", ""], "--device needs a value"),
    ])
    func refusesNonsenseNamingTheRange(arguments: [String], message: String) async throws {
        let result = try await Self.run(ServiceFixture.executable, arguments)
        #expect(result.status == 64, "\(result.output)")
        #expect(result.output.contains(message), "\(result.output)")
        #expect(!result.output.contains("Missing value"))
    }

    /// The shells complete file arguments with files: `motionctl … --trace` offers .csv files and folders,
    /// `--output` .csv and .jsonl files, motiond's `--state-directory` folders (bash run on the generated script).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash")))
    func fileArgumentsCompleteFiles() async throws {
        let folder = ScratchFolder.path("completion")
        try FileManager.default.createDirectory(atPath: folder + "/sub", withIntermediateDirectories: true)
        for name in ["a.csv", "b.jsonl", "c.txt"] { _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: nil) }
        func offers(_ tool: String, _ words: [String]) async throws -> [String] {
            let script = try await Self.run(tool == "motiond" ? ServiceFixture.executable : Self.motionctl,
                ["--generate-completion-script", "bash"]).output
            let file = folder + "/\(tool).bash"
            try script.write(toFile: file, atomically: true, encoding: .utf8)
            let shell = """
                source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
                _\(tool) \(tool) "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let result = try await Self.run("/bin/bash", ["-c", shell, "_", file, tool] + words)
            return result.output.split(separator: "\n").map(String.init).sorted()
        }
        #expect(try await offers("motionctl", ["stream", "--trace", folder + "/"]) == [folder + "/a.csv", folder + "/sub"])
        #expect(try await offers("motionctl", ["record", "--output", folder + "/"]) == [folder + "/a.csv", folder + "/b.jsonl", folder + "/sub"])
        #expect(try await offers("motiond", ["--state-directory", folder + "/"]) == [folder + "/sub"])
    }
}
