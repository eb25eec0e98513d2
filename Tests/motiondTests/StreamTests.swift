import Foundation
import IIOTestbed
import MotionCore
import MotionDBus
import MotionTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `org.swiftmotion.Motion1`: streams over passed sockets, from one shared device.
@Suite("motiond streams samples, device motion and events", .serialized, .requires(.umockdevPreload, .dbusClients))
struct StreamTests {
    @Test("Clients at different intervals each get exactly their interval, from one device")
    func mixedIntervals() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let first = try await BusClient(address: fixture.bus.address)
            let second = try await BusClient(address: fixture.bus.address)
            let fast = try await first.openStream("samples", interval: 0.02, format: "csv")
            let slow = try await second.openStream("samples", interval: 0.1, format: "csv", options: [
                ("sensors", .strings(["accel"]))
            ])
            defer {
                fast.close()
                slow.close()
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            // 3 s of scans 10 ms apart (device time), fed in 50 ms batches.
            for batch in 0..<60 {
                try fixture.feed(batch * 5..<batch * 5 + 5)
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(await fast.read { _ in fast.csvTimestamps.count >= 150 })
            #expect(await slow.read { _ in slow.csvTimestamps.count >= 30 })
            #expect(slow.lines.contains("t,ax,ay,az"), "\(slow.lines.prefix(8))")
            #expect(slow.lines.contains("# clock: boottime"))
            // Exactly their intervals: the device's scans are 10 ms apart, each stream takes one on its grid.
            for (reader, interval) in [(fast, 0.02), (slow, 0.1)] {
                let times = reader.csvTimestamps
                #expect(times.first == 1)
                let steps = zip(times.dropFirst(), times).map { $0 - $1 }
                #expect(steps.allSatisfy { abs($0 - interval) < 1e-9 }, "interval \(interval) s: \(steps)")
            }
            #expect(service.text.components(separatedBy: "(lis3dh) opened").count == 2, "\(service.text)")
            await first.close()
            await second.close()
            // The last client gone, the device stops: its buffer is disabled.
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "0" })
        }
    }

    @Test("Streams of one kind and format get the same lines (rendered once); each its own header, first")
    func sharedLines() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let first = try await BusClient(address: fixture.bus.address)
            let second = try await BusClient(address: fixture.bus.address)
            let early = try await first.openStream("samples", interval: 0.01, format: "csv")
            let json = try await first.openStream("samples", interval: 0.01, format: "jsonl")
            defer {
                early.close()
                json.close()
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            try fixture.feed(0..<50, raw: { i in (Int64(i), -1024, Int64(-i)) })
            #expect(await early.read { _ in early.csvTimestamps.count >= 50 })
            // Opened later: its first row is rendered with its header, the next ones are the shared lines.
            let late = try await second.openStream("samples", interval: 0.02, format: "csv")
            defer { late.close() }
            try await Task.sleep(for: .milliseconds(200))
            try fixture.feed(50..<150, raw: { i in (Int64(i), -1024, Int64(-i)) })
            #expect(await early.read { _ in early.csvTimestamps.count >= 150 })
            #expect(await late.read { _ in late.csvTimestamps.count >= 50 })
            #expect(await json.read { lines in lines.filter { $0.hasPrefix("{\"type\":\"sample\"") }.count >= 150 })
            let rows = { (reader: StreamReader) in reader.lines.filter { !$0.hasPrefix("#") && !$0.hasPrefix("t,") } }
            let earlyRows = Set(rows(early))
            let lateRows = rows(late)
            #expect(lateRows.count >= 50 && lateRows.allSatisfy(earlyRows.contains), "\(lateRows.prefix(3))")
            #expect(Set(rows(early)).count == rows(early).count, "each row once")
            for reader in [early, late] {
                let header = reader.lines.prefix { $0.hasPrefix("#") || $0.hasPrefix("t,") }
                #expect(header.contains("# stream: samples \(reader.id)"), "\(header)")
                #expect(header.last == "t,ax,ay,az", "\(header)")
            }
            // The JSON Lines stream, another variant, has its own lines for the same samples.
            let samples = json.lines.filter { $0.hasPrefix("{\"type\":\"sample\"") }
            #expect(samples.count >= 150 && samples.allSatisfy { !earlyRows.contains($0) })
            #expect(json.lines.first?.hasPrefix("{\"type\":\"metadata\"") == true, "\(json.lines.prefix(2))")
            await first.close()
            await second.close()
        }
    }

    @Test("Event streams: an orientation change and a shake, as motionctl prints them")
    func eventStreams() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let client = try await BusClient(address: fixture.bus.address)
            let shakes = try await client.openStream("shake", interval: 1, format: "jsonl")
            let changes = try await client.openStream("orientation", interval: 1, format: "jsonl")
            defer {
                shakes.close()
                changes.close()
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            // 1.5 s upright, 0.75 s of shaking along x (1.5 g at 4 Hz: three full back-and-forths), 1.5 s upright.
            let shaking = 150..<225
            for batch in 0..<38 {
                try fixture.feed(batch * 10..<batch * 10 + 10) { i in
                    guard shaking.contains(i) else { return (0, -1024, 0) }
                    return (Int64(1536 * sin(2 * Double.pi * 4 * Double(i - shaking.lowerBound) / 100)), -1024, 0)
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(await changes.read { $0.contains { $0.contains("\"orientation\":\"portrait\"") } }, "\(changes.lines)")
            #expect(await shakes.read { $0.contains { $0.contains("\"phase\":\"ended\"") } }, "\(shakes.lines)")
            let phases = shakes.lines.filter { $0.hasPrefix("{\"type\":\"shake\"") }
            #expect(phases.count == 2 && phases[0].contains("\"phase\":\"began\"") && phases[0].contains("\"axis\":\"x\""), "\(phases)")
            await client.close()
        }
    }

    @Test("Steps and activity streams: a simulated walk's steps, numbered in order, and walking then stationary")
    func stepsAndActivity() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let client = try await BusClient(address: fixture.bus.address)
            let steps = try await client.openStream("steps", interval: 1, format: "jsonl")
            let activity = try await client.openStream("activity", interval: 1, format: "jsonl")
            defer {
                steps.close()
                activity.close()
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            // 20 s of walking at 1.9 steps/s between still seconds, then 14 s still: the device's 100 Hz scans
            // (1024 per g), as the simulator gives them.
            var scenario = Scenario.walking(duration: 20, cadence: 1.9)
            scenario.append(.hold(14))
            let walk = Array(try Simulation(scenario: scenario, options: SimulationOptions(rate: 100, seed: 5)))
            for start in stride(from: 0, to: walk.count, by: 10) {
                try fixture.feed(start..<min(start + 10, walk.count)) { i in
                    let a = walk[i].acceleration!
                    return (Int64((a.x * 1024).rounded()), Int64((a.y * 1024).rounded()), Int64((a.z * 1024).rounded()))
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(await activity.read { $0.contains { $0.contains("\"activity\":\"stationary\"") } }, "\(activity.lines)")
            _ = await steps.read(limit: 5) { $0.filter { $0.hasPrefix("{\"type\":\"step\"") }.count >= 32 }
            let records = steps.lines.filter { $0.hasPrefix("{\"type\":\"step\"") }
            let counts = records.compactMap { line in
                line.split(separator: ",").first { $0.hasPrefix("\"steps\":") }.flatMap { Int($0.dropFirst(8)) }
            }
            #expect(counts == Array(1...max(counts.count, 1)), "numbered in order: \(counts)")
            #expect((32...44).contains(counts.count), "20 s at 1.9 steps/s: \(counts.count) steps")
            let kinds = activity.lines.filter { $0.hasPrefix("{\"type\":\"activity\"") }
            #expect(kinds.contains { $0.contains("\"activity\":\"walking\"") }, "\(kinds)")
            // The default model: 0.7055 m at 110 steps/min (1.8333… steps/s), proportional to the cadence.
            #expect(steps.lines.first?.contains("step_length_m") == true, "\(steps.lines.prefix(1))")
            #expect(steps.lines.first?.contains("step_length_cadence") == true, "\(steps.lines.prefix(1))")
            await client.close()
        }
    }

    @Test("The device's batch follows the fastest stream's interval (--low-latency, the default), or stays at --batch-duration")
    func batchFollowsTheInterval() async throws {
        // A stream at 0.01 s: the lis3dh runs at 100 Hz, where 0.05 s is 5 scans a wake-up and one interval is 1.
        for (arguments, watermark) in [
            ([String](), "1"), (["--no-low-latency"], "5"), (["--no-low-latency", "--batch-duration", "0.02"], "2"),
        ] {
            try await Testbed.run { testbed in
                let fixture = try await ServiceFixture.makeBuffered(testbed)
                defer { fixture.stop() }
                let service = try await fixture.startService(arguments)
                defer { service.stop() }
                let client = try await BusClient(address: fixture.bus.address)
                let reader = try await client.openStream("samples", interval: 0.01, format: "csv")
                defer { reader.close() }
                #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
                #expect(testbed.attribute(fixture.accelerometer, "sampling_frequency") == "100")
                #expect(testbed.attribute(fixture.accelerometer, "buffer/watermark") == watermark, "\(arguments)")
                try fixture.feed(0..<10)
                #expect(await reader.read { _ in reader.csvTimestamps.count >= 10 })
                await client.close()
            }
        }
    }

    @Test("Bad requests get D-Bus errors that say what is accepted, and change nothing for other clients")
    func badRequests() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let client = try await BusClient(address: fixture.bus.address)
            let good = try await client.openStream("samples", interval: 0.05, format: "jsonl")
            defer { good.close() }

            let cases: [(String, Double, String, [(String, DBusValue)], String)] = [
                ("gravity", 0.1, "csv", [], "unknown stream kind 'gravity': use samples, device-motion, shake, orientation"),
                ("samples", 0, "csv", [], "the interval must be a number of seconds above 0 and at most 3600.0, not 0.0"),
                ("samples", -1, "csv", [], "above 0 and at most 3600.0, not -1.0"),
                ("samples", .nan, "csv", [], "above 0 and at most 3600.0, not nan"),
                // A 10¹¹ s interval once stopped the service (a rate of 10⁻¹¹ Hz overflowed the poll period).
                ("samples", 1e11, "csv", [], "above 0 and at most 3600.0, not 100000000000.0"),
                ("samples", .infinity, "csv", [], "above 0 and at most 3600.0, not inf"),
                ("samples", 0.1, "csv", (0..<9).map { ("k\($0)", .boolean(true)) }, "9 options: at most 8"),
                ("samples", 0.1, "csv", [("buffer", .uint32(8)), ("buffer", .uint32(8))], "the option 'buffer' is given twice"),
                ("samples", 0.1, "csv", [("sensors", .strings(["accel", "accel", "accel", "accel"]))], "lists 4 names: at most 3"),
                (String(repeating: "x", count: 4000), 0.1, "csv", [], "unknown stream kind '\(String(repeating: "x", count: 64))…'"),
                ("samples", 0.1, "xml", [], "unknown format 'xml': use csv or jsonl"),
                ("shake", 0.1, "csv", [], "shake events have no CSV form: use jsonl"),
                ("samples", 0.1, "csv", [("sensors", .strings(["baro"]))], "unknown sensor 'baro': use accel, gyro or mag"),
                ("samples", 0.1, "csv", [("sensors", .strings(["gyro"]))], "this machine has no 'gyro' sensor; it has accel"),
                ("device-motion", 0.1, "csv", [], "device motion needs an accelerometer and a gyroscope"),
                ("samples", 0.1, "csv", [("frame", .string("north"))], "unknown option 'frame'"),
                ("samples", 0.05, "jsonl", [], "already has this stream open (id \(good.id))"),
            ]
            for (kind, interval, format, options, message) in cases {
                do throws(MotionError) {
                    let reader = try await client.openStream(kind, interval: interval, format: format, options: options)
                    reader.close()
                    Issue.record("\(kind) \(interval) \(format) was accepted")
                } catch {
                    #expect(error.message.contains(message), "\(kind) \(interval) \(format): \(error.message)")
                }
            }
            do throws(MotionError) {
                _ = try await client.call("CloseStream", [.uint32(999)])
                Issue.record("CloseStream 999 was accepted")
            } catch {
                #expect(error.message.contains("has no open stream 999"), "\(error.message)")
            }
            // The good stream went on meanwhile, and nothing else was opened.
            let before = good.lines.count
            #expect(await good.read { $0.count >= before + 10 })
            let open = try await client.call(
                "Get", [.string("org.swiftmotion.Motion1"), .string("OpenStreams")],
                interface: "org.freedesktop.DBus.Properties")
            #expect(open == [.variant(.uint32(1))])
            await client.close()
        }
    }

    @Test("A client that never reads loses its own records, counted, and slows no other")
    func stalledClient() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let client = try await BusClient(address: fixture.bus.address)
            // Every scan as JSON Lines into a socket nobody reads, with room for 16 records.
            let stalled = try await client.openStream(
                "samples", interval: 0.01, format: "jsonl", options: [("buffer", .uint32(16))])
            let reader = try await client.openStream("samples", interval: 0.05, format: "csv")
            defer {
                stalled.close()
                reader.close()
            }
            #expect(await eventually { testbed.attribute(fixture.accelerometer, "buffer/enable") == "1" })
            // 20 s of scans (device time), in 100 ms batches, read by one client as they come.
            for batch in 0..<200 {
                try fixture.feed(batch * 10..<batch * 10 + 10)
                reader.poll()
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(await reader.read { _ in reader.csvTimestamps.count >= 400 })
            let counts = try await client.call("StreamStatistics", [.uint32(stalled.id)])
            guard counts.count == 2, case .uint64(let delivered) = counts[0], case .uint64(let dropped) = counts[1] else {
                Issue.record("StreamStatistics replied \(counts)")
                return
            }
            #expect(dropped > 0 && delivered + dropped <= 2000, "delivered \(delivered), dropped \(dropped)")
            // The reading client got every one of its records, exactly one interval apart.
            let times = reader.csvTimestamps
            #expect(times.count == 400 && times.first == 1, "\(times.count) rows from \(times.first ?? -1)")
            let steps = zip(times.dropFirst(), times).map { $0 - $1 }
            #expect(steps.allSatisfy { abs($0 - 0.05) < 1e-9 })
            // Reading now, the stalled client finds a "dropped" event with the count where its records stopped.
            #expect(await stalled.read { $0.contains { $0.hasPrefix("{\"type\":\"dropped\"") } })
            await client.close()
            _ = service
        }
    }

    @Test("Without the high-rate right: raw samples above 25 Hz refused, slower ones and orientation allowed", .requires(.setpriv))
    func highRateRight() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService(["--high-rate-group", "users"])
            defer { service.stop() }
            func open(_ groups: String, _ kind: String, _ interval: String, _ format: String) async throws -> (Int32, String) {
                try await fixture.bus.run(
                    "/usr/bin/setpriv",
                    [
                        "--reuid=65534", "--regid=65534", groups, "/usr/bin/gdbus", "call", "--system", "--dest",
                        "org.swiftmotion.Motion1", "--object-path", "/org/swiftmotion/Motion1", "--method",
                        "org.swiftmotion.Motion1.OpenStream", kind, interval, format, "{}",
                    ])
            }
            let refused = try await open("--clear-groups", "samples", "0.01", "csv")
            #expect(refused.0 != 0)
            #expect(refused.1.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(refused.1)")
            #expect(refused.1.contains("needs membership in the group 'users', root, or polkit's org.swiftmotion.Motion1.high-rate"), "\(refused.1)")
            let motion = try await open("--clear-groups", "device-motion", "0.02", "csv")
            #expect(motion.0 != 0, "\(motion.1)")  // refused for the right, or as the device has no gyroscope
            let slow = try await open("--clear-groups", "samples", "0.04", "csv")
            #expect(slow.0 == 0 && slow.1.hasPrefix("(handle 0, uint32 "), "\(slow.1)")
            let orientation = try await open("--clear-groups", "orientation", "0.001", "jsonl")
            #expect(orientation.0 == 0, "\(orientation.1)")
            let member = try await open("--groups=100", "samples", "0.01", "csv")
            #expect(member.0 == 0, "\(member.1)")
        }
    }

    @Test("1,000 open and close cycles, and 1,000 claim and release cycles, leave no file descriptor behind")
    func noLeaks() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.make(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let pid = service.process.processIdentifier
            func descriptors() -> Int {
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
            }
            func residentKiB() -> Int {
                let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
                let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
                return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
            }
            let client = try await BusClient(address: fixture.bus.address)
            let keep = try await client.openStream("samples", interval: 0.05, format: "csv")  // the device stays on
            defer { keep.close() }
            #expect(await keep.read { $0.count >= 5 })
            let main = ["/net/hadess/SensorProxy", "net.hadess.SensorProxy"]
            func cycles(_ count: Int) async throws {
                for _ in 0..<count {
                    let reader = try await client.openStream("samples", interval: 0.1, format: "jsonl")
                    _ = try await client.call("CloseStream", [.uint32(reader.id)])
                    reader.close()
                }
                for _ in 0..<count {
                    _ = try await client.call("ClaimAccelerometer", interface: main[1], path: main[0], destination: main[1])
                    _ = try await client.call("ReleaseAccelerometer", interface: main[1], path: main[0], destination: main[1])
                }
            }
            // A few cycles first: sd-event makes some of its descriptors (a timer per clock) on first use.
            try await cycles(20)
            let openBefore = descriptors()
            let memoryBefore = residentKiB()
            try await cycles(1000)
            #expect(await eventually { descriptors() == openBefore }, "\(openBefore) → \(descriptors()) descriptors: \((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").sorted().map { "\($0)→" + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)")) ?? "") }) ?? [])")
            let growth = residentKiB() - memoryBefore
            #expect(growth < 4096, "resident memory grew by \(growth) KiB over 2,000 cycles")
            await client.close()
        }
    }
}
