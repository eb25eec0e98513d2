import MotionAlgorithms
import RealModule
import Testing
import TestThreads

extension OrientationClassifier {
    /// Runs the samples through the classifier and returns every change.
    mutating func changes(_ samples: [(t: Double, a: SIMD3<Double>)]) -> [Change] {
        samples.compactMap { update(SIMD3<Scalar>(Scalar($0.a.x), Scalar($0.a.y), Scalar($0.a.z)), at: $0.t) }
    }
}

/// `OrientationClassifier` on hand-built signals: every threshold at and around its value, no flapping, and
/// agreement with iio-sensor-proxy's rules on settled inputs.
@Suite(.computeBound) struct OrientationClassifierTests {
    static let portrait = SIMD3<Double>(0, -1, 0)
    static let neighbours: [(DeviceOrientation, SIMD3<Double>)] = [
        (.landscapeLeft, SIMD3(-1, 0, 0)), (.landscapeRight, SIMD3(1, 0, 0)), (.faceUp, SIMD3(0, 0, -1)),
        (.faceDown, SIMD3(0, 0, 1)),
    ]

    /// Gravity tilted θ degrees from upright portrait towards the sky (screen up for θ > 0).
    static func tilted(_ theta: Double) -> SIMD3<Double> {
        direction(from: portrait, towards: SIMD3(0, 0, -1), degrees: theta)
    }

    @Test func theFirstOrientationSettlesAfterTheSettleTime() {
        for settle in [0.5, 0.2] {
            var classifier = OrientationClassifier<Double>(configuration: .init(settleTime: settle))
            let changes = classifier.changes(EventSignal.hold(Self.portrait, for: 2).samples())
            #expect(changes.count == 1)
            #expect(changes.first?.timestamp == settle)
            #expect(changes.first?.orientation == .portrait)
            #expect(changes.first?.previousOrientation == .unknown)
            #expect(changes.first?.tilt == .vertical)
            #expect(changes.first?.previousTilt == .undefined)
            #expect(changes.first?.iioSensorProxyOrientation == .normal)
            #expect(changes.first?.previousIIOSensorProxyOrientation == .undefined)
        }
        var classifier = OrientationClassifier<Double>()
        #expect(classifier.orientation == .unknown)
        #expect(classifier.tilt == .undefined)
        #expect(classifier.iioSensorProxyOrientation == .undefined)
        #expect(classifier.changes(EventSignal.hold(Self.portrait, for: 0.49).samples()).isEmpty)
    }

    @Test(arguments: [
        (15.0, 59.0, false), (15.0, 61.0, true), (5.0, 49.0, false), (5.0, 51.0, true), (0.0, 44.0, false),
        (0.0, 46.0, true),
    ])
    func aNeighbourIsTakenOnlyPastTheDeadZone(hysteresis: Double, angle: Double, changes: Bool) {
        for (neighbour, vector) in Self.neighbours {
            let target = direction(from: Self.portrait, towards: vector, degrees: angle)
            let signal = EventSignal.hold(Self.portrait, for: 1.5).then(.hold(target, for: 3))
            var classifier = OrientationClassifier<Double>(configuration: .init(hysteresis: hysteresis * .pi / 180))
            let found = classifier.changes(signal.samples(noise: 0.003)).filter(\.orientationChanged).map(\.orientation)
            #expect(
                found == (changes ? [.portrait, neighbour] : [.portrait]),
                "\(angle)° towards \(neighbour), h = \(hysteresis)°")
        }
    }

    @Test func fromUnknownTheNearestWithin45DegreesIsTaken() {
        var near = OrientationClassifier<Double>()
        let g = direction(from: Self.portrait, towards: SIMD3(1, 0, 0), degrees: 44)
        #expect(near.changes(EventSignal.hold(g, for: 2).samples()).map(\.orientation) == [.portrait])
        // Equally far (54.7°) from portrait, landscape left and face up: nothing.
        var corner = OrientationClassifier<Double>()
        let c = SIMD3<Double>(-1, -1, -1) / 3.0.squareRoot()
        #expect(corner.changes(EventSignal.hold(c, for: 3).samples()).allSatisfy { !$0.orientationChanged })
        #expect(corner.orientation == .unknown)
    }

    @Test(arguments: [(1.19, true), (0.81, true), (1.21, false), (0.79, false)])
    func noChangeWhileTheMagnitudeIsFarFromOneG(magnitude: Double, changes: Bool) {
        let signal = EventSignal.hold(Self.portrait, for: 1).then(.hold(SIMD3(-magnitude, 0, 0), for: 3))
        var classifier = OrientationClassifier<Double>()
        let found = classifier.changes(signal.samples()).map(\.orientation)
        #expect(found == (changes ? [.portrait, .landscapeLeft] : [.portrait]))
        #expect(classifier.isAccelerating == !changes)
    }

    @Test func aBumpRestartsTheSettleTime() {
        // Landscape from t = 1; a 2 g bump at t = 1.5.
        let bumped = EventSignal(duration: 4) { t in
            t < 1 ? Self.portrait : (t >= 1.5 && t < 1.51 ? SIMD3(-2, 0, 0) : SIMD3(-1, 0, 0))
        }
        var classifier = OrientationClassifier<Double>()
        let changes = classifier.changes(bumped.samples())
        #expect(changes.map(\.orientation) == [.portrait, .landscapeLeft])
        // Without the bump landscape settles at about 1.8 s; with it, half a second after the bump.
        #expect(changes.last?.timestamp == 2)
        var unbumped = OrientationClassifier<Double>()
        let plain = EventSignal.hold(Self.portrait, for: 1).then(.hold(SIMD3(-1, 0, 0), for: 3))
        #expect(unbumped.changes(plain.samples()).last.map { $0.timestamp > 1.6 && $0.timestamp < 1.95 } == true)
    }

    /// Turning in the plane of the screen at `rate` degrees per second from portrait to upside down.
    static func turn(rate: Double) -> EventSignal {
        let duration = 180 / rate
        return EventSignal.hold(portrait, for: 1)
            .then(
                EventSignal(duration: duration) { t in
                    direction(from: portrait, towards: SIMD3(-1, 0, 0), degrees: rate * t)
                }
            )
            .then(.hold(-portrait, for: 2))
    }

    @Test func aTurnPassingThroughAnOrientationDoesNotReportIt() {
        for rate in [90.0, 45.0, 25.0] {
            var classifier = OrientationClassifier<Double>()
            let found = classifier.changes(Self.turn(rate: rate).samples(noise: 0.005)).map(\.orientation)
            #expect(found == [.portrait, .portraitUpsideDown], "\(rate)°/s")
        }
        // Slower than the stability angle allows (10° per settle time, 20°/s): the device is held in landscape
        // long enough to report it.
        var slow = OrientationClassifier<Double>()
        #expect(
            slow.changes(Self.turn(rate: 15).samples()).map(\.orientation) == [
                .portrait, .landscapeLeft, .portraitUpsideDown,
            ])
    }

    @Test(arguments: [45.0, 44.0, 46.0, 40.0, 50.0])
    func noisyHoldsNearABoundaryDoNotFlap(angle: Double) {
        // Start settled on either side, then hold near the portrait/landscape and portrait/face-up boundaries.
        for (_, vector) in [Self.neighbours[0], Self.neighbours[2]] {
            let near = direction(from: Self.portrait, towards: vector, degrees: angle)
            for start in [Self.portrait, vector] {
                let signal = EventSignal.hold(start, for: 1.5).then(.hold(near, for: 60))
                var classifier = OrientationClassifier<Double>()
                let changes = classifier.changes(signal.samples(noise: 0.03, seed: UInt64(angle)))
                #expect(changes.filter(\.orientationChanged).count == 1, "\(angle)° from \(start)")
            }
        }
        // From unknown, straight onto the boundary: one orientation, then no flapping.
        var classifier = OrientationClassifier<Double>()
        let near = direction(from: Self.portrait, towards: SIMD3(-1, 0, 0), degrees: angle)
        #expect(
            classifier.changes(EventSignal.hold(near, for: 60).samples(noise: 0.03)).filter(\.orientationChanged).count
                <= 1)
    }

    @Test(arguments: [0.0, 25.0, 40.0, 45.0, 50.0])
    func noChangeWhileCarried(back: Double) {
        // Settled, then walking and running, carried tilted back (45° is on the portrait/face-up boundary).
        let start = Self.tilted(back)
        for gait in [
            ShakeDetectorTests.gait(bounce: 0.2, sway: 0.06, surge: 0.1, cadence: 1.9, back: back),
            ShakeDetectorTests.gait(bounce: 0.9, sway: 0.2, surge: 0.3, cadence: 2.8, back: back),
        ] {
            let signal = EventSignal.hold(start, for: 1.5).then(gait).then(gait)
            var classifier = OrientationClassifier<Double>()
            let changes = classifier.changes(signal.samples(noise: 0.005))
            #expect(changes.filter(\.orientationChanged).count == 1, "carried \(back)° back")
        }
    }

    @Test(arguments: [
        (0.0, 24.0, IIOSensorProxyTilt.vertical), (0, 26, .tiltedUp), (0, -26, .tiltedDown), (40, 16, .tiltedUp),
        (40, 14, .vertical), (40, 74, .tiltedUp), (40, 76, .faceUp), (85, 66, .faceUp), (85, 64, .tiltedUp),
        (-85, -66, .faceDown), (-85, -64, .tiltedDown), (-40, -76, .faceDown), (-40, -16, .tiltedDown),
    ])
    func tiltDeadZonesAroundIIOSensorProxysBoundaries(from start: Double, to end: Double, expected: IIOSensorProxyTilt)
    {
        let signal = EventSignal.hold(Self.tilted(start), for: 1.5).then(.hold(Self.tilted(end), for: 3))
        var classifier = OrientationClassifier<Double>()
        _ = classifier.changes(signal.samples(noise: 0.002))
        #expect(classifier.tilt == expected)
    }

    @Test func iioSensorProxyOrientationIsKeptWhileFlat() {
        let signal = EventSignal.hold(Self.portrait, for: 1.5).then(.hold(SIMD3(0, 0, -1), for: 1.5))
            .then(.hold(SIMD3(1, 0, 0), for: 1.5)).then(.hold(SIMD3(0, 0, 1), for: 1.5))
        var classifier = OrientationClassifier<Double>()
        let changes = classifier.changes(signal.samples())
        #expect(changes.map(\.orientation) == [.portrait, .faceUp, .landscapeRight, .faceDown])
        #expect(changes.map(\.iioSensorProxyOrientation) == [.normal, .normal, .leftUp, .leftUp])
        #expect(changes.map(\.iioSensorProxyOrientationChanged) == [true, false, true, false])
        #expect(changes.map(\.tilt) == [.vertical, .faceUp, .vertical, .faceDown])
    }

    @Test func aGapRestartsTheFilter() {
        var classifier = OrientationClassifier<Double>()
        _ = classifier.changes(EventSignal.hold(Self.portrait, for: 2).samples())
        let after = classifier.changes(EventSignal.hold(SIMD3(-1, 0, 0), for: 2).samples(start: 4))
        #expect(after.map(\.orientation) == [.landscapeLeft])
        #expect(after.first?.previousOrientation == .portrait)
        #expect(after.first?.timestamp == 4.5)
    }

    @Test func ignoresNonFiniteAndRepeatedSamples() {
        var classifier = OrientationClassifier<Double>()
        #expect(classifier.update(Self.portrait, at: 0) == nil)
        #expect(classifier.update(SIMD3(.nan, 0, 0), at: 0.1) == nil)
        #expect(classifier.update(SIMD3(-1, 0, 0), at: 0) == nil)
        #expect(classifier.update(Self.portrait, at: .infinity) == nil)
        #expect(classifier.gravity == Self.portrait)
        #expect(classifier.update(Self.portrait, at: 0.5)?.orientation == .portrait)
        classifier.reset()
        #expect(classifier.orientation == .unknown)
        #expect(classifier.gravity == .zero)
    }

    @Test func worksInFloat() {
        var classifier = OrientationClassifier<Float>()
        let signal = EventSignal.hold(Self.portrait, for: 1.5).then(.hold(SIMD3(1, 0, 0), for: 1.5))
            .then(.hold(SIMD3(0, 1, 0), for: 1.5))
        #expect(
            classifier.changes(signal.samples(noise: 0.01)).map(\.orientation)
                == [.portrait, .landscapeRight, .portraitUpsideDown])
    }

    @Test func configurationDefaults() {
        let c = OrientationClassifier<Double>.Configuration()
        #expect(c.cutoff == 1)
        #expect(abs(c.hysteresis - 15 * .pi / 180) < 1e-15)
        #expect(abs(c.tiltHysteresis - 5 * .pi / 180) < 1e-15)
        #expect(c.settleTime == 0.5)
        #expect(abs(c.stabilityAngle - 10 * .pi / 180) < 1e-15)
        #expect(c.accelerationTolerance == 0.2)
        #expect(c.maximumGap == 1)
    }

    /// On settled inputs away from the boundaries, the classifier's iio-sensor-proxy names agree with
    /// iio-sensor-proxy's own rules: the orientation exactly, and the tilt once z is negated (our consistent
    /// sign; see `IIOSensorProxyTilt`).
    @Test func agreesWithIIOSensorProxyOnSettledInputs() {
        var random = NoiseGenerator(seed: 40119)
        var compared = 0
        for _ in 0..<400 {
            let v = SIMD3(random.gaussian(), random.gaussian(), random.gaussian())
            let g = v / (v * v).sum().squareRoot()
            let tiltDegrees = Double.asin(-g.z) * 180 / .pi
            // Away from the tilt boundaries (20°, 70°) and the orientation cones' edges.
            guard [20.0, 70].allSatisfy({ abs(abs(tiltDegrees) - $0) > 1.5 }) else { continue }
            var classifier = OrientationClassifier<Double>()
            _ = classifier.changes(EventSignal.hold(g, for: 2).samples())
            let reading = g * 9.81
            let flipped = SIMD3(reading.x, reading.y, -reading.z)
            #expect(classifier.tilt == IIOSensorProxyReference.tilt(reading: flipped), "\(g)")
            let reference = IIOSensorProxyReference.orientation(reading: reading, previous: .undefined)
            if classifier.orientation.isUpright && DeviceOrientation.nearest(to: g).cosine > Double.cos(.pi / 5) {
                #expect(classifier.iioSensorProxyOrientation == reference, "\(g)")
                compared += 1
            }
        }
        #expect(compared > 50)
    }
}
