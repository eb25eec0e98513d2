import Foundation
import TestThreads
import Testing

/// `motionctl info` end to end, on the built binary: its figures against the same figures computed here from the
/// CSV text (which takes seconds of computing: off Swift's cooperative pool, `.computeBound`).
@Suite(.computeBound) struct InfoCommandTests {
    /// A sensor's figures computed from a trace's text, independently of the reader.
    struct Expected {
        var times: [Double] = []
        var minimum = [Double](repeating: .infinity, count: 3)
        var maximum = [Double](repeating: -.infinity, count: 3)

        var intervals: [Double] { zip(times.dropFirst(), times).map { $0 - $1 } }
        /// The lower median interval, s.
        var medianInterval: Double {
            let sorted = intervals.sorted()
            return sorted[(sorted.count - 1) / 2]
        }
    }

    /// Row count, first and last time, and per sensor group (`a`, `g`, `m`) its readings' times and ranges.
    static func expected(fromCSV text: String) throws -> (rows: Int, times: [Double], sensors: [String: Expected]) {
        let lines = text.split(separator: "\n").map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        let data = lines.filter { !$0.hasPrefix("#") }
        let header = data[0].split(separator: ",").map(String.init)
        var sensors: [String: Expected] = [:]
        var times: [Double] = []
        for row in data.dropFirst() {
            let fields = row.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let t = try #require(Double(fields[header.firstIndex(of: "t")!]))
            times.append(t)
            for group in ["a", "g", "m"] {
                guard let x = header.firstIndex(of: group + "x"), !fields[x].isEmpty else { continue }
                var sensor = sensors[group, default: Expected()]
                sensor.times.append(t)
                for (axis, name) in ["x", "y", "z"].enumerated() {
                    let value = try #require(Double(fields[header.firstIndex(of: group + name)!]))
                    sensor.minimum[axis] = min(sensor.minimum[axis], value)
                    sensor.maximum[axis] = max(sensor.maximum[axis], value)
                }
                sensors[group] = sensor
            }
        }
        return (data.count - 1, times, sensors)
    }

    static func json(_ result: CommandResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static func number(_ value: Any?) -> Double? { (value as? NSNumber)?.doubleValue }

    @Test(arguments: [
        "broad-slow-rotation-excerpt.csv", "simulated-orientation-sweep.csv", "simulated-shakes-with-distractors.csv",
    ])
    func shippedRecordingFiguresMatchTheFile(name: String) async throws {
        let path = "Recordings/\(name)"
        let text = try String(contentsOf: Motionctl.packageRoot.appendingPathComponent(path), encoding: .utf8)
        let expected = try Self.expected(fromCSV: text)
        let result = try await Motionctl.run(["info", path, "--format", "json"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let info = try Self.json(result)
        #expect(info["file"] as? String == path)
        #expect(info["rows"] as? Int == expected.rows)
        #expect(Self.number(info["start_s"]) == expected.times.first)
        #expect(Self.number(info["end_s"]) == expected.times.last)
        // The metadata lines, in order: as many as the file's leading '#' lines.
        let metadata = try #require(info["metadata"] as? [[String: String]])
        #expect(metadata.count == text.split(separator: "\n").prefix { $0.hasPrefix("#") }.count)
        let sensors = try #require(info["sensors"] as? [String: [String: Any]])
        let names = ["a": ("accel", "g"), "g": ("gyro", "rad/s"), "m": ("mag", "µT")]
        #expect(Set(sensors.keys) == Set(expected.sensors.keys.compactMap { names[$0]?.0 }))
        for (group, figures) in expected.sensors {
            let (key, unit) = try #require(names[group])
            let sensor = try #require(sensors[key])
            #expect(sensor["unit"] as? String == unit)
            #expect(sensor["samples"] as? Int == figures.times.count)
            #expect(Self.number(sensor["start_s"]) == figures.times.first)
            #expect(Self.number(sensor["end_s"]) == figures.times.last)
            let median = try #require(Self.number(sensor["median_interval_s"]))
            #expect(abs(median - figures.medianInterval) <= 1e-3 * figures.medianInterval)
            let rate = try #require(Self.number(sensor["median_rate_hz"]))
            #expect(abs(rate * figures.medianInterval - 1) <= 1e-3)
            let threshold = 3 * figures.medianInterval
            #expect(sensor["gaps"] as? Int == figures.intervals.filter { $0 > threshold }.count)
            let largest = try #require(sensor["largest_gaps"] as? [[String: Any]])
            #expect(largest.count == 5)
            // Within an ulp or two: Foundation's JSON parser does not always round a 17-digit number correctly.
            let longest = try #require(figures.intervals.max())
            #expect(abs((Self.number(largest.first?["length_s"]) ?? 0) - longest) <= 1e-12 * longest)
            for (bound, values) in [("min", figures.minimum), ("max", figures.maximum)] {
                let vector = try #require(sensor[bound] as? [String: Any])
                #expect([Self.number(vector["x"]), Self.number(vector["y"]), Self.number(vector["z"])] == values)
            }
        }
    }

    /// A 100 Hz trace of 2 s with the readings from 1.01 s to 1.49 s missing, and the gyroscope missing every other
    /// row; the header's order differs from the writer's.
    static let gapTrace: String = {
        var text = "# source: gap test\nt,gx,gy,gz,ax,ay,az\n"
        for i in 0...200 where !(101...149).contains(i) {
            let t = Double(i) / 100
            let gyro = i % 2 == 0 ? "0.1,-0.2,\(Double(i) / 1000)" : ",,"
            text += "\(t),\(gyro),0,\(i == 150 ? 2 : -1),0\n"
        }
        return text
    }()

    @Test func aGapIsReportedWithItsTime() async throws {
        let path = try Motionctl.temporaryFile(Self.gapTrace)
        let expected = try Self.expected(fromCSV: Self.gapTrace)
        let result = try await Motionctl.run(["info", path, "--format", "json"])
        #expect(result.status == 0)
        let sensors = try #require(try Self.json(result)["sensors"] as? [String: [String: Any]])
        let accel = try #require(sensors["accel"])
        #expect(accel["samples"] as? Int == expected.sensors["a"]?.times.count)
        #expect(accel["samples"] as? Int == 201 - 49)
        #expect(abs((Self.number(accel["median_rate_hz"]) ?? 0) - 100) < 0.1)
        #expect(accel["gaps"] as? Int == 1)
        let gap = try #require((accel["largest_gaps"] as? [[String: Any]])?.first)
        #expect(Self.number(gap["start_s"]) == 1.0)
        #expect(Self.number(gap["end_s"]) == 1.5)
        #expect(Self.number((accel["max"] as? [String: Any])?["y"]) == 2)
        // The gyroscope reads every other row: 50 Hz, and the same hole is one gap from 1.0 s to 1.5 s.
        let gyro = try #require(sensors["gyro"])
        #expect(abs((Self.number(gyro["median_rate_hz"]) ?? 0) - 50) < 0.05)
        #expect(gyro["gaps"] as? Int == 1)
        #expect(Self.number((gyro["largest_gaps"] as? [[String: Any]])?.first?["start_s"]) == 1.0)

        let text = try await Motionctl.run(["info", path])
        #expect(text.status == 0)
        #expect(text.lines.contains("rows: 152, from 0 s to 2 s (duration 2 s)"))
        #expect(text.lines.contains("  gaps (intervals > 3 × median = 30.000 ms): 1"))
        #expect(text.lines.contains { $0.hasPrefix("  largest intervals: 500.000 ms at 1 s, 10.000 ms at ") })
        #expect(text.lines.contains("  y: min -1 g, max 2 g"))
        #expect(text.lines.contains("  # source: gap test"))
    }

    @Test func readsStandardInput() async throws {
        let result = try await Motionctl.run(["info", "-", "--format", "json"], stdin: Data(Self.gapTrace.utf8))
        #expect(result.status == 0)
        let info = try Self.json(result)
        #expect(info["file"] as? String == "<stdin>")
        #expect(info["rows"] as? Int == 152)
    }

    @Test func aMalformedRowExitsWith65NamingTheLine() async throws {
        let path = try Motionctl.temporaryFile("# c\nt,ax,ay,az\n0,0,0,-1\n0.01,0,0,-1\n0.02,0,1..5,-1\n0.03,0,0,-1\n")
        let result = try await Motionctl.run(["info", path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("motionctl: error: \(path):5: column 'ay'"))

        let lenient = try await Motionctl.run(["info", path, "--lenient", "--format", "json"])
        #expect(lenient.status == 0)
        let info = try Self.json(lenient)
        #expect(info["rows"] as? Int == 3)
        let skipped = try #require(info["skipped"] as? [String: Any])
        #expect(skipped["rows"] as? Int == 1)
        #expect((skipped["by_reason"] as? [String: Int]) == ["not a finite number": 1])
        let example = try #require((skipped["examples"] as? [[String: Any]])?.first)
        #expect(example["line"] as? Int == 5)
        #expect(example["column"] as? String == "ay")

        let lenientText = try await Motionctl.run(["info", path, "--lenient"])
        #expect(lenientText.lines.last?.hasPrefix("skipped rows: \(path): skipped 1 row (1 not a finite number). line 5") == true)
    }

    @Test func missingAndEmptyInputExitWith66() async throws {
        #expect(try await Motionctl.run(["info", "/nonexistent/trace.csv"]).status == 66)
        let empty = try Motionctl.temporaryFile("")
        let result = try await Motionctl.run(["info", empty])
        #expect(result.status == 66)
        #expect(result.stderr.contains(empty))
    }

    /// Metadata is text from the file: in JSON it comes back exactly, whatever characters it holds.
    @Test func hostileMetadataIsEscapedInJSON() async throws {
        let comment = "</svg><script>alert(\"x\")</script> & \\ \u{7} tab\there"
        let path = try Motionctl.temporaryFile("# \(comment)\n# note: <&\">\nt,ax,ay,az\n0,0,0,-1\n")
        let result = try await Motionctl.run(["info", path, "--format", "json"])
        #expect(result.status == 0)
        let metadata = try #require(try Self.json(result)["metadata"] as? [[String: String]])
        #expect(metadata == [["comment": comment], ["key": "note", "value": "<&\">"]])
        // One sensor with one reading: no interval, so no rate.
        let accel = try #require((try Self.json(result)["sensors"] as? [String: [String: Any]])?["accel"])
        #expect(accel["median_rate_hz"] is NSNull)
        #expect(accel["gaps"] as? Int == 0)
    }
}
