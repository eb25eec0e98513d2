import Foundation
import Testing

/// The README's "Try it" commands run on the shipped recordings (with `--speed max`, so no test waits for
/// real time) and show what the README says they show.
@Suite struct ReadmeCommandsTests {
    /// The `motionctl` argument lists of the "Try it" section's shell blocks, in order.
    static let commands: [[String]] = {
        let url = Motionctl.packageRoot.appendingPathComponent("README.md")
        guard let readme = try? String(contentsOf: url, encoding: .utf8),
            let start = readme.range(of: "## Try it"),
            let end = readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex)
        else { return [] }
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ").map(String.init)
            if words.first == "Scripts/motionctl" { return Array(words.dropFirst()) }
            if words.starts(with: ["swift", "run", "motionctl"]) { return Array(words.dropFirst(3)) }
            return nil
        }
    }()

    @Test func theSectionHasItsFourCommands() {
        #expect(Self.commands.map(\.first) == ["stream", "attitude", "orientation", "shake"])
    }

    @Test(arguments: commands)
    func runs(arguments: [String]) async throws {
        let result = try await Motionctl.run(arguments + ["--speed", "max"])
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(arguments): \(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        switch arguments.first {
        case "shake":
            // Ordinary shakes: each begins and ends, none is cancelled.
            #expect(lines.filter { $0.contains("Shake began") }.count == 3)
            #expect(lines.filter { $0.contains("Shake ended") }.count == 3)
            #expect(!result.stdout.contains("cancelled"))
        case "orientation":
            #expect(lines.count == 6)
        default:
            #expect(lines.filter { $0.first?.isNumber == true }.count > 10_000)
        }
    }
}
