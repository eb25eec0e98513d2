import Foundation
import MotionCore
import Testing
import TestThreads

@testable import MotionTrace

/// Reads the shipped BROAD excerpt (`Recordings/broad-slow-rotation-excerpt.csv`, the first 60 s of broad-dev's
/// trial 02) as it is. The nine full recordings live outside the repository; `Scripts/check-attitude-accuracy.sh`
/// (CI's accuracy step) reads all of them and checks each one's row count against the dataset's manifest.
@Suite(.computeBound) struct BroadExcerptTests {
    static let path = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Recordings/broad-slow-rotation-excerpt.csv").path

    /// The fields of a data line, converted with `Double(String)`, as the expected sample.
    static func sample(fromLine line: Substring) throws -> MotionSample {
        let values = try line.split(separator: ",").map { try #require(Double(String($0))) }
        try #require(values.count == 10)
        return MotionSample(
            timestamp: values[0], acceleration: Acceleration(x: values[1], y: values[2], z: values[3]),
            rotationRate: RotationRate(x: values[4], y: values[5], z: values[6]),
            magneticField: MagneticField(x: values[7], y: values[8], z: values[9]))
    }

    @Test func readsEveryRowAsWritten() throws {
        let text = try String(contentsOfFile: Self.path, encoding: .utf8)
        let commentLines = text.split(separator: "\n").prefix { $0.hasPrefix("#") }.count
        let dataLines = Array(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst())
        let expectedFirst = try Self.sample(fromLine: try #require(dataLines.first))
        let expectedLast = try Self.sample(fromLine: try #require(dataLines.last))

        let reader = try TraceReader(path: Self.path)
        #expect(reader.columnNames == TraceColumns.all)
        #expect(reader.sensors == .all)
        #expect(reader.metadata.lines.count == commentLines)
        var count = 0
        var first: MotionSample?
        var last: MotionSample?
        while let sample = try reader.next() {
            if first == nil { first = sample }
            last = sample
            count += 1
        }
        #expect(count == dataLines.count)
        #expect(count == 17_143)  // rows with t < 60 s at 2000/7 Hz: ceil(60 / 0.0035)
        #expect(first == expectedFirst)
        #expect(last == expectedLast)
        #expect(reader.lineNumber == commentLines + 1 + count)
    }

    @Test func keepsTheAttribution() throws {
        let reader = try TraceReader(path: Self.path)
        #expect(reader.metadata.comments.first?.hasPrefix("BROAD trial 02_undisturbed_slow_rotation_B") == true)
        #expect(reader.metadata["source"]?.hasPrefix("D. Laidig, M. Caruso, A. Cereatti, T. Seel") == true)
        #expect(reader.metadata["licence"]?.hasPrefix("CC-BY-4.0") == true)
        #expect(reader.metadata.comments.contains { $0.hasPrefix("Changes from the source:") })
    }

    @Test func firstValuesOfTrial02() throws {
        let reader = try TraceReader(path: Self.path)
        let first = try #require(try reader.next())
        #expect(first.timestamp == 0)
        #expect(first.acceleration == Acceleration(x: -0.00887329394, y: -0.0115160847, z: -1.0044471))
        #expect(first.rotationRate == RotationRate(x: 0.00319569786, y: 0.00319569786, z: 0))
        #expect(first.magneticField == MagneticField(x: 0.405826149, y: 16.1633417, z: -42.7047423))
        var last = first
        while let sample = try reader.next() { last = sample }
        #expect(last.timestamp == 59.997)
        #expect(last.magneticField == MagneticField(x: -7.30671876, y: 16.1633417, z: 42.2152502))
    }
}
