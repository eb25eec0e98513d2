import MotionCore
import MotionTesting
import Testing
import TestThreads

@Suite("Named orientations and frame conventions", .computeBound)
struct OrientationTests {
    /// The pinned readings at rest (g, Core Motion sign: the vector points along gravity in the device frame).
    /// - portrait: top (+y) up, gravity along −y.
    /// - portraitUpsideDown: top down, gravity along +y.
    /// - landscapeLeft: right side (+x) up, home button on the right, gravity along −x.
    /// - landscapeRight: left side up, gravity along +x.
    /// - faceUp: screen (+z) to the sky, gravity along −z.
    /// - faceDown: screen to the ground, gravity along +z.
    static let expectedReadings: [(NamedOrientation, SIMD3<Double>)] = [
        (.portrait, SIMD3(0, -1, 0)),
        (.portraitUpsideDown, SIMD3(0, 1, 0)),
        (.landscapeLeft, SIMD3(-1, 0, 0)),
        (.landscapeRight, SIMD3(1, 0, 0)),
        (.faceUp, SIMD3(0, 0, -1)),
        (.faceDown, SIMD3(0, 0, 1)),
    ]

    @Test("Each orientation's attitude puts gravity where its reading says", arguments: expectedReadings)
    func attitudeMatchesReading(orientation: NamedOrientation, reading: SIMD3<Double>) {
        #expect(orientation.gravity.vector == reading)
        #expect(maxDifference(orientation.attitude.gravity.vector, reading) < 1e-12)
        // The device axis that points up in the world is minus the reading.
        let up = orientation.attitude.quaternion.act(on: -reading)
        #expect(maxDifference(up, SIMD3(0, 0, 1)) < 1e-12)
        // The heading turns the device about the vertical without changing gravity in the device frame.
        #expect(maxDifference(orientation.attitude(heading: 1.3).gravity.vector, reading) < 1e-12)
        let nearest = NamedOrientation.nearest(to: orientation.attitude)
        #expect(nearest.orientation == orientation)
        #expect(nearest.angle < 1e-6)
    }

    @Test("Core Motion's documented readings: upright portrait (0, −1, 0), flat face up (0, 0, −1)")
    func coreMotionAnchors() {
        #expect(Attitude.identity.gravity.vector == SIMD3(0, 0, -1))
        #expect(NamedOrientation.faceUp.attitude == .identity)
        // Portrait is pitch +90°: the top of the device raised from face up.
        #expect(abs(NamedOrientation.portrait.attitude.pitch - .pi / 2) < 1e-12)
        // Landscape left: the device's right edge points up, so the home button (bottom, −y) is on the right
        // and the top (+y) points to the user's left; the screen keeps facing the same way as in portrait.
        let landscape = NamedOrientation.landscapeLeft.attitude.quaternion
        let portrait = NamedOrientation.portrait.attitude.quaternion
        #expect(maxDifference(landscape.act(on: SIMD3(1, 0, 0)), SIMD3(0, 0, 1)) < 1e-12)
        #expect(maxDifference(landscape.act(on: SIMD3(0, 0, 1)), portrait.act(on: SIMD3(0, 0, 1))) < 1e-12)
        #expect(maxDifference(landscape.act(on: SIMD3(0, 1, 0)), -portrait.act(on: SIMD3(1, 0, 0))) < 1e-12)
    }

    @Test(
        "At rest, the mean accelerometer reading equals the orientation's gravity within noise",
        arguments: expectedReadings)
    func restingReading(orientation: NamedOrientation, reading: SIMD3<Double>) throws {
        var scenario = Scenario(name: "rest", start: orientation, heading: 0.7)
        scenario.append(.hold(3))
        let options = SimulationOptions(sensors: .all, seed: 11)
        let samples = Array(try simulate(scenario, options))
        #expect(samples.count == 300)
        let accelerations = samples.compactMap { $0.acceleration?.vector }
        #expect(accelerations.count == 300)
        // Noise 0.005 g per axis: the mean of 300 has a standard deviation of 0.0003 g.
        #expect(maxDifference(mean(accelerations), reading) < 0.0015)
        let rates = samples.compactMap { $0.rotationRate?.vector }
        #expect(length(mean(rates)) < 0.001)
        let spread = accelerations.map { length($0 - reading) }.max() ?? 0
        #expect(spread > 0.001 && spread < 0.05, "noise is present but small")
    }

    @Test("Nearest orientation of tilted attitudes, up to the 45° boundary")
    func nearestOrientation() {
        let tilt = Quaternion<Double>(angle: 0.6, axis: SIMD3(1, 0, 0))
        let tilted = Attitude(quaternion: tilt * NamedOrientation.faceUp.attitude.quaternion)
        let nearest = NamedOrientation.nearest(to: tilted)
        #expect(nearest.orientation == .faceUp)
        #expect(abs(nearest.angle - 0.6) < 1e-9)
        let pastBoundary = Quaternion<Double>(angle: 0.9, axis: SIMD3(1, 0, 0))
        let other = NamedOrientation.nearest(
            to: Attitude(quaternion: pastBoundary * NamedOrientation.faceUp.attitude.quaternion))
        #expect(other.orientation != .faceUp)
        #expect(abs(other.angle - (.pi / 2 - 0.9)) < 1e-9)
    }

    @Test("Magnetometer: Earth's field rotated into the device frame, constant length and dip")
    func magnetometer() throws {
        let sweep = try frames(.orientationSweep(), .noiseless(rate: 50))
        let field = SIMD3<Double>(20, 0, -43)
        let first = try #require(sweep.first?.sample.magneticField?.vector)
        // Portrait (pitch +90°): device x = north, device y = up, device z = east.
        #expect(maxDifference(first, SIMD3(20, -43, 0)) < 1e-9)
        for frame in sweep {
            let b = try #require(frame.sample.magneticField?.vector)
            #expect(abs(length(b) - length(field)) < 1e-9)
            // The field's component along gravity is the downward 43 µT whatever the attitude.
            #expect(abs(dot(b, frame.gravity.vector) - 43) < 1e-9)
        }
        var faceUp = Scenario(name: "faceUp", start: .faceUp)
        faceUp.append(.hold(0.1))
        let flat = try #require(try frames(faceUp, .noiseless()).first?.sample.magneticField?.vector)
        #expect(maxDifference(flat, field) < 1e-12)
    }
}
