import MotionCore
import MotionTesting
import Testing
import TestThreads

@Suite("Scenarios and labels", .computeBound)
struct ScenarioTests {
    static let library: [Scenario] =
        [.orientationSweep(), .shakeSequence(seed: 0), .shakeSequence(seed: 77), .walking(duration: 5)]
        + (0..<10).map { Scenario.random(seed: $0) }

    @Test("Labels cover the timeline without gaps and chain attitudes", arguments: library)
    func coverage(scenario: Scenario) throws {
        let segments = scenario.segments
        #expect(!segments.isEmpty)
        #expect(segments.first?.start == 0)
        #expect(segments.first?.startAttitude == scenario.initialAttitude)
        for (i, segment) in segments.enumerated() {
            #expect(segment.index == i)
            #expect(segment.end > segment.start)
            #expect(abs(segment.end - segment.start - segment.duration) < 1e-12)
            if i > 0 {
                #expect(segment.start == segments[i - 1].end)
                #expect(segment.startAttitude.angle(to: segments[i - 1].endAttitude) < 1e-9)
            }
            if segment.isSteady {
                #expect(segment.endAttitude.angle(to: segment.startAttitude) < 1e-9)
            }
        }
        #expect(segments.last?.end == scenario.duration)
        #expect(scenario.finalAttitude == segments.last?.endAttitude)
        #expect(scenario.segment(at: 0)?.index == 0)
        #expect(scenario.segment(at: scenario.duration) == nil)
        #expect(scenario.segment(at: -0.001) == nil)
        for segment in segments {
            #expect(scenario.segment(at: segment.start)?.index == segment.index)
            #expect(scenario.segment(at: (segment.start + segment.end) / 2)?.index == segment.index)
        }
    }

    @Test("Every frame belongs to the segment whose interval holds its timestamp")
    func framesFollowLabels() throws {
        let scenario = Scenario.random(seed: 21)
        for frame in try simulate(scenario, SimulationOptions(rate: 60)).frames {
            let label = scenario.segments[frame.segmentIndex]
            #expect(label.contains(frame.sample.timestamp))
            // Steady segments keep the device near their labelled orientation.
            if label.isSteady, label.expectedOrientation != nil {
                #expect(frame.attitude.angle(to: label.startAttitude) < 0.1)
            }
        }
    }

    @Test("The orientation sweep visits the named orientations in order")
    func orientationSweep() throws {
        let scenario = Scenario.orientationSweep(hold: 1.5, transition: 0.8)
        let holds = scenario.segments.filter { $0.kind == "hold" }
        #expect(
            holds.map(\.expectedOrientation) == [
                .portrait, .landscapeLeft, .landscapeRight, .portraitUpsideDown, .faceUp, .faceDown,
            ])
        #expect(holds.allSatisfy { $0.orientationOffset! < 1e-6 && $0.duration == 1.5 })
        #expect(scenario.segments.filter { $0.kind == "rotate" }.count == 5)
        #expect(abs(scenario.duration - (6 * 1.5 + 5 * 0.8)) < 1e-9)
        // Each hold reads its orientation's gravity.
        let samples = Array(try simulate(scenario, SimulationOptions(seed: 1)))
        for hold in holds {
            let readings = samples.filter { hold.contains($0.timestamp) }.map { $0.acceleration!.vector }
            #expect(maxDifference(mean(readings), hold.expectedOrientation!.gravity.vector) < 0.002)
        }
    }

    @Test("The shake sequence has one shake per axis among labelled distractors")
    func shakeSequence() {
        let scenario = Scenario.shakeSequence(seed: 5)
        let shakes = scenario.segments.filter(\.isShake)
        #expect(shakes.map(\.shakeAxis) == [.x, .y, .z])
        for shake in shakes {
            #expect((3...6).contains(shake.shakeFrequency!))
            #expect((1...2.5).contains(shake.shakeAmplitude!))
        }
        let kinds = Set(scenario.segments.map(\.kind))
        #expect(kinds.isSuperset(of: ["walking", "tap", "tilt", "setDown", "vibration", "hold"]))
        #expect(scenario.finalAttitude.angle(to: NamedOrientation.faceUp.attitude) < 1e-9)
    }

    @Test("Random scenarios draw shakes and distractors from the documented ranges")
    func randomScenarios() {
        var shakes: [LabelledSegment] = []
        var kinds: [String: Int] = [:]
        var nearBoundary = 0
        for seed in 0..<40 as Range<UInt64> {
            let scenario = Scenario.random(seed: seed)
            #expect(scenario.seed == seed && scenario.name == "random")
            let segments = scenario.segments
            for segment in segments {
                kinds[segment.kind, default: 0] += 1
                // Orientation-hold events: a rotation to a tilted named orientation, then 1–3 s still. (Holds after
                // tilts or carrying rotations can be anywhere, even at 45°; their offset tells.)
                if segment.kind == "hold", segment.duration >= 1, segment.index > 0,
                    segments[segment.index - 1].kind == "rotate", let offset = segment.orientationOffset
                {
                    #expect(offset <= 42 * .pi / 180 + 1e-9)
                    if offset > 35 * .pi / 180 { nearBoundary += 1 }
                }
                guard segment.isShake else { continue }
                shakes.append(segment)
                let f = segment.shakeFrequency!
                #expect((2...8).contains(f))
                #expect((0.5...3).contains(segment.shakeAmplitude!))
                #expect(segment.duration >= 0.2 - 1e-12 && segment.duration <= 3 + 1e-12)
                #expect(segment.duration >= 1 / f - 1e-12, "at least one full cycle")
                let strokes = segment.duration * 2 * f
                #expect(abs(strokes - strokes.rounded()) < 1e-9, "a whole number of strokes")
                // Stillness of at least 0.5 s on both sides, so events are separable.
                let before = segments[segment.index - 1]
                let after = segments[segment.index + 1]
                #expect(before.kind == "hold" && before.duration >= 0.5)
                #expect(after.kind == "hold" && after.duration >= 0.5)
            }
        }
        #expect(shakes.count >= 200)
        for axis in DeviceAxis.allCases {
            #expect(shakes.filter { $0.shakeAxis == axis }.count > 50)
        }
        for kind in ["walking", "running", "tap", "vibration", "tilt", "setDown", "slowRotation", "rotate"] {
            #expect(kinds[kind, default: 0] > 5, "distractor \(kind) appears")
        }
        #expect(nearBoundary > 5)
        #expect(shakes.contains { $0.shakeFrequency! < 3 } && shakes.contains { $0.shakeFrequency! > 7 })
    }

    @Test("Library names resolve, unknown names do not")
    func namedScenarios() {
        for name in Scenario.libraryNames {
            #expect(Scenario.named(name, seed: 3)?.name == name)
        }
        #expect(Scenario.named("random", seed: 3) == .random(seed: 3))
        #expect(Scenario.named("nope") == nil)
    }

    @Test("hold(_:for:) rotates first only when needed; descriptions are stable")
    func builder() {
        var scenario = Scenario(name: "b", start: .portrait)
        scenario.hold(.portrait, for: 1)
        scenario.hold(.landscapeRight, for: 2, transition: 0.5)
        scenario.append(.shake(axis: .y, frequency: 4, amplitude: 1.25, duration: 1))
        #expect(scenario.segments.map(\.kind) == ["hold", "rotate", "hold", "shake"])
        #expect(
            scenario.segments.map(\.description) == [
                "0.000-1.000 hold duration=1.000s orientation=portrait+0.0deg",
                "1.000-1.500 rotate to=landscapeRight+0.0deg duration=0.500s",
                "1.500-3.500 hold duration=2.000s orientation=landscapeRight+0.0deg",
                "3.500-4.500 shake axis=y frequency=4.000Hz amplitude=1.250g duration=1.000s orientation=landscapeRight+0.0deg",
            ])
    }
}
