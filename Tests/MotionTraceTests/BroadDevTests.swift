import Foundation
import MotionCore
import Testing

@testable import MotionTrace

/// Reads the nine BROAD recordings in `../shared/datasets/broad-dev` (relative to the package root) as they are.
@Suite struct BroadDevTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/datasets/broad-dev")

    struct Trial: Sendable, CustomTestStringConvertible {
        var file: String
        var samples: Int
        var testDescription: String { file }
    }

    static let trials: [Trial] = {
        guard let data = try? Data(contentsOf: directory.appendingPathComponent("manifest.json")),
            let manifest = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let trials = manifest["trials"] as? [[String: Any]]
        else { return [] }
        return trials.compactMap { trial in
            guard let file = trial["trace_file"] as? String, let samples = trial["samples"] as? Int else { return nil }
            return Trial(file: file, samples: samples)
        }
    }()

    /// The fields of a data line, converted with `Double(String)`, as the expected sample.
    static func sample(fromLine line: Substring) throws -> MotionSample {
        let values = try line.split(separator: ",").map { try #require(Double(String($0))) }
        try #require(values.count == 10)
        return MotionSample(
            timestamp: values[0], acceleration: Acceleration(x: values[1], y: values[2], z: values[3]),
            rotationRate: RotationRate(x: values[4], y: values[5], z: values[6]),
            magneticField: MagneticField(x: values[7], y: values[8], z: values[9]))
    }

    @Test func manifestListsNineTrials() {
        #expect(Self.trials.count == 9)
    }

    @Test(arguments: trials)
    func readsTrial(_ trial: Trial) throws {
        let path = Self.directory.appendingPathComponent(trial.file).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let dataLines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
        let expectedFirst = try Self.sample(fromLine: try #require(dataLines.first))
        let expectedLast = try Self.sample(fromLine: try #require(dataLines.last))

        let reader = try TraceReader(path: path)
        #expect(reader.columnNames == TraceColumns.all)
        #expect(reader.sensors == .all)
        #expect(reader.metadata.lines.count == 12)
        #expect(reader.metadata.comments.first?.hasPrefix("BROAD trial ") == true)
        #expect(reader.metadata["source"]?.hasPrefix("D. Laidig, M. Caruso, A. Cereatti, T. Seel") == true)
        #expect(reader.metadata["licence"]?.hasPrefix("CC-BY-4.0") == true)
        #expect(reader.metadata.comments.contains { $0.hasPrefix("Changes from the source:") })

        var count = 0
        var first: MotionSample?
        var last: MotionSample?
        while let sample = try reader.next() {
            if first == nil { first = sample }
            last = sample
            count += 1
        }
        #expect(count == trial.samples)
        #expect(first == expectedFirst)
        #expect(last == expectedLast)
        #expect(reader.lineNumber == 13 + trial.samples)
    }

    @Test func firstAndLastValuesOfTrial02() throws {
        let reader = try TraceReader(
            path: Self.directory.appendingPathComponent("02_undisturbed_slow_rotation_B.trace.csv").path)
        let first = try #require(try reader.next())
        #expect(first.timestamp == 0)
        #expect(first.acceleration == Acceleration(x: -0.00887329394, y: -0.0115160847, z: -1.0044471))
        #expect(first.rotationRate == RotationRate(x: 0.00319569786, y: 0.00319569786, z: 0))
        #expect(first.magneticField == MagneticField(x: 0.405826149, y: 16.1633417, z: -42.7047423))
        var last = first
        while let sample = try reader.next() { last = sample }
        #expect(last.timestamp == 186.3365)
        #expect(last.rotationRate?.y == -7.82720231e-19)
        #expect(last.magneticField == MagneticField(x: -0.335764707, y: 15.1001145, z: -40.9823791))
    }
}
