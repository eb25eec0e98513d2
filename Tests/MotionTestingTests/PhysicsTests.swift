import MotionCore
import MotionTesting
import Testing
import TestThreads

@Suite("Physics: sensors agree with the motion", .computeBound)
struct PhysicsTests {
    @Test(
        "Integrating the gyroscope over a rotation reproduces the end attitude",
        arguments: [
            (NamedOrientation.portrait, NamedOrientation.landscapeLeft, 1.0, 100.0),
            (.faceUp, .portrait, 0.5, 50),
            (.landscapeRight, .faceDown, 0.8, 100),
            (.portraitUpsideDown, .landscapeLeft, 1.5, 200),
        ]
    )
    func gyroIntegration(from: NamedOrientation, to: NamedOrientation, duration: Double, rate: Double) throws {
        var scenario = Scenario(name: "rotate", start: from, heading: 0.4)
        scenario.append(.hold(0.3))
        scenario.append(.rotate(to: to, heading: -1.1, duration: duration))
        scenario.append(.hold(0.3))
        let samples = Array(try simulate(scenario, .noiseless(rate: rate)))
        let q = integrate(
            from: scenario.initialAttitude.quaternion,
            rates: samples.map { $0.rotationRate!.vector },
            times: samples.map(\.timestamp),
            until: scenario.duration
        )
        let target = to.attitude(heading: -1.1)
        #expect(scenario.segments[1].endAttitude.angle(to: target) < 1e-12)
        #expect(Attitude(quaternion: q).angle(to: target) < 1e-3)
        // The rate is zero at rest and continuous: no step between consecutive samples exceeds what the
        // quintic easing allows.
        let rates = samples.map { $0.rotationRate!.vector }
        #expect(length(rates.first!) == 0 && length(rates.last!) == 0)
        let steps = zip(rates, rates.dropFirst()).map { length($1 - $0) }
        #expect(steps.max()! < 0.2 * (rates.map(length).max()!))
    }

    @Test(
        "Integrating the gyroscope through whole scenarios tracks the true attitude", arguments: [0, 1, 2] as [UInt64])
    func gyroIntegrationThroughScenario(seed: UInt64) throws {
        let scenario = Scenario.random(seed: seed, segmentCount: 12)
        let all = try frames(scenario, .noiseless(rate: 100))
        // Trapezoidal steps, so the integrated attitude can be compared at every sample, not only at rest.
        var q = scenario.initialAttitude.quaternion
        var worst = 0.0
        for i in all.indices.dropLast() {
            let dt = all[i + 1].sample.timestamp - all[i].sample.timestamp
            let omega = (all[i].sample.rotationRate!.vector + all[i + 1].sample.rotationRate!.vector) / 2
            q = (q * Quaternion(rotationVector: omega * dt)).normalized
            worst = max(worst, Attitude(quaternion: q).angle(to: all[i + 1].attitude))
        }
        #expect(worst < 1e-3)
        #expect(Attitude(quaternion: q).angle(to: scenario.finalAttitude) < 1e-3)
    }

    @Test("Acceleration is gravity from the attitude plus user acceleration")
    func accelerationDecomposition() throws {
        for frame in try frames(.shakeSequence(seed: 1), .noiseless()) {
            let a = try #require(frame.sample.acceleration).vector
            #expect(maxDifference(frame.gravity.vector, frame.attitude.gravity.vector) < 1e-12)
            #expect(maxDifference(a, frame.gravity.vector + frame.userAcceleration.vector) < 1e-12)
            #expect(frame.sample.rotationRate == frame.rotationRate)
        }
    }

    @Test("Rotations alone produce no user acceleration: the reading stays 1 g long")
    func pureRotation() throws {
        var scenario = Scenario(name: "turns", start: .portrait)
        scenario.append(.rotate(to: .faceDown, duration: 1))
        scenario.append(.tilt(by: 0.7, about: .y, duration: 0.6))
        scenario.append(.slowRotation(by: 4 * .pi, about: .device(.z), duration: 5))
        for sample in try simulate(scenario, .noiseless()) {
            #expect(abs(length(sample.acceleration!.vector) - 1) < 1e-12)
        }
    }

    @Test("A slow rotation about the vertical turns at a constant rate about the device's up axis")
    func slowRotation() throws {
        var scenario = Scenario(name: "slow", start: .portrait)
        scenario.append(.slowRotation(by: .pi, about: .vertical, duration: 5))
        let all = try frames(scenario, .noiseless())
        // Constant rate over the middle 60 %: angle / (duration · (1 − ramp fraction)).
        let expectedRate = Double.pi / (5 * 0.8)
        for frame in all where frame.sample.timestamp > 1.05 && frame.sample.timestamp < 3.95 {
            let omega = frame.sample.rotationRate!.vector
            #expect(maxDifference(omega, -expectedRate * frame.gravity.vector) < 1e-6)
        }
        #expect(scenario.finalAttitude.angle(to: NamedOrientation.portrait.attitude(heading: .pi)) < 1e-9)
    }

    static let shakeCases: [(DeviceAxis, Double, Double)] = [
        (.x, 2, 0.5), (.y, 5, 1.5), (.z, 8, 3), (.x, 6.5, 2.2), (.y, 3, 0.8), (.z, 4, 1),
    ]

    @Test("Gravity targets turn by the smallest rotation")
    func rotateToGravity() {
        var scenario = Scenario(name: "gravity", start: .portrait, heading: 0.9)
        let wanted = Acceleration(x: 0.3, y: -0.5, z: -0.6)
        let unit = wanted.vector / length(wanted.vector)
        scenario.append(.rotate(to: .portraitUpsideDown))
        scenario.append(.rotate(toGravity: wanted, duration: 0.7))
        scenario.append(.setDown(onto: .faceUp))
        let s = scenario.segments
        // A half turn from portrait to upside down goes about the screen normal: the screen keeps facing the
        // same way.
        #expect(maxDifference(s[0].endAttitude.gravity.vector, SIMD3(0, 1, 0)) < 1e-12)
        #expect(abs(s[0].endAttitude.angle(to: s[0].startAttitude) - .pi) < 1e-9)
        let screenBefore = s[0].startAttitude.quaternion.act(on: SIMD3(0, 0, 1))
        let screenAfter = s[0].endAttitude.quaternion.act(on: SIMD3(0, 0, 1))
        #expect(maxDifference(screenBefore, screenAfter) < 1e-9)
        // Any direction: ends reading it, having turned exactly the angle between the two gravity directions.
        #expect(maxDifference(s[1].endAttitude.gravity.vector, unit) < 1e-12)
        let between = angleBetween(unit, SIMD3(0, 1, 0))
        #expect(abs(s[1].endAttitude.angle(to: s[1].startAttitude) - between) < 1e-9)
        // A set-down onto a named orientation lays the device flat by the smallest turn too.
        #expect(maxDifference(s[2].endAttitude.gravity.vector, SIMD3(0, 0, -1)) < 1e-12)
        let flatten = angleBetween(unit, SIMD3(0, 0, -1))
        #expect(abs(s[2].endAttitude.angle(to: s[2].startAttitude) - flatten) < 1e-9)
        #expect(s[1].segment.description == "rotate to=faceUp+44.2deg duration=0.700s")
    }

    @Test("A shake has the requested axis, frequency and peak amplitude", arguments: shakeCases)
    func shake(axis: DeviceAxis, frequency: Double, amplitude: Double) throws {
        var scenario = Scenario(name: "shake", start: .landscapeLeft, heading: 2)
        scenario.append(.hold(1))
        scenario.append(.shake(axis: axis, frequency: frequency, amplitude: amplitude, duration: 3))
        scenario.append(.hold(1))
        let samples = Array(try simulate(scenario, SimulationOptions(seed: 4)))
        let label = scenario.segments[1]
        #expect(label.isShake && label.shakeAxis == axis)
        #expect(label.shakeFrequency == frequency && label.shakeAmplitude == amplitude)

        // Gravity estimated from the hold before, as a detector would.
        let rest = samples.filter { $0.timestamp < 1 }.map { $0.acceleration!.vector }
        let gravity = mean(rest)
        let inside = samples.filter { label.contains($0.timestamp) }
        let user = inside.map { $0.acceleration!.vector - gravity }

        let energy = user.reduce(SIMD3<Double>.zero) { $0 + $1 * $1 }
        let dominant = DeviceAxis.allCases.max { energy[index($0)] < energy[index($1)] }
        #expect(dominant == axis)
        for other in DeviceAxis.allCases where other != axis {
            #expect(user.map { abs($0[index(other)]) }.max()! < 0.03, "only noise off the shake axis")
        }

        let along = user.map { $0[index(axis)] }
        let peak = along.map(abs).max()!
        #expect(peak > 0.97 * amplitude && peak < amplitude + 0.02)

        // Frequency from zero crossings away from the tapers at both ends.
        let margin = 0.3 / frequency
        let interior = inside.indices.filter {
            inside[$0].timestamp > label.start + margin && inside[$0].timestamp < label.end - margin
        }
        let crossings = zeroCrossings(interior.map { along[$0] }, times: interior.map { inside[$0].timestamp })
        let measured = Double(crossings.count - 1) / (2 * (crossings.last! - crossings.first!))
        #expect(abs(measured - frequency) / frequency < 0.01)
        #expect(abs(Double(crossings.count) - 2 * frequency * (3 - 2 * margin)) <= 2)
    }

    @Test("Shakes, taps and set-downs start and end at rest, with bounded displacement")
    func noDrift() throws {
        var scenario = Scenario(name: "drift", start: .portrait, heading: 0.3)
        scenario.append(.hold(0.5))
        scenario.append(.shake(axis: .x, frequency: 4, amplitude: 2, duration: 1.3))
        scenario.append(.hold(0.5))
        scenario.append(.shake(axis: .z, frequency: 3, amplitude: 1, duration: 0.9))
        scenario.append(.hold(0.5))
        scenario.append(.tap(axis: .y, peak: 2, width: 0.02))
        scenario.append(.hold(0.5))
        scenario.append(.setDown(onto: .faceUp, bump: 1.2))
        scenario.append(.hold(0.5))
        // Durations round to whole strokes: 10.4 → 10 strokes of 1/8 s, 5.4 → 5 strokes of 1/6 s.
        #expect(scenario.segments[1].duration == 1.25)
        #expect(abs(scenario.segments[3].duration - 5.0 / 6) < 1e-15)

        let rate = 4000.0
        let all = try frames(scenario, .noiseless(rate: rate))
        // Kinematic acceleration in the reference frame, m/s²: minus the user acceleration (Core Motion's sign).
        let kinematic = all.map {
            -Acceleration.standardGravity * $0.attitude.quaternion.act(on: $0.userAcceleration.vector)
        }
        var velocity = SIMD3<Double>.zero
        var position = SIMD3<Double>.zero
        var velocities: [SIMD3<Double>] = [.zero]
        var positions: [SIMD3<Double>] = [.zero]
        for i in 1..<all.count {
            // Trapezoids within a segment; across a boundary each side's value holds up to the boundary (a
            // shake's acceleration steps between 0 and its peak there).
            let (t0, t1) = (all[i - 1].sample.timestamp, all[i].sample.timestamp)
            if all[i - 1].segmentIndex == all[i].segmentIndex {
                velocity += (kinematic[i - 1] + kinematic[i]) / 2 * (t1 - t0)
            } else {
                let boundary = scenario.segments[all[i].segmentIndex].start
                velocity += kinematic[i - 1] * (boundary - t0) + kinematic[i] * (t1 - boundary)
            }
            position += velocity / rate
            velocities.append(velocity)
            positions.append(position)
        }
        for label in scenario.segments where label.kind == "hold" {
            let inside = all.indices.filter { label.contains(all[$0].sample.timestamp) }
            for i in inside { #expect(length(velocities[i]) < 1e-3, "at rest during \(label)") }
        }
        for label in scenario.segments where label.isShake {
            let omega = 2 * Double.pi * label.shakeFrequency!
            let peakSpeed = label.shakeAmplitude! * Acceleration.standardGravity / omega
            let inside = all.indices.filter { label.contains(all[$0].sample.timestamp) }
            let speeds = inside.map { length(velocities[$0]) }
            #expect(abs(speeds.max()! - peakSpeed) / peakSpeed < 0.01)
            let start = positions[inside.first!]
            let excursion = inside.map { length(positions[$0] - start) }.max()!
            #expect(abs(excursion - 2 * peakSpeed / omega) / (2 * peakSpeed / omega) < 0.02)
        }
        // The set-down lowers the device by ½ · landing speed · lowering time: a few centimetres.
        let drop = -positions.last!.z
        #expect(drop > 0.01 && drop < 0.1)
        // The x shake (10 strokes) returns to where it started; the z shake (5 strokes) ends at the far end of
        // its stroke, 2 · amplitude · g / ω² away, horizontally.
        let horizontal = length(SIMD3(positions.last!.x, positions.last!.y, 0))
        let stroke = 2 * 1 * Acceleration.standardGravity / ((2 * Double.pi * 3) * (2 * Double.pi * 3))
        #expect(abs(horizontal - stroke) / stroke < 0.02)
    }

    static let gaits: [(Gait, Double)] = [
        (.walking(cadence: 1.6), 0.2), (.walking, 0.2), (.walking(cadence: 2.2), 0.2), (.running, 0.9),
    ]

    @Test("Walking and running bounce at the requested cadence", arguments: gaits)
    func cadence(gait: Gait, bounce: Double) throws {
        var scenario = Scenario(name: "gait", start: .portrait, heading: -0.5)
        scenario.append(.hold(1))
        scenario.append(.gait(gait, duration: 12))
        scenario.append(.hold(1))
        let samples = Array(try simulate(scenario, SimulationOptions(seed: 8)))
        let label = scenario.segments[1]
        #expect(label.kind == gait.name && !label.isShake)
        #expect(label.expectedOrientation == .portrait)
        let down = NamedOrientation.portrait.gravity.vector
        let inside = samples.filter { $0.timestamp > label.start + 0.6 && $0.timestamp < label.end - 0.6 }
        // Vertical user acceleration: the reading's component along gravity, minus 1 g.
        let vertical = inside.map { dot($0.acceleration!.vector, down) - 1 }
        let edges = risingEdges(vertical, times: inside.map(\.timestamp), threshold: 0.25 * bounce)
        let measured = Double(edges.count - 1) / (edges.last! - edges.first!)
        #expect(abs(measured - gait.cadence) / gait.cadence < 0.01)
        let peak = vertical.map(abs).max()!
        #expect(peak > 0.9 * bounce && peak < 1.4 * bounce)
        // The wobble shows on the gyroscope but stays small.
        let rates = inside.map { length($0.rotationRate!.vector) }
        #expect(rates.max()! > 0.5 * gait.wobble * 2 * .pi * gait.cadence * 0.5)
        #expect(rates.max()! < 3 * gait.wobble * 2 * .pi * gait.cadence)
    }

    @Test("A tap is a short impulse of the requested peak on its axis")
    func tap() throws {
        var scenario = Scenario(name: "tap", start: .faceUp)
        scenario.append(.hold(0.5))
        scenario.append(.tap(axis: .z, peak: -2, width: 0.02))
        scenario.append(.hold(0.5))
        let all = try frames(scenario, .noiseless(rate: 1000))
        let label = scenario.segments[1]
        let eventTime = try #require(label.eventTime)
        #expect(abs(eventTime - (0.5 + Segment.tapOffset + 0.01)) < 1e-12)
        let z = all.map(\.userAcceleration.z)
        let strongest = z.indices.min { z[$0] < z[$1] }!
        #expect(abs(z[strongest] + 2) < 1e-3)
        #expect(abs(all[strongest].sample.timestamp - eventTime) < 0.0011)
        // Non-zero only during the impulse and its rebound (3 widths).
        let active = all.filter { abs($0.userAcceleration.z) > 1e-9 }.map(\.sample.timestamp)
        #expect(active.first! >= 0.55 && active.last! <= 0.55 + 0.06)
        // No net change of velocity: the impulse and rebound cancel.
        let impulse = z.reduce(0, +) / 1000
        #expect(abs(impulse) < 1e-4)
    }

    @Test("Setting down onto a table: the attitude reaches face up and the impact reads 1 + bump g")
    func setDown() throws {
        var scenario = Scenario(name: "setDown", start: .portrait)
        scenario.append(.setDown(onto: .faceUp, heading: 0.3, bump: 1.5, duration: 1.2))
        scenario.append(.hold(0.5))
        let all = try frames(scenario, .noiseless(rate: 1000))
        let label = scenario.segments[0]
        #expect(!label.isSteady && label.expectedOrientation == nil)
        #expect(label.endAttitude.angle(to: NamedOrientation.faceUp.attitude(heading: 0.3)) < 1e-12)
        let impact = try #require(label.eventTime)
        let z = all.map { $0.sample.acceleration!.z }
        let strongest = z.indices.min { z[$0] < z[$1] }!
        #expect(abs(z[strongest] + 2.5) < 1e-3)
        #expect(abs(all[strongest].sample.timestamp - impact) < 0.0011)
        // At rest afterwards.
        for frame in all where frame.sample.timestamp > impact + 0.05 {
            #expect(maxDifference(frame.sample.acceleration!.vector, SIMD3(0, 0, -1)) < 1e-12)
            #expect(length(frame.sample.rotationRate!.vector) == 0)
        }
    }

    @Test("A vibration adds a tone and broadband noise but no offset")
    func vibration() throws {
        var scenario = Scenario(name: "buzz", start: .faceUp)
        scenario.append(.vibration(duration: 20, amplitude: 0.2, frequency: 170, axis: .x))
        let all = try frames(scenario, .noiseless())
        let user = all.map(\.userAcceleration.vector)
        let m = mean(user)
        #expect(length(m) < 0.01)
        let power = user.reduce(SIMD3<Double>.zero) { $0 + $1 * $1 } / Double(user.count)
        // Tone of 0.2 g (mean square 0.02) plus noise σ = 0.1 g (0.01) along x; noise only on y and z.
        #expect(abs(power.x - 0.03) < 0.003)
        #expect(abs(power.y - 0.01) < 0.001)
        #expect(abs(power.z - 0.01) < 0.001)
        #expect(user.allSatisfy { length($0) < 1.5 })
        #expect(all.allSatisfy { length($0.sample.rotationRate!.vector) == 0 })
    }
}

func index(_ axis: DeviceAxis) -> Int {
    switch axis {
    case .x: 0
    case .y: 1
    case .z: 2
    }
}
