import Foundation
import MotionAlgorithms
import MotionCore
import MotionTesting
import TestThreads
import Testing

/// The shake detector and the orientation classifier on seeded simulator scenarios (shakes across the whole
/// required range, every distractor kind, sweeps and noisy boundary holds), then `motionctl shake` and
/// `motionctl orientation` end to end on the built binary.
@Suite(.computeBound) struct EventScenarioTests {
    /// Runs both algorithms over a scenario and returns their events.
    static func run(
        _ scenario: Scenario, noise: Double = 0.005, seed: UInt64 = 1, rate: Double = 100
    ) throws -> (shakes: [ShakeEvent], changes: [OrientationClassifier<Double>.Change]) {
        let options = SimulationOptions(rate: rate, sensors: .accelerometer, seed: seed, accelerometerNoise: noise)
        var detector = ShakeDetector<Double>()
        var classifier = OrientationClassifier<Double>()
        var shakes: [ShakeEvent] = []
        var changes: [OrientationClassifier<Double>.Change] = []
        for sample in try Simulation(scenario: scenario, options: options) {
            guard let a = sample.acceleration?.vector else { continue }
            if let event = detector.update(a, at: sample.timestamp) { shakes.append(event) }
            if let change = classifier.update(a, at: sample.timestamp), change.orientationChanged {
                changes.append(change)
            }
        }
        return (shakes, changes)
    }

    // MARK: Shakes: 2–8 Hz, 0.5–3 g, 0.2–3 s, on each axis, in several orientations

    @Test(arguments: [DeviceAxis.x, .y, .z])
    func shakesAcrossTheRequiredRangeAreDetectedOnceWithTheirAxis(axis: DeviceAxis) throws {
        var seed: UInt64 = 0
        for start in [NamedOrientation.portrait, .faceUp, .landscapeLeft] {
            for frequency in [2.0, 4.5, 8] {
                for amplitude in [0.5, 1.5, 3] {
                    for duration in [0.2, 0.9, 3] {
                        seed += 1
                        var scenario = Scenario(name: "shake", start: start)
                        scenario.append(.hold(1))
                        scenario.append(
                            .shake(axis: axis, frequency: frequency, amplitude: amplitude, duration: duration))
                        scenario.append(.hold(1.5))
                        let shake = scenario.segments[1]
                        let label = "\(shake) from \(start)"
                        let events = try Self.run(scenario, seed: seed).shakes
                        #expect(events.count == 2, "\(label): \(events)")
                        guard events.count == 2 else { continue }
                        #expect(events[0].phase == .began, "\(label)")
                        #expect(
                            events[0].timestamp >= shake.start && events[0].timestamp <= shake.end + 0.3, "\(label)")
                        #expect(events.allSatisfy { $0.axis.rawValue == axis.rawValue }, "\(label)")
                        // Ended within the maximum duration (1 s), cancelled beyond it; within half a stroke of
                        // the limit either is right.
                        let margin = 0.5 / frequency
                        if shake.duration < 1 - margin { #expect(events[1].phase == .ended, "\(label)") }
                        if shake.duration > 1 + margin { #expect(events[1].phase == .cancelled(.tooLong), "\(label)") }
                    }
                }
            }
        }
    }

    @Test(arguments: [2.0, 3, 4, 5, 6, 7, 8])
    func theWeakestShortestShakesAreDetectedWhateverTheSamplingPhase(frequency: Double) throws {
        // 0.5 g, the shortest shake in range: at least 0.2 s and one full cycle, in whole strokes. Its first and
        // last strokes are quarter cycles, the hardest to catch between samples.
        let strokes = (2 * frequency * max(0.2, 1 / frequency)).rounded(.up)
        for phase in 0..<10 {
            var scenario = Scenario(name: "weak", start: .portrait)
            scenario.append(.hold(1 + Double(phase) / 1000))
            scenario.append(.shake(axis: .x, frequency: frequency, amplitude: 0.5, duration: strokes / (2 * frequency)))
            scenario.append(.hold(1))
            let events = try Self.run(scenario, seed: UInt64(phase)).shakes
            #expect(events.map(\.phase) == [.began, .ended], "\(frequency) Hz, phase \(phase) ms")
        }
    }

    @Test func shakesAreDetectedAtOtherRatesAndWithMoreNoise() throws {
        for (rate, noise) in [(50.0, 0.005), (200, 0.005), (100, 0.03)] {
            var scenario = Scenario(name: "shake", start: .portrait)
            scenario.append(.hold(1))
            scenario.append(.shake(axis: .x, frequency: 6, amplitude: 0.6, duration: 0.6))
            scenario.append(.hold(1.5))
            let events = try Self.run(scenario, noise: noise, rate: rate).shakes
            #expect(events.map(\.phase) == [.began, .ended], "\(rate) Hz, noise \(noise) g")
        }
    }

    // MARK: Distractors

    /// The gravity a device carried in portrait, tilted back by `degrees` (screen towards the sky), reads.
    static func carried(_ degrees: Double) -> Acceleration {
        let b = degrees * .pi / 180
        return Acceleration(x: 0, y: -Foundation.cos(b), z: -Foundation.sin(b))
    }

    static var distractors: [(name: String, segments: [Segment], start: NamedOrientation)] {
        var list: [(String, [Segment], NamedOrientation)] = []
        for back in [0.0, 25, 50] {
            for cadence in [1.6, 2.2] {
                list.append(
                    (
                        "walking \(cadence) Hz, \(back)° back",
                        [
                            .rotate(toGravity: carried(back)), .hold(1), .walking(duration: 8, cadence: cadence),
                            .hold(1),
                        ], .portrait
                    ))
            }
            for cadence in [2.5, 2.8, 3.2] {
                list.append(
                    (
                        "running \(cadence) Hz, \(back)° back",
                        [
                            .rotate(toGravity: carried(back)), .hold(1), .running(duration: 8, cadence: cadence),
                            .hold(1),
                        ], .portrait
                    ))
            }
        }
        for axis in DeviceAxis.allCases {
            for peak in [0.5, -1.5, 3] {
                for width in [0.01, 0.03] {
                    list.append(
                        (
                            "tap \(axis) \(peak) g \(width) s", [.tap(axis: axis, peak: peak, width: width), .hold(1)],
                            .faceUp
                        ))
                }
            }
            for frequency in [150.0, 170, 196, 198, 200] {
                for amplitude in [0.05, 0.3] {
                    list.append(
                        (
                            "vibration \(axis) \(frequency) Hz \(amplitude) g",
                            [
                                .vibration(duration: 1.5, amplitude: amplitude, frequency: frequency, axis: axis),
                                .hold(1),
                            ], .faceUp
                        ))
                }
            }
        }
        for axis in [DeviceAxis.x, .y] {
            for degrees in [-40.0, -10, 10, 40] {
                for duration in [0.5, 2] {
                    list.append(
                        (
                            "tilt \(degrees)° about \(axis) in \(duration) s",
                            [
                                .tilt(by: degrees * .pi / 180, about: axis, duration: duration), .hold(1.5),
                            ], .portrait
                        ))
                }
            }
        }
        for onto in [NamedOrientation.faceUp, .faceDown] {
            for bump in [0.5, 2] {
                list.append(
                    ("set down \(onto) with \(bump) g", [.setDown(onto: onto, bump: bump), .hold(1.5)], .portrait))
            }
        }
        for degrees in [30.0, 180] {
            for duration in [2.0, 6] {
                list.append(
                    (
                        "slow rotation \(degrees)° in \(duration) s",
                        [
                            .slowRotation(by: degrees * .pi / 180, duration: duration), .hold(1),
                        ], .portrait
                    ))
            }
        }
        return list
    }

    @Test func distractorsAreNotShakesAndChangeTheOrientationOnlyWhereTheyEnd() throws {
        var seed: UInt64 = 100
        for distractor in Self.distractors {
            seed += 1
            var scenario = Scenario(name: "distractor", start: distractor.start)
            scenario.append(.hold(1.5))
            scenario.append(contentsOf: distractor.segments)
            let (shakes, changes) = try Self.run(scenario, seed: seed)
            #expect(shakes.isEmpty, "\(distractor.name): \(shakes)")
            // The first orientation, then at most one change: to where the distractor leaves the device.
            let final = scenario.segments.last?.expectedOrientation?.rawValue
            #expect(changes.first?.orientation.description == distractor.start.rawValue, "\(distractor.name)")
            #expect(changes.count <= 2, "\(distractor.name): \(changes.map(\.orientation))")
            if changes.count == 2 {
                let offset = scenario.segments.last?.orientationOffset ?? 0
                #expect(changes[1].orientation.description == final || offset > 27 * .pi / 180, "\(distractor.name)")
            }
        }
    }

    // MARK: Orientation

    @Test(arguments: [0.005, 0.01, 0.03])
    func anOrientationSweepReportsEachOrientationOnce(noise: Double) throws {
        let changes = try Self.run(Scenario.orientationSweep(), noise: noise, seed: 3).changes
        #expect(
            changes.map(\.orientation) == [
                .portrait, .landscapeLeft, .landscapeRight, .portraitUpsideDown, .faceUp, .faceDown,
            ])
    }

    @Test func aSweepWithQuickTurnsAndShortHoldsReportsEachOrientationOnce() throws {
        let changes = try Self.run(Scenario.orientationSweep(hold: 1, transition: 0.5), noise: 0.01).changes
        #expect(
            changes.map(\.orientation) == [
                .portrait, .landscapeLeft, .landscapeRight, .portraitUpsideDown, .faceUp, .faceDown,
            ])
    }

    @Test(arguments: [40.0, 44, 45, 46, 50])
    func noisyHoldsNearABoundaryDoNotFlap(degrees: Double) throws {
        for towards in [Acceleration(x: -1, y: 0, z: 0), Acceleration(x: 0, y: 0, z: -1)] {
            let angle = degrees * .pi / 180
            let gravity = Acceleration(
                x: towards.x * Foundation.sin(angle), y: -Foundation.cos(angle), z: towards.z * Foundation.sin(angle))
            var scenario = Scenario(name: "boundary", start: .portrait)
            scenario.append(.hold(1.5))
            scenario.append(.rotate(toGravity: gravity, duration: 1))
            scenario.append(.hold(30))
            let changes = try Self.run(scenario, noise: 0.03, seed: UInt64(degrees)).changes
            // Portrait first; near the boundary the dead zone keeps it (45° − 15° = 30° is needed to leave).
            #expect(changes.map(\.orientation) == [.portrait], "\(degrees)° towards \(towards)")
        }
    }
}

/// `motionctl shake` and `motionctl orientation` end to end, on the built binary.
@Suite struct EventCommandTests {
    static let sweep = "Recordings/simulated-orientation-sweep.csv"
    static let shakes = "Recordings/simulated-shakes-with-distractors.csv"

    @Test func shakeFindsTheThreeShakesOfTheRecording() async throws {
        let result = try await Motionctl.run(["shake", "--trace", Self.shakes, "--speed", "max"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        // Shakes of 0.68, 0.60 and 0.73 s (the # notes): within the 1 s maximum, so each begins and ends; the
        // walking, tap, tilt, set-down and vibration between them give nothing.
        #expect(
            result.lines == [
                "1.180    Shake began (axis x, 3 strokes, peak 2.07 g)",
                "2.040    Shake ended (axis x, 7 strokes, 1.040 s, peak 2.09 g)",
                "7.470    Shake began (axis y, 3 strokes, peak 1.74 g)",
                "8.230    Shake ended (axis y, 6 strokes, 0.950 s, peak 1.79 g)",
                "12.530    Shake began (axis z, 3 strokes, peak 1.65 g)",
                "13.470    Shake ended (axis z, 9 strokes, 1.090 s, peak 1.67 g)",
            ])
    }

    @Test func shakeWritesJSONLinesAndHonoursTheMaximumDuration() async throws {
        let result = try await Motionctl.run(["shake", "--trace", Self.shakes, "--speed", "max", "--format", "jsonl"])
        #expect(result.status == 0)
        let objects = try result.lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["phase"] as? String } == ["began", "ended", "began", "ended", "began", "ended"])
        #expect(objects.map { $0["axis"] as? String } == ["x", "x", "y", "y", "z", "z"])
        #expect(objects.allSatisfy { $0["type"] as? String == "shake" })
        #expect(objects.allSatisfy { Set($0.keys) == ["type", "t", "phase", "axis", "start", "strokes", "peak"] })
        // Each shake ends within half a second of its labelled end (1.676, 7.877, 13.106 s).
        let ends = objects.enumerated().filter { $0.offset % 2 == 1 }.compactMap {
            ($0.element["t"] as? NSNumber)?.doubleValue
        }
        #expect(ends.count == 3)
        for (end, label) in zip(ends, [1.676, 7.877, 13.106]) { #expect(end > label && end < label + 0.5) }

        // With a 0.5 s maximum, the same shakes (0.60–0.73 s) are cancelled as too long.
        let short = try await Motionctl.run([
            "shake", "--trace", Self.shakes, "--speed", "max", "--format", "jsonl", "--max-duration", "0.5",
        ])
        let phases = try short.lines.map {
            let object = try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            return "\(object["phase"] as? String ?? "?") \(object["reason"] as? String ?? "")"
        }
        #expect(phases == Array(repeating: ["began ", "cancelled tooLong"], count: 3).flatMap { $0 })
    }

    @Test func shakeCancelsAShakeTheTraceEndsIn() async throws {
        var scenario = Scenario(name: "cut", start: .portrait)
        scenario.append(.hold(1))
        scenario.append(.shake(axis: .y, frequency: 4, amplitude: 1.5, duration: 0.75))
        let trace = try TraceWriterShim.render(scenario)
        let result = try await Motionctl.run(
            ["shake", "--trace", "-", "--speed", "max", "--format", "jsonl"], stdin: Data(trace.utf8))
        #expect(result.status == 0)
        #expect(result.lines.count == 2)
        #expect(result.lines.last?.contains("\"phase\":\"cancelled\",\"reason\":\"interrupted\"") == true)
    }

    @Test func orientationPrintsEachChangeOfTheSweep() async throws {
        let result = try await Motionctl.run(["orientation", "--trace", Self.sweep, "--speed", "max"])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        #expect(
            result.lines == [
                "0.500    Device orientation changed: portrait",
                "3.490    Device orientation changed: landscapeLeft",
                "6.680    Device orientation changed: landscapeRight",
                "9.760    Device orientation changed: portraitUpsideDown",
                "12.720    Device orientation changed: faceUp",
                "15.810    Device orientation changed: faceDown",
            ])
    }

    @Test func orientationSpeaksIIOSensorProxy() async throws {
        let text = try await Motionctl.run(["orientation", "--trace", Self.sweep, "--speed", "max", "--isp-names"])
        #expect(text.status == 0)
        #expect(
            text.lines == [
                "=== Has accelerometer (orientation: undefined, tilt: undefined)",
                "0.500    Accelerometer orientation changed: normal",
                "0.500    Tilt changed: vertical",
                "3.490    Accelerometer orientation changed: right-up",
                "6.680    Accelerometer orientation changed: left-up",
                "9.760    Accelerometer orientation changed: bottom-up",
                "12.720    Tilt changed: face-up",
                "15.810    Tilt changed: face-down",
            ])
        let jsonl = try await Motionctl.run([
            "orientation", "--trace", Self.sweep, "--speed", "max", "--isp-names", "--format", "jsonl",
        ])
        #expect(jsonl.status == 0)
        #expect(jsonl.lines.first == #"{"type":"orientation","t":0.5,"orientation":"normal","previous":"undefined"}"#)
        #expect(jsonl.lines.last == #"{"type":"tilt","t":15.81,"tilt":"face-down","previous":"face-up"}"#)
        let uikit = try await Motionctl.run(["orientation", "--trace", Self.sweep, "--speed", "max", "--format", "jsonl"])
        #expect(uikit.lines.count == 6)
        #expect(
            uikit.lines[1] == #"{"type":"orientation","t":3.49,"orientation":"landscapeLeft","previous":"portrait"}"#)
    }

    @Test func orientationSettingsChangeTheTiming() async throws {
        let result = try await Motionctl.run(["orientation", "--trace", Self.sweep, "--speed", "max", "--settle", "1"])
        #expect(result.status == 0)
        #expect(result.lines.count == 6)
        #expect(result.lines.first == "1.000    Device orientation changed: portrait")
    }

    @Test func realtimeIsTheDefaultSpeed() async throws {
        var scenario = Scenario(name: "short", start: .portrait)
        scenario.append(.hold(0.6))
        let path = try Motionctl.temporaryFile(TraceWriterShim.render(scenario))
        let clock = ContinuousClock()
        let start = clock.now
        let result = try await Motionctl.run(["orientation", "--trace", path])
        let elapsed = clock.now - start
        #expect(result.status == 0)
        #expect(result.lines == ["0.500    Device orientation changed: portrait"])
        #expect(elapsed >= .milliseconds(550))
    }

    @Test func evaluateReportsTheFigures() async throws {
        let shake = try await Motionctl.run(["shake", "--evaluate", "--scenario-seeds", "5000-5004"])
        #expect(shake.status == 0)
        #expect(
            shake.lines.first?.hasPrefix("shake detection on 5 scenarios (Scenario.random, seeds 5000-5004") == true)
        #expect(shake.lines.contains { $0.hasPrefix("precision 1.0000, recall 1.0000") })
        let orientation = try await Motionctl.run(["orientation", "--evaluate", "--scenario-seeds", "5000-5004"])
        #expect(orientation.status == 0)
        #expect(orientation.lines.contains { $0.hasPrefix("changes ") && $0.hasSuffix(", spurious 0, flaps 0") })
    }

    static let usageCases: [([String], Int32)] = [
        (["shake"], 64), (["shake", "--trace", "x.csv", "--evaluate"], 64),
        (["shake", "--trace", "/nonexistent/trace.csv"], 66), (["shake", "--trace", "-", "--threshold", "0"], 64),
        (["shake", "--trace", "-", "--min-frequency", "5", "--max-frequency", "4"], 64),
        (["orientation"], 64), (["orientation", "--trace", "-", "--hysteresis", "45"], 64),
        (["orientation", "--evaluate", "--scenario-seeds", "9-3"], 64),
    ]

    @Test(arguments: usageCases)
    func usageErrors(arguments: [String], status: Int32) async throws {
        let result = try await Motionctl.run(arguments)
        #expect(result.status == status)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.hasPrefix("motionctl: error: "))
    }

    @Test func aTraceWithoutAnAccelerometerIsAUsageError() async throws {
        let path = try Motionctl.temporaryFile("t,gx,gy,gz\n0,0,0,0\n")
        for command in ["shake", "orientation"] {
            let result = try await Motionctl.run([command, "--trace", path, "--speed", "max"])
            #expect(result.status == 64)
            #expect(result.stderr.contains("no accelerometer"))
        }
    }
}

/// Renders a scenario as a canonical CSV trace (accelerometer only, seed 1) without going through the CLI.
enum TraceWriterShim {
    static func render(_ scenario: Scenario) throws -> String {
        var text = "t,ax,ay,az\n"
        let options = SimulationOptions(sensors: .accelerometer, seed: 1)
        for sample in try Simulation(scenario: scenario, options: options) {
            guard let a = sample.acceleration else { continue }
            text += "\(sample.timestamp),\(a.x),\(a.y),\(a.z)\n"
        }
        return text
    }
}
