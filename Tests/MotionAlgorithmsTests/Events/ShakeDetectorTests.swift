import RealModule
import Testing
import TestThreads

@testable import MotionAlgorithms

/// `ShakeDetector` on hand-built signals: phases, every threshold at and around its value, and distractors.
@Suite(.computeBound) struct ShakeDetectorTests {
    static let portrait = SIMD3<Double>(0, -1, 0)
    static let axes: [(ShakeEvent.Axis, SIMD3<Double>)] = [
        (.x, SIMD3(1, 0, 0)), (.y, SIMD3(0, 1, 0)), (.z, SIMD3(0, 0, 1)),
    ]

    /// One second still, the signal, two seconds still.
    static func framed(_ signal: EventSignal, gravity: SIMD3<Double> = portrait) -> EventSignal {
        EventSignal.hold(gravity, for: 1).then(signal).then(.hold(gravity, for: 2))
    }

    // MARK: Phases

    @Test(arguments: [0, 1, 2])
    func aShortShakeBeginsAndEndsWithItsAxis(axisIndex: Int) {
        let (axis, vector) = Self.axes[axisIndex]
        for gravity in [Self.portrait, SIMD3(0, 0, -1), SIMD3(-1, 0, 0)] {
            let signal = Self.framed(
                .shake(along: vector, frequency: 4, amplitude: 1.5, cycles: 3, gravity: gravity), gravity: gravity)
            var detector = ShakeDetector<Double>()
            let events = detector.events(signal.samples(noise: 0.005))
            #expect(events.map(\.phase) == [.began, .ended], "axis \(axis), gravity \(gravity)")
            #expect(events.allSatisfy { $0.axis == axis })
            // Began during the shake (1.0–1.75 s) at its third stroke; ended within the end delay after it. Three
            // cycles from one end of a stroke to the same end are seven strokes: quarter, six halves, quarter.
            #expect(events.first.map { $0.timestamp > 1.15 && $0.timestamp < 1.4 && $0.strokes == 3 } == true)
            #expect(events.last.map { $0.timestamp > 1.75 && $0.timestamp < 1.75 + 0.45 } == true)
            #expect(events.last.map { $0.startTime >= 1 && $0.startTime < 1.05 && $0.strokes == 7 } == true)
            #expect(events.last.map { abs($0.peakAcceleration - 1.5) < 0.3 } == true)
            #expect(!detector.isShaking)
        }
    }

    @Test func worksInFloat() {
        let signal = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 5, amplitude: 2, cycles: 4))
        var detector = ShakeDetector<Float>()
        #expect(detector.events(signal.samples(noise: 0.005)).map(\.phase) == [.began, .ended])
    }

    @Test func aLongShakeIsCancelledOnceThenBeginsAgainAfterAPause() {
        let shake = EventSignal.shake(along: SIMD3(0, 0, 1), frequency: 4, amplitude: 1.5, cycles: 8)  // 2 s
        let signal = Self.framed(shake).then(shake).then(.hold(Self.portrait, for: 1))
        var detector = ShakeDetector<Double>()
        let events = detector.events(signal.samples())
        #expect(events.map(\.phase) == [.began, .cancelled(.tooLong), .began, .cancelled(.tooLong)])
        // Cancelled at the first stroke that starts more than 1 s after the first one.
        let cancel = events[1]
        #expect(cancel.timestamp - cancel.startTime > 1 && cancel.timestamp - cancel.startTime <= 1.13)
    }

    @Test(arguments: [(0.8, true), (1.2, false), (2.1, false)])
    func theMaximumDurationDecidesBetweenEndedAndCancelled(duration: Double, ends: Bool) {
        // Strokes start every 0.125 s at 4 Hz; the last starts (duration − 0.125) s after the first.
        let signal = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: duration * 4))
        for limit in [1.0, 2.5] {
            var detector = ShakeDetector<Double>(configuration: .init(maximumDuration: limit))
            let phases = detector.events(signal.samples()).map(\.phase)
            let expectEnded = duration - 0.125 <= limit
            #expect(
                phases == [.began, expectEnded ? .ended : .cancelled(.tooLong)], "duration \(duration), limit \(limit)")
            if limit == 1 { #expect(expectEnded == ends) }
        }
    }

    // MARK: Thresholds at and around their values

    /// The smallest of the first three stroke peaks of the filtered linear acceleration along the shake axis:
    /// the threshold at which a one-cycle shake stops being detected.
    static func criticalThreshold(_ samples: [(t: Double, a: SIMD3<Double>)], axis: SIMD3<Double>) -> Double {
        var detector = ShakeDetector<Double>()
        var peaks: [Double] = []
        var current = 0.0
        for sample in samples {
            _ = detector.update(sample.a, at: sample.t)
            let value = (detector.linearAcceleration * axis).sum()
            if abs(value) < 0.05 { continue }
            if current != 0 && (value > 0) != (current > 0) {
                peaks.append(abs(current))
                current = value
            } else if abs(value) > abs(current) {
                current = value
            }
        }
        peaks.append(abs(current))
        return peaks.prefix(3).min() ?? 0
    }

    @Test(arguments: [(2.0, 0.5), (2.0, 3.0), (5.0, 1.0), (8.0, 0.5), (8.0, 3.0)])
    func thresholdAtAndAroundTheStrokePeaks(frequency: Double, amplitude: Double) {
        // One full cycle: exactly the three strokes a shake needs.
        let signal = Self.framed(.shake(along: SIMD3(0, 1, 0), frequency: frequency, amplitude: amplitude, cycles: 1))
        let samples = signal.samples()
        let critical = Self.criticalThreshold(samples, axis: SIMD3(0, 1, 0))
        #expect(critical > 0.3, "the default threshold detects a \(amplitude) g shake at \(frequency) Hz")
        for (factor, detected) in [(0.98, true), (1.02, false)] {
            var detector = ShakeDetector<Double>(configuration: .init(threshold: critical * factor))
            let began = detector.events(samples).contains { $0.phase == .began }
            #expect(began == detected, "threshold \(factor) × \(critical)")
        }
    }

    @Test(arguments: [(1.4, false), (1.6, true), (9.5, true), (10.5, false)])
    func frequencyBandEdges(frequency: Double, detected: Bool) {
        // 1 kHz sampling so stroke timing is not quantised; a strong shake so filtering does not matter.
        let signal = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: frequency, amplitude: 2, cycles: 4))
        var detector = ShakeDetector<Double>(configuration: .init(maximumDuration: 5))
        let began = detector.events(signal.samples(rate: 1000)).contains { $0.phase == .began }
        #expect(began == detected, "\(frequency) Hz in a 1.5–10 Hz band")
    }

    @Test(arguments: [(2, 1.0, true), (3, 1.0, false), (3, 1.5, true), (1, 0.5, true), (2, 0.5, false)])
    func minimumReversals(reversals: Int, cycles: Double, detected: Bool) {
        // A shake of n strokes (half cycles) has n − 1 reversals.
        let signal = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 3, amplitude: 1.5, cycles: cycles))
        var detector = ShakeDetector<Double>(configuration: .init(minimumReversals: reversals))
        let began = detector.events(signal.samples()).contains { $0.phase == .began }
        #expect(began == detected, "\(reversals) reversals, \(cycles) cycles")
    }

    /// A motion along x with a quadrature component along y of relative size r: an ellipse whose energy is
    /// 1/(1 + r²) along its major axis.
    static func ellipse(ratio r: Double, cycles: Double) -> EventSignal {
        EventSignal(duration: cycles / 4) { t in
            let phase = 2 * Double.pi * 4 * t
            return portrait + 1.5 * SIMD3(Double.cos(phase), r * Double.sin(phase), 0)
        }
    }

    @Test(arguments: [(0.10, true), (0.13, true), (0.23, false), (0.4, false), (1.0, false)])
    func linearityAroundItsLimit(ratio: Double, detected: Bool) {
        // 1/(1 + r²) = 0.97 at r ≈ 0.176.
        let signal = Self.framed(Self.ellipse(ratio: ratio, cycles: 3))
        var detector = ShakeDetector<Double>()
        let began = detector.events(signal.samples()).contains { $0.phase == .began }
        #expect(began == detected, "ratio \(ratio): linearity ≈ \(1 / (1 + ratio * ratio))")
        var lenient = ShakeDetector<Double>(configuration: .init(minimumLinearity: 0.4))
        #expect(lenient.events(signal.samples()).contains { $0.phase == .began })
    }

    /// A wrist roll with the device face up: ±Θ about the device's y axis swings gravity through x (along one
    /// line) and z (at twice the frequency, off the line).
    static func wristRoll(degrees: Double, frequency: Double) -> EventSignal {
        EventSignal(duration: 2) { t in
            let theta = degrees * .pi / 180 * Double.sin(2 * .pi * frequency * t)
            return SIMD3(-Double.sin(theta), 0, -Double.cos(theta))
        }
    }

    @Test(arguments: [2.0, 3, 5])
    func wristRollsOfAboutThirtyDegreesAreShakesAndWiderOnesNeedALowerLinearity(frequency: Double) {
        let faceUp = SIMD3<Double>(0, 0, -1)
        let configuration = ShakeDetector<Double>.Configuration(maximumDuration: 5)
        var moderate = ShakeDetector<Double>(configuration: configuration)
        let roll30 = Self.framed(Self.wristRoll(degrees: 30, frequency: frequency), gravity: faceUp).samples()
        #expect(moderate.events(roll30).map(\.phase) == [.began, .ended])
        // ±45° puts about 5 % of the energy off the line at 2–3 Hz: below the default 0.97.
        let roll45 = Self.framed(Self.wristRoll(degrees: 45, frequency: frequency), gravity: faceUp).samples()
        var strict = ShakeDetector<Double>(configuration: configuration)
        var lenient = ShakeDetector<Double>(configuration: .init(minimumLinearity: 0.9, maximumDuration: 5))
        if frequency < 4 { #expect(strict.events(roll45).isEmpty) }
        #expect(lenient.events(roll45).map(\.phase) == [.began, .ended])
    }

    @Test func aShakeThatStopsBeingAlongOneLineIsCancelledAsNotAShake() {
        let line = EventSignal.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: 2)
        let circle = Self.ellipse(ratio: 1, cycles: 4)
        let signal = Self.framed(line.then(circle).then(circle))
        var detector = ShakeDetector<Double>(configuration: .init(maximumDuration: 5))
        #expect(detector.events(signal.samples()).map(\.phase) == [.began, .cancelled(.notAShake)])
    }

    // MARK: Interruptions and input hygiene

    @Test func cancelInterruptsAShakeInProgressOnly() {
        let samples = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: 3)).samples()
        var detector = ShakeDetector<Double>()
        #expect(detector.cancel(at: 0) == nil)
        let during = samples.filter { $0.t < 1.5 }
        #expect(detector.events(during).map(\.phase) == [.began])
        let event = detector.cancel(at: 1.5)
        #expect(event?.phase == .cancelled(.interrupted))
        #expect(event?.timestamp == 1.5)
        #expect(!detector.isShaking)
        // The strokes seen are forgotten: what remains of the shake (four strokes) is a new shake.
        let rest = detector.events(samples.filter { $0.t > 1.5 })
        #expect(rest.map(\.phase) == [.began, .ended])
        #expect(rest.first.map { $0.startTime > 1.5 } == true)
    }

    @Test func aGapInTheSamplesInterruptsAShake() {
        let samples = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: 3)).samples()
        var detector = ShakeDetector<Double>()
        let before = detector.events(samples.filter { $0.t < 1.5 })
        #expect(before.map(\.phase) == [.began])
        let after = detector.events(samples.filter { $0.t >= 2.1 }.map { ($0.t + 1, $0.a) })
        #expect(after.map(\.phase) == [.cancelled(.interrupted)])
    }

    @Test func ignoresNonFiniteAndRepeatedSamples() {
        var detector = ShakeDetector<Double>()
        #expect(detector.update(SIMD3(0, -1, 0), at: 0) == nil)
        #expect(detector.update(SIMD3(.nan, -1, 0), at: 0.01) == nil)
        #expect(detector.update(SIMD3(0, .infinity, 0), at: 0.02) == nil)
        #expect(detector.update(SIMD3(0, -1, 0), at: .nan) == nil)
        #expect(detector.update(SIMD3(5, -1, 0), at: 0) == nil)
        #expect(detector.update(SIMD3(5, -1, 0), at: -1) == nil)
        #expect(detector.linearAcceleration == .zero)
        #expect(detector.gravity == SIMD3(0, -1, 0))
        // A real shake still works afterwards.
        let samples = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: 3)).samples(
            start: 1)
        #expect(detector.events(samples).map(\.phase) == [.began, .ended])
    }

    @Test func resetForgetsEverything() {
        let samples = Self.framed(.shake(along: SIMD3(1, 0, 0), frequency: 4, amplitude: 1.5, cycles: 3)).samples()
        var detector = ShakeDetector<Double>()
        _ = detector.events(samples.filter { $0.t < 1.5 })
        #expect(detector.isShaking)
        detector.reset()
        #expect(!detector.isShaking)
        #expect(detector.gravity == .zero)
    }

    // MARK: Distractors (hand-built; the simulator's are in motionctlTests/EventCommandTests)

    @Test(arguments: [0.5, 1.5, 3.0])
    func tapsAreNotShakes(peak: Double) {
        for (_, axis) in Self.axes {
            for width in [0.01, 0.02, 0.03] {
                // A half-sine impulse and a rebound of half the height and twice the width.
                let tap = EventSignal(duration: 0.3) { t in
                    let value: Double =
                        t < width
                        ? peak * Double.sin(.pi * t / width)
                        : t < 3 * width ? -peak / 2 * Double.sin(.pi * (t - width) / (2 * width)) : 0
                    return Self.portrait + value * axis
                }
                let signal = Self.framed(tap.then(.hold(Self.portrait, for: 0.3)).then(tap))
                var detector = ShakeDetector<Double>()
                #expect(detector.events(signal.samples(rate: 200)).isEmpty, "peak \(peak) width \(width)")
            }
        }
    }

    /// A finger tap as real recordings show it (BROAD trial 25: a 10.8 g spike of two samples on z, then the board
    /// rings at about 4–5 Hz: −1.2 g for 0.1 s, then +0.5 g): a half-sine spike of `peak` g and `width` s, then a
    /// damped oscillation of `peak × ringing` g at `frequency` Hz that loses 60 % per half cycle, along z.
    static func ringingTap(peak: Double, width: Double, ringing: Double, frequency: Double) -> EventSignal {
        let tau = 1 / (2 * frequency * Double.log(2.5))
        return EventSignal(duration: 0.8) { t in
            let spike = t < width ? peak * Double.sin(.pi * t / width) : 0
            let u = t - width
            let ring = u > 0 ? -peak * ringing * Double.sin(2 * .pi * frequency * u) * Double.exp(-u / tau) : 0
            return SIMD3(0, 0, -1) + (spike + ring) * SIMD3(0, 0, 1)
        }
    }

    /// Samples of `signal` at `rate` Hz as a sensor with an anti-aliasing filter takes them: each reading is the
    /// mean over the sample interval before it (so a spike shorter than the interval is smeared, not missed).
    static func sensorSamples(_ signal: EventSignal, rate: Double, noise: Double) -> [(t: Double, a: SIMD3<Double>)] {
        let averaged = EventSignal(duration: signal.duration) { t in
            (0..<8).reduce(SIMD3<Double>.zero) { $0 + signal.reading(max(t - Double($1) / (8 * rate), 0)) } / 8
        }
        return averaged.samples(rate: rate, noise: noise)
    }

    @Test(arguments: [100.0, 285.7])
    func ringingTapsAreNotShakes(rate: Double) {
        // Spikes of 6–16 g and 5–10 ms (1.3–5.3 g after smoothing), rebounds of 1/8 and 1/6 of the spike ringing
        // at 3–6 Hz, three taps 0.8 s apart.
        var withBalance = 0
        var withoutBalance = 0
        for peak in [6.0, 10, 16] {
            for width in [0.005, 0.007, 0.01] {
                for ringing in [1.0 / 8, 1.0 / 6] {
                    for frequency in [3.0, 4, 5, 6] {
                        let tap = Self.ringingTap(peak: peak, width: width, ringing: ringing, frequency: frequency)
                        let signal = Self.framed(tap.then(tap).then(tap), gravity: SIMD3(0, 0, -1))
                        let samples = Self.sensorSamples(signal, rate: rate, noise: 0.005)
                        var detector = ShakeDetector<Double>()
                        withBalance += detector.events(samples).filter { $0.phase == .began }.count
                        var unbalanced = ShakeDetector<Double>(configuration: .init(minimumStrokeBalance: 0))
                        withoutBalance += unbalanced.events(samples).filter { $0.phase == .began }.count
                    }
                }
            }
        }
        #expect(withBalance == 0)
        // Without the balance test some of these taps make three strokes in the band and begin shakes, as on BROAD
        // (4 at 100 Hz, 6 at 285.7 Hz: the strongest, ringing at 5–6 Hz).
        #expect(withoutBalance >= 4, "\(withoutBalance) shakes without the balance test")
    }

    @Test(arguments: [2.0, 4, 8])
    func unevenShakesStillBegin(frequency: Double) {
        // A hand that pushes harder one way: cos ωt + 0.3 cos 2ωt, strokes of 1.3 and 0.7 (ratio 0.54).
        let uneven = EventSignal(duration: 3 / frequency) { t in
            let w = 2 * Double.pi * frequency * t
            return Self.portrait + 1.0 * (Double.cos(w) + 0.3 * Double.cos(2 * w)) * SIMD3(1, 0, 0)
        }
        var detector = ShakeDetector<Double>()
        let events = detector.events(Self.framed(uneven).samples(noise: 0.005))
        #expect(events.first?.phase == .began)
        #expect(events.count == 2)
    }

    /// A carried device: a vertical bounce at the cadence with a second harmonic, sideways sway at half of it,
    /// forwards surge, for a device in portrait tilted back by `back` degrees (forwards is out of its back).
    static func gait(bounce: Double, sway: Double, surge: Double, cadence: Double, back: Double) -> EventSignal {
        let b = back * .pi / 180
        let gravity = SIMD3(0, -Double.cos(b), -Double.sin(b))
        let up = -gravity
        let left = SIMD3<Double>(-1, 0, 0)
        let forward = SIMD3(0, -Double.sin(b), Double.cos(b))
        return EventSignal(duration: 6) { t in
            let phase = 2 * Double.pi * cadence * t
            let ramp = min(t / 0.5, 1)
            let vertical = bounce * (Double.cos(phase) + 0.25 * Double.cos(2 * phase))
            let user =
                ramp * (vertical * up + sway * Double.cos(phase / 2) * left + surge * Double.cos(phase + 0.5) * forward)
            return gravity - user
        }
    }

    @Test(arguments: [0.0, 25.0, 50.0])
    func walkingAndRunningAreNotShakes(back: Double) {
        for cadence in [1.6, 2.2] {
            let walking = Self.gait(bounce: 0.2, sway: 0.06, surge: 0.1, cadence: cadence, back: back)
            var detector = ShakeDetector<Double>()
            #expect(detector.events(walking.samples(noise: 0.005)).isEmpty, "walking at \(cadence) Hz")
        }
        for cadence in [2.5, 2.8, 3.2] {
            let running = Self.gait(bounce: 0.9, sway: 0.2, surge: 0.3, cadence: cadence, back: back)
            var detector = ShakeDetector<Double>()
            #expect(detector.events(running.samples(noise: 0.005)).isEmpty, "running at \(cadence) Hz")
        }
    }

    @Test func tiltsRotationsAndSettingDownAreNotShakes() {
        // A quarter turn about x in 0.5 s (portrait to face up), back again, then about y.
        func turn(from: SIMD3<Double>, to: SIMD3<Double>, duration: Double) -> EventSignal {
            EventSignal(duration: duration) { t in
                let u = min(max(t / duration, 0), 1)
                let s = u * u * u * (u * (u * 6 - 15) + 10)
                return direction(from: from, towards: to, degrees: 90 * s)
            }
        }
        let faceUp = SIMD3<Double>(0, 0, -1)
        let landscape = SIMD3<Double>(-1, 0, 0)
        // Set down: lowered, then a 30 ms impact of 2 g.
        let setDown = EventSignal(duration: 1) { t in
            let bump = t > 0.5 && t < 0.53 ? 2 * Double.sin(.pi * (t - 0.5) / 0.03) : 0
            return faceUp * (1 + bump)
        }
        let signal = Self.framed(
            turn(from: Self.portrait, to: faceUp, duration: 0.5).then(.hold(faceUp, for: 0.5))
                .then(turn(from: faceUp, to: Self.portrait, duration: 0.5)).then(.hold(Self.portrait, for: 0.5))
                .then(turn(from: Self.portrait, to: landscape, duration: 0.4)).then(.hold(landscape, for: 0.5))
                .then(turn(from: landscape, to: faceUp, duration: 0.6)).then(setDown),
            gravity: Self.portrait)
        var detector = ShakeDetector<Double>()
        #expect(detector.events(signal.samples(noise: 0.005)).isEmpty)
    }

    @Test func aPhoneVibrationIsNotAShake() {
        // A 170 Hz motor tone of 0.3 g (aliased at 100 Hz) with broadband noise of 0.15 g.
        var random = NoiseGenerator(seed: 7)
        let noise = (0..<300).map { _ in SIMD3(random.gaussian(), random.gaussian(), random.gaussian()) * 0.15 }
        let vibration = EventSignal(duration: 3) { t in
            Self.portrait + 0.3 * Double.sin(2 * .pi * 170 * t) * SIMD3(1, 0, 0) + noise[min(Int(t * 100), 299)]
        }
        var detector = ShakeDetector<Double>()
        #expect(detector.events(Self.framed(vibration).samples()).isEmpty)
    }

    // MARK: Internals

    @Test func largestEigenvalueInClosedForm() {
        typealias D = ShakeDetector<Double>
        #expect(abs(D.largestEigenvalue(diagonal: SIMD3(3, 2, 1), offDiagonal: .zero) - 3) < 1e-12)
        #expect(abs(D.largestEigenvalue(diagonal: SIMD3(1, 1, 1), offDiagonal: .zero) - 1) < 1e-12)
        // [[2,1,0],[1,2,0],[0,0,1]]: eigenvalues 3, 1, 1.
        #expect(abs(D.largestEigenvalue(diagonal: SIMD3(2, 2, 1), offDiagonal: SIMD3(1, 0, 0)) - 3) < 1e-12)
        // A rank-one matrix v·vᵀ has the eigenvalue |v|².
        let v = SIMD3<Double>(0.3, -1.2, 0.7)
        let value = D.largestEigenvalue(
            diagonal: v * v, offDiagonal: SIMD3(v.x * v.y, v.x * v.z, v.y * v.z))
        #expect(abs(value - (v * v).sum()) < 1e-12)
    }

    @Test func configurationDefaultsAndDerivedTimes() {
        let c = ShakeDetector<Double>.Configuration()
        #expect(c.threshold == 0.3)
        #expect(c.frequencyBand == 1.5...10)
        #expect(c.minimumReversals == 2)
        #expect(c.minimumLinearity == 0.97)
        #expect(c.maximumDuration == 1)
        #expect(c.gravityCutoff == 0.8)
        #expect(c.smoothingCutoff == 15)
        #expect(c.maximumGap == 0.5)
        #expect(c.minimumStrokeBalance == 1.0 / 3)
        #expect(abs(c.shortestStroke - 0.05) < 1e-12)
        #expect(abs(c.longestStroke - 1 / 3) < 1e-12)
        #expect(abs(c.endDelay - 0.4) < 1e-12)
    }

    @Test func eventDescriptions() {
        let event = ShakeEvent(
            phase: .cancelled(.tooLong), timestamp: 2, axis: .y, startTime: 1, strokes: 9, peakAcceleration: 1.234)
        #expect(event.description == "2.0 cancelled (tooLong) axis=y strokes=9 peak=1.23g")
        #expect(ShakeEvent.Phase.began.name == "began")
        #expect(ShakeEvent.Phase.cancelled(.notAShake).name == "cancelled")
    }
}
