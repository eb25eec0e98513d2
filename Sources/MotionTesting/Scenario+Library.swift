import MotionCore
import RealModule

extension Scenario {
    /// The names ``named(_:seed:)`` accepts: `orientationSweep`, `shakeSequence`, `walking`, `random`, `tumbling`.
    public static let libraryNames = ["orientationSweep", "shakeSequence", "walking", "random", "tumbling"]

    /// The library scenario called `name` (see ``libraryNames``), with `seed` for those that randomise, or `nil`
    /// for an unknown name.
    public static func named(_ name: String, seed: UInt64 = 0) -> Scenario? {
        switch name {
        case "orientationSweep": orientationSweep()
        case "shakeSequence": shakeSequence(seed: seed)
        case "walking": walking()
        case "random": random(seed: seed)
        case "tumbling": tumbling()
        default: nil
        }
    }

    /// A device turned without a pause through `turns` attitudes spread over every direction (`Attitude.spread(_:)`),
    /// one a second, starting face up: up to about 6 rad/s. With a hard-iron offset, input on which a magnetometer
    /// calibration fits within seconds and then keeps fitting and checking its fit, the most work it does: the input
    /// of the device-motion and calibration benchmarks (42 turns at 100 Hz) and of the calibration tests.
    public static func tumbling(turns: Int = 42) -> Scenario {
        var scenario = Scenario(name: "tumbling", start: .faceUp)
        for i in 1...max(turns, 1) { scenario.append(.rotate(to: .spread(i), duration: 1)) }
        return scenario
    }

    /// Every named orientation in turn, starting in portrait: portrait, landscapeLeft, landscapeRight,
    /// portraitUpsideDown, faceUp, faceDown, each held for `hold` seconds with smooth `transition`-second
    /// rotations between them. Noise comes from the simulation's seed.
    public static func orientationSweep(hold: Double = 2, transition: Double = 1) -> Scenario {
        var scenario = Scenario(name: "orientationSweep", start: .portrait)
        scenario.append(.hold(hold))
        let sequence: [NamedOrientation] = [.landscapeLeft, .landscapeRight, .portraitUpsideDown, .faceUp, .faceDown]
        for orientation in sequence {
            scenario.hold(orientation, for: hold, transition: transition)
        }
        return scenario
    }

    /// Three shakes, one on each device axis, with distractors between them: walking, a tap, a slow tilt, a
    /// set-down onto a table and a vibration there. Shake frequencies, amplitudes and durations, and the
    /// distractors' strengths, are drawn from `seed`.
    public static func shakeSequence(seed: UInt64 = 0) -> Scenario {
        var random = SeededGenerator(seed: seed, stream: 100)
        func shake(_ axis: DeviceAxis) -> Segment {
            let frequency = random.uniform(in: 3...6)
            return .shake(
                axis: axis,
                frequency: frequency,
                amplitude: random.uniform(in: 1...2.5),
                duration: random.uniform(in: 0.5...0.9)  // within UIKit's "about 1 s": each one ends
            )
        }
        var scenario = Scenario(name: "shakeSequence", seed: seed, start: .portrait)
        scenario.append(.hold(1))
        scenario.append(shake(.x))
        scenario.append(.hold(0.8))
        scenario.append(.walking(duration: 4, cadence: random.uniform(in: 1.7...2.1)))
        scenario.append(.hold(0.8))
        scenario.append(shake(.y))
        scenario.append(.hold(0.6))
        scenario.append(.tap(axis: .z, peak: random.uniform(in: 1...2.5), width: random.uniform(in: 0.015...0.03)))
        scenario.append(.hold(0.8))
        scenario.append(.tilt(by: -0.5, about: .x, duration: 2))
        scenario.append(.hold(0.8))
        scenario.append(shake(.z))
        scenario.append(.hold(0.8))
        scenario.append(.setDown(onto: .faceUp, bump: random.uniform(in: 0.5...1.5)))
        scenario.append(.hold(1))
        scenario.append(.vibration(duration: 0.5, amplitude: random.uniform(in: 0.05...0.3)))
        scenario.append(.hold(1.5))
        return scenario
    }

    /// Walking for `duration` seconds at `cadence` steps per second, carrying the device in `orientation`, with
    /// a second of stillness before and after.
    public static func walking(
        duration: Double = 20,
        cadence: Double = Gait.walking.cadence,
        orientation: NamedOrientation = .portrait
    ) -> Scenario {
        var scenario = Scenario(name: "walking", start: orientation)
        scenario.append(.hold(1))
        scenario.append(.walking(duration: duration, cadence: cadence))
        scenario.append(.hold(1))
        return scenario
    }

    /// A varied, labelled scenario for scoring detectors, drawn from `seed`.
    ///
    /// It starts still in a random orientation (tilted up to 11°, any heading) and alternates `segmentCount`
    /// events with holds of 0.5–1.5 s. Events are drawn with these weights:
    /// - 30 % shakes on a random axis: 2–8 Hz, 0.5–3 g, 0.2–3 s in whole strokes and at least one full cycle,
    ///   so each has at least 0.5 s of stillness on both sides;
    /// - distractors: walking (10 %) and running (6 %), first turning to a carrying attitude (portrait tilted
    ///   back 0–50°) when needed; taps of 0.5–3 g and 10–30 ms on any axis (10 %); vibrations of 0.05–0.3 g at
    ///   150–200 Hz (8 %); tilts of 10–40° about x or y (8 %); set-downs onto a table, face up or (1 in 5) face
    ///   down, with 0.5–2 g bumps, picked up first if that would turn the device over (6 %); slow turns of
    ///   30–180° about the vertical (8 %);
    /// - orientation holds (14 %): the smallest turn to a named orientation tilted 0–42° (some close to the
    ///   45° boundary with a neighbour), held 1–3 s. ``LabelledSegment/expectedOrientation`` and
    ///   ``LabelledSegment/orientationOffset`` give the truth; holds after tilts can end up anywhere, even on a
    ///   boundary, and their offset says so.
    ///
    /// Turns take 0.5 s plus 1 s per half turn (plus up to 0.5 s), so their rates stay below about 4 rad/s; a
    /// set-down that lays the device face down is the fastest motion, up to about 6 rad/s.
    public static func random(seed: UInt64, segmentCount: Int = 20) -> Scenario {
        precondition(segmentCount >= 1, "a random scenario needs at least one event")
        var random = SeededGenerator(seed: seed, stream: 200)
        let first = NamedOrientation.allCases[random.integer(in: 0...5)]
        let start = tilted(
            first.attitude(heading: random.uniform(in: -.pi ... .pi)),
            by: random.uniform(in: 0...0.2),
            random: &random
        )
        var scenario = Scenario(name: "random", seed: seed, start: start)
        scenario.append(.hold(random.uniform(in: 0.5...1.5)))

        for _ in 0..<segmentCount {
            let pick = random.nextUniform()
            if pick < 0.30 {
                let frequency = random.uniform(in: 2...8)
                let amplitude = random.uniform(in: 0.5...3)
                // Whole strokes within 0.2–3 s: the factory rounds to the nearest stroke (quarter of a cycle away
                // at most) and to at least one cycle.
                let stroke = 1 / (2 * frequency)
                let duration = random.uniform(in: (0.2 + stroke / 2)...(3 - stroke / 2))
                let axis = DeviceAxis.allCases[random.integer(in: 0...2)]
                scenario.append(.shake(axis: axis, frequency: frequency, amplitude: amplitude, duration: duration))
            } else if pick < 0.46 {
                let running = pick >= 0.40
                if !isCarried(scenario.finalAttitude) {
                    pickUp(&scenario, random: &random)
                }
                let gait: Gait =
                    running
                    ? .running(cadence: random.uniform(in: 2.5...3.2))
                    : .walking(cadence: random.uniform(in: 1.6...2.2))
                scenario.append(.gait(gait, duration: random.uniform(in: 3...8)))
            } else if pick < 0.56 {
                let axis = DeviceAxis.allCases[random.integer(in: 0...2)]
                let sign: Double = random.chance(0.5) ? 1 : -1
                scenario.append(
                    .tap(axis: axis, peak: sign * random.uniform(in: 0.5...3), width: random.uniform(in: 0.01...0.03))
                )
            } else if pick < 0.64 {
                scenario.append(
                    .vibration(
                        duration: random.uniform(in: 0.3...1.5),
                        amplitude: random.uniform(in: 0.05...0.3),
                        frequency: random.uniform(in: 150...200),
                        axis: DeviceAxis.allCases[random.integer(in: 0...2)]
                    )
                )
            } else if pick < 0.72 {
                let sign: Double = random.chance(0.5) ? 1 : -1
                let axis: DeviceAxis = random.chance(0.5) ? .x : .y
                let angle = sign * random.uniform(in: 10...40) * .pi / 180
                scenario.append(.tilt(by: angle, about: axis, duration: random.uniform(in: 0.5...2)))
            } else if pick < 0.78 {
                let onto: NamedOrientation = random.chance(0.8) ? .faceUp : .faceDown
                // Nobody turns a device over while putting it down: pick it up first when that would take more
                // than 120°.
                if angle(scenario.finalAttitude.gravity.vector, onto.gravity.vector) > 2 * .pi / 3 {
                    pickUp(&scenario, random: &random)
                }
                scenario.append(
                    .setDown(onto: onto, bump: random.uniform(in: 0.5...2), duration: random.uniform(in: 1.2...2))
                )
            } else if pick < 0.86 {
                let sign: Double = random.chance(0.5) ? 1 : -1
                scenario.append(
                    .slowRotation(
                        by: sign * random.uniform(in: 30...180) * .pi / 180,
                        about: .vertical,
                        duration: random.uniform(in: 2...6)
                    )
                )
            } else {
                let orientation = NamedOrientation.allCases[random.integer(in: 0...5)]
                let offset = random.uniform(in: 0...42) * .pi / 180
                let gravity = tilted(orientation.gravity.vector, by: offset, random: &random)
                turn(&scenario, toGravity: gravity, random: &random)
                scenario.append(.hold(random.uniform(in: 1...3)))
            }
            scenario.append(.hold(random.uniform(in: 0.5...1.5)))
        }
        return scenario
    }

    /// Appends the smallest turn that makes the device read `gravity`, lasting 0.5 s + 1 s per half turn + up
    /// to 0.5 s, so rotation rates stay human (below about 4 rad/s).
    private static func turn(
        _ scenario: inout Scenario, toGravity gravity: SIMD3<Double>, random: inout SeededGenerator
    ) {
        let turnAngle = angle(scenario.finalAttitude.gravity.vector, gravity)
        let duration = 0.5 + turnAngle / .pi + random.uniform(in: 0...0.5)
        scenario.append(.rotate(toGravity: Acceleration(gravity), duration: duration))
    }

    /// Turns to a carrying attitude (portrait tilted back 0–50°, screen towards the face) and pauses briefly.
    private static func pickUp(_ scenario: inout Scenario, random: inout SeededGenerator) {
        let back = random.uniform(in: 0...50) * .pi / 180
        turn(&scenario, toGravity: SIMD3(0, -Double.cos(back), -Double.sin(back)), random: &random)
        scenario.append(.hold(random.uniform(in: 0.3...0.8)))
    }

    /// The angle between two non-zero vectors, in radians.
    private static func angle(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
        let c = cross(a, b)
        return Double.atan2(y: (c * c).sum().squareRoot(), x: (a * b).sum())
    }

    /// The unit vector `gravity` turned by `angle` towards a random perpendicular direction.
    private static func tilted(
        _ gravity: SIMD3<Double>,
        by angle: Double,
        random: inout SeededGenerator
    ) -> SIMD3<Double> {
        let helper: SIMD3<Double> = abs(gravity.z) < 0.9 ? SIMD3(0, 0, 1) : SIMD3(1, 0, 0)
        var e1 = cross(gravity, helper)
        e1 /= (e1 * e1).sum().squareRoot()
        let e2 = cross(gravity, e1)
        let direction = random.uniform(in: -.pi ... .pi)
        let perpendicular = Double.cos(direction) * e1 + Double.sin(direction) * e2
        return Double.cos(angle) * gravity + Double.sin(angle) * perpendicular
    }

    /// `attitude` turned by `angle` about a random horizontal axis of the reference frame, so that gravity in the
    /// device frame moves exactly `angle` away from where it was.
    private static func tilted(_ attitude: Attitude, by angle: Double, random: inout SeededGenerator) -> Attitude {
        let direction = random.uniform(in: -.pi ... .pi)
        let axisInReference = SIMD3(Double.cos(direction), Double.sin(direction), 0)
        let turn = Quaternion<Double>(angle: angle, axis: axisInReference)
        return Attitude(quaternion: turn * attitude.quaternion)
    }

    /// `true` when the device is held roughly as a person carries it while walking: screen up or towards the
    /// user, top up (gravity mostly along −y and −z).
    private static func isCarried(_ attitude: Attitude) -> Bool {
        let g = attitude.gravity
        return g.y < -0.4 && g.z < 0.3
    }
}
