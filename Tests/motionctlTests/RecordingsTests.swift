import Foundation
import Testing

/// The shipped recordings are what Recordings/README.md says, and the simulated ones regenerate byte for byte.
@Suite struct RecordingsTests {
    static func shipped(_ name: String) throws -> String {
        try String(contentsOf: Motionctl.packageRoot.appendingPathComponent("Recordings/\(name)"), encoding: .utf8)
    }

    @Test(arguments: [
        ("simulated-orientation-sweep.csv",
         ["simulate", "--scenario", "orientationSweep", "--rate", "100", "--sensors", "accel,gyro,mag", "--seed", "1",
          "--accel-noise", "0.01"]),
        ("simulated-shakes-with-distractors.csv",
         ["simulate", "--scenario", "shakeSequence", "--scenario-seed", "1", "--seed", "2", "--rate", "100"]),
    ])
    func simulatedRecordingsRegenerate(file: String, arguments: [String]) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 0)
        #expect(result.stdout == (try Self.shipped(file)))
    }

    @Test func broadExcerptKeepsItsAttributionAndLength() async throws {
        let text = try Self.shipped("broad-slow-rotation-excerpt.csv")
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("# Licence: CC-BY-4.0") })
        #expect(lines.contains { $0.hasPrefix("# Source: D. Laidig, M. Caruso, A. Cereatti, T. Seel") })
        let rows = lines.filter { !$0.hasPrefix("#") }.dropFirst()
        #expect(rows.count == 17143)
        let lastTime = try #require(rows.last.flatMap { Double($0.split(separator: ",")[0]) })
        #expect(lastTime < 60 && lastTime > 59.99)
    }
}
