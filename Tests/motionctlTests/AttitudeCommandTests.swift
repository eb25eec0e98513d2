import Foundation
import Testing

/// `motionctl attitude` end to end.
@Suite struct AttitudeCommandTests {
    static let sweep = "Recordings/simulated-orientation-sweep.csv"

    static func rows(_ text: String) -> [[Double]] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
            .map { $0.split(separator: ",").map { Double($0)! } }
    }

    @Test func writesOneQuaternionRowPerInputRow() async throws {
        let result = try await Motionctl.run(["attitude", "--trace", Self.sweep])
        #expect(result.status == 0)
        let header = result.lines.first { !$0.hasPrefix("#") }
        #expect(header == "t,qw,qx,qy,qz")
        let rows = Self.rows(result.stdout)
        #expect(rows.count == 1700)
        #expect(rows.allSatisfy { $0.count == 5 && abs($0[1...4].reduce(0) { $0 + $1 * $1 } - 1) < 1e-9 })
        #expect(result.lines.contains("# quaternion: scalar first, device to reference: v_ref = q v_device q*"))
    }

    @Test func gravityFollowsTheSweepInTheNorthFrame() async throws {
        let result = try await Motionctl.run(["attitude", "--trace", Self.sweep, "--frame", "magnetic-north", "--all"])
        #expect(result.status == 0)
        let rows = Self.rows(result.stdout)
        // t, qw..qz, roll, pitch, yaw, rx..rz, gravx..gravz (columns 11–13), ux..uz, heading (17), cmx..cmz,
        // maccuracy (21).
        func gravity(at t: Double) -> SIMD3<Double> {
            let row = rows.first { abs($0[0] - t) < 1e-9 }!
            return SIMD3(row[11], row[12], row[13])
        }
        func close(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Bool { ((a - b) * (a - b)).sum().squareRoot() < 0.03 }
        // Holds (see the trace's notes): portrait 0–2 s, landscapeLeft 3–5 s, …, faceDown 15–17 s.
        #expect(close(gravity(at: 1.5), SIMD3(0, -1, 0)))
        #expect(close(gravity(at: 4.5), SIMD3(-1, 0, 0)))
        #expect(close(gravity(at: 16.5), SIMD3(0, 0, 1)))
        #expect(rows.allSatisfy { $0[17] >= 0 && $0[17] < 360 })
        #expect(rows.allSatisfy { $0.count == 22 && [-1, 0, 1, 2].contains($0[21]) })
    }

    @Test func northFramesNeedAMagnetometer() async throws {
        let result = try await Motionctl.run(["attitude", "--trace", Self.sweep, "--sensors", "accel,gyro", "--frame", "true-north"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--frame arbitrary"))
    }

    @Test func saturatedGyroscopeReadingsAreCounted() async throws {
        // The sweep turns faster than 10 °/s: with that range its readings saturate.
        let result = try await Motionctl.run(["attitude", "--trace", Self.sweep, "--gyro-range", "10"])
        #expect(result.status == 0)
        #expect(result.stderr.contains("gyroscope readings were saturated"))
        #expect(result.lines.contains("# gyro_range_deg_s: 10.0"))
        let plain = try await Motionctl.run(["attitude", "--trace", Self.sweep, "--gyro-range", "2000"])
        #expect(plain.stderr.isEmpty)
        #expect(try await Motionctl.run(["attitude", "--trace", Self.sweep, "--gyro-range", "0"]).status == 64)
    }

    /// A run that ends in an error still says that the rows it wrote came from saturated readings.
    @Test func saturationIsReportedWhenTheTraceEndsInAnError() async throws {
        let file = try Motionctl.temporaryPath(name: "broken.csv")
        let lines = try String(contentsOfFile: Self.sweep, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        try (lines.joined(separator: "\n") + "not,a,row\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await Motionctl.run(["attitude", "--trace", file, "--gyro-range", "10", "--speed", "max"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("gyroscope readings were saturated"), "\(result.stderr)")
        #expect(result.stderr.contains("broken.csv:\(lines.count): expected 10 columns"), "\(result.stderr)")
    }

    @Test func jsonLinesRecordsCarryTheirType() async throws {
        let result = try await Motionctl.run(["attitude", "--trace", Self.sweep, "--format", "jsonl"])
        let objects = result.lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.filter { $0["type"] as? String == "attitude" }.count == 1700)
    }
}
