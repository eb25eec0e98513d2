import Foundation
import TestThreads
import Testing

/// `motionctl stream` end to end, on the built binary.
@Suite struct StreamCommandTests {
    static let excerpt = "Recordings/broad-slow-rotation-excerpt.csv"

    static let stepTrace = """
        # source: test
        t,ax,ay,az,gx,gy,gz
        0,1,0,-1,0.1,0,0
        0.01,1,0,-1,0.1,0,0
        0.02,1,0,-1,,,
        0.03,1,0,-1,0.1,0,0

        """

    @Test func replaysTheShippedRecordingWithItsAttribution() async throws {
        let result = try await Motionctl.run(["stream", "--trace", Self.excerpt, "--speed", "max"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let lines = result.lines
        #expect(lines.first?.hasPrefix("# BROAD trial 02_undisturbed_slow_rotation_B") == true)
        #expect(lines.contains { $0.hasPrefix("# Licence: CC-BY-4.0") })
        let header = lines.firstIndex(of: "t,ax,ay,az,gx,gy,gz,mx,my,mz")
        #expect(header != nil)
        let rows = lines[(header ?? 0) + 1..<lines.count]
        #expect(rows.count == 17143)
        // Values are written back exactly as the recording has them.
        #expect(rows.first == "0,-0.00887329394,-0.0115160847,-1.0044471,0.00319569786,0.00319569786,0,0.405826149,16.1633417,-42.7047423")
        #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 10 })
    }

    @Test func thinsFiltersAndWritesJSONLines() async throws {
        let result = try await Motionctl.run([
            "stream", "--trace", Self.excerpt, "--speed", "max", "--format", "jsonl", "--sensors", "accel",
            "--interval", "0.1",
        ])
        #expect(result.status == 0)
        let all = try result.lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        // The first object carries the trace's metadata, attribution included.
        #expect(all.first?["type"] as? String == "metadata")
        let metadataText = "\(all.first?["lines"] ?? "")"
        #expect(metadataText.contains("CC-BY-4.0"))
        let objects = all.filter { $0["type"] as? String == "sample" }
        #expect(objects.count == all.count - 1)
        // 60 s of data on a 0.1 s grid from t = 0: 600 deliveries.
        #expect(objects.count == 600)
        #expect(objects.allSatisfy { Set($0.keys) == ["type", "t", "ax", "ay", "az"] && $0["type"] as? String == "sample" })
        // Each delivery is the first 3.5 ms sample at or after its grid point k·0.1 s.
        let times = objects.compactMap { ($0["t"] as? NSNumber)?.doubleValue }
        #expect(times.count == 600)
        #expect(zip(times.dropFirst(), times).allSatisfy { $0 - $1 > 0.0965 - 1e-9 && $0 - $1 < 0.1035 + 1e-9 })
        #expect(times.enumerated().allSatisfy { k, t in t >= Double(k) * 0.1 - 1e-9 && t < Double(k) * 0.1 + 0.0035 })
    }

    @Test func lowPassFollowsTheListing() async throws {
        let path = try Motionctl.temporaryFile(Self.stepTrace)
        let result = try await Motionctl.run([
            "stream", "--trace", path, "--speed", "max", "--sensors", "accel", "--low-pass", "0.5",
        ])
        #expect(result.status == 0)
        let rows = result.lines.filter { !$0.hasPrefix("#") }
        #expect(rows.first == "t,ax,ay,az")
        #expect(result.lines.contains("# filter: low-pass factor 0.5 from zero"))
        let ax = rows.dropFirst().map { Double($0.split(separator: ",")[1])! }
        #expect(ax == [0.5, 0.75, 0.875, 0.9375])
    }

    @Test func gyroscopeGapsStayEmpty() async throws {
        let path = try Motionctl.temporaryFile(Self.stepTrace)
        let result = try await Motionctl.run(["stream", "--trace", path, "--speed", "max", "--sensors", "gyro"])
        #expect(result.status == 0)
        // The row at t = 0.02 has no gyroscope reading, so nothing is delivered for it.
        #expect(result.lines.filter { !$0.hasPrefix("#") }.count == 4)
    }

    @Test func readsStandardInput() async throws {
        let result = try await Motionctl.run(["stream", "--trace", "-", "--speed", "max"], stdin: Data(Self.stepTrace.utf8))
        #expect(result.status == 0)
        #expect(result.lines.filter { !$0.hasPrefix("#") }.count == 5)
    }

    @Test func badDataExitsWith65NamingFileLineAndColumn() async throws {
        let path = try Motionctl.temporaryFile("t,ax,ay,az\n0,0,0,-1\n0.01,0,zero,-1\n")
        let result = try await Motionctl.run(["stream", "--trace", path, "--speed", "max"])
        #expect(result.status == 65)
        let message = result.stderr.split(separator: "\n")
        #expect(message.count == 1)
        #expect(result.stderr.contains("\(path):3"))
        #expect(result.stderr.contains("ay"))
        // The rows before the bad one were delivered.
        #expect(result.lines.filter { !$0.hasPrefix("#") } == ["t,ax,ay,az", "0,0,0,-1"])
    }

    @Test func lenientModeSkipsAndReports() async throws {
        let path = try Motionctl.temporaryFile("t,ax,ay,az\n0,0,0,-1\n0.01,0,zero,-1\n0.02,0,0,-1\n")
        let result = try await Motionctl.run(["stream", "--trace", path, "--speed", "max", "--lenient"])
        #expect(result.status == 0)
        #expect(result.lines.filter { !$0.hasPrefix("#") }.count == 3)
        #expect(result.stderr.contains("1"))
        #expect(result.stderr.hasPrefix("motionctl: warning:"))
    }

    /// The excerpt's row times, read once from the file (parsing it for every test case would hold the threads
    /// Swift's tasks run on, which the tests waiting for real time need).
    static let excerptTimes: [Double] = {
        let text = (try? String(contentsOf: Motionctl.packageRoot.appendingPathComponent(excerpt), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
            .compactMap { Double($0.prefix { $0 != "," }) }
    }()

    /// The excerpt's rows whose time is less than `seconds` after the first row's, counted from the file.
    static func rows(within seconds: Double) async throws -> Int {
        // Parsed (or waited for, by the test cases that come while another parses it) on a thread of its own: it
        // takes seconds in a debug build.
        let times = await BlockingCall.run { excerptTimes }
        try #require(!times.isEmpty)
        return times.filter { $0 - times[0] < seconds }.count
    }

    /// `--count N` writes exactly N rows, `--duration S` the rows less than S seconds after the first, from a file
    /// or stdin, at any speed, after filtering and thinning.
    @Test(arguments: [
        (["--count", "10"], 10), (["--count", "1"], 1), (["--count", "1000000"], -2),
        (["--duration", "1"], -1), (["--duration", "0.0035"], 1), (["--duration", "2.5", "--count", "50"], 50),
        (["--duration", "2.5", "--interval", "0.1"], 25), (["--count", "12", "--interval", "0.1", "--sensors", "gyro"], 12),
    ])
    func durationAndCountLimitTheRows(limit: [String], expected: Int) async throws {
        // -1: the rows within the first second, -2: every row (fewer than the count), both counted from the file.
        let expected = expected >= 0 ? expected : try await Self.rows(within: expected == -1 ? 1 : .infinity)
        #expect(expected == 286 || limit != ["--duration", "1"])  // 0, 0.0035, … 0.9975 s
        let result = try await Motionctl.run(["stream", "--trace", Self.excerpt, "--speed", "max"] + limit)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines.filter { !$0.hasPrefix("#") }.count == expected + 1)  // and the header
        let text = try String(contentsOf: Motionctl.packageRoot.appendingPathComponent(Self.excerpt), encoding: .utf8)
        let piped = try await Motionctl.run(
            ["stream", "--trace", "-", "--speed", "max", "--format", "jsonl"] + limit, stdin: Data(text.utf8))
        #expect(piped.status == 0)
        #expect(sampleLines(piped.lines).count == expected)
    }

    /// At realtime speed, `--duration` ends the replay after that much trace time, without waiting for the row after.
    @Test func durationEndsARealtimeReplay() async throws {
        let result = try await Motionctl.run(["stream", "--trace", Self.excerpt, "--duration", "0.2"])
        #expect(result.status == 0)
        #expect(result.lines.filter { !$0.hasPrefix("#") }.count == (try await Self.rows(within: 0.2)) + 1)
    }

    @Test(arguments: [
        (["--count", "0"], "--count must be a positive number of samples, got 0."),
        (["--count", "-3"], "--count must be a positive number of samples, got -3."),
        (["--count", "2.5"], "The value '2.5' is invalid for '--count <n>'"),
        (["--duration", "0"], "--duration must be a positive number of seconds, got 0.0."),
        (["--duration", "nan"], "--duration must be a positive number of seconds, got nan."),
        (["--duration", "inf"], "--duration must be a positive number of seconds, got inf."),
    ])
    func badLimitsAreUsageErrors(limit: [String], message: String) async throws {
        let result = try await Motionctl.run(["stream", "--trace", Self.excerpt] + limit)
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func missingFileExitsWith66() async throws {
        let result = try await Motionctl.run(["stream", "--trace", "/nonexistent/trace.csv"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("/nonexistent/trace.csv"))
    }

    @Test(arguments: [
        ["stream", "--trace", "x.csv", "--low-pass", "2"],
        ["stream", "--trace", "x.csv", "--speed", "fast"],
        ["stream", "--trace", "x.csv", "--low-pass", "0.1", "--cutoff", "3"],
        ["stream", "--trace", "x.csv", "--interval", "-1"],
        ["stream"],
    ])
    func usageErrorsExitWith64(arguments: [String]) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == 64)
        #expect(!result.stderr.isEmpty)
    }

    @Test func missingSensorIsAUsageError() async throws {
        let path = try Motionctl.temporaryFile("t,ax,ay,az\n0,0,0,-1\n")
        let result = try await Motionctl.run(["stream", "--trace", path, "--sensors", "mag"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("mag"))
    }

    @Test func closedPipeEndsQuietly() async throws {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = [
            "-c",
            "set -o pipefail; '\(Motionctl.executable.path)' stream --trace \(Self.excerpt) --speed max | head -n 2 > /dev/null",
        ]
        shell.currentDirectoryURL = Motionctl.packageRoot
        let err = Pipe()
        shell.standardError = err
        try shell.run()
        let errText = await BlockingCall.run { String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        await shell.waitForExit()
        #expect(shell.terminationStatus == 0)
        #expect(errText.isEmpty)
    }

    @Test func interruptFinishesTheLineAndExitsCleanly() async throws {
        let process = Process()
        process.executableURL = Motionctl.executable
        process.arguments = ["stream", "--trace", Self.excerpt, "--speed", "realtime"]
        process.currentDirectoryURL = Motionctl.packageRoot
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let received = await BlockingCall.run {
            var received = Data()
            // Wait until some data rows have arrived (the replay flushes before each wait), then interrupt.
            while received.split(separator: UInt8(ascii: "\n")).filter({ $0.first != UInt8(ascii: "#") }).count < 5 {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                received.append(chunk)
            }
            process.interrupt()
            received.append(out.fileHandleForReading.readDataToEndOfFile())
            process.waitUntilExit()
            return received
        }
        #expect(process.terminationStatus == 0)
        #expect(received.last == UInt8(ascii: "\n"))
        let text = String(decoding: received, as: UTF8.self)
        let rows = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.dropFirst()
        #expect(rows.count >= 4 && rows.count < 17143)
        #expect(rows.allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 10 })
    }
}
