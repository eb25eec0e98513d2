import MotionAlgorithms
import RealModule

/// Hand-built accelerometer signals (g, Core Motion's sign) for the event tests: sampled functions of time,
/// with an optional deterministic noise.
struct EventSignal {
    /// The reading at `t` seconds.
    let reading: (Double) -> SIMD3<Double>
    /// The length, in seconds.
    let duration: Double

    init(duration: Double, _ reading: @escaping (Double) -> SIMD3<Double>) {
        self.duration = duration
        self.reading = reading
    }

    /// The device at rest reading `gravity`.
    static func hold(_ gravity: SIMD3<Double>, for duration: Double) -> EventSignal {
        EventSignal(duration: duration) { _ in gravity }
    }

    /// A shake along `axis` (a unit vector): `amplitude · cos(2π f t)` for a whole number of strokes, at rest
    /// before and after, on top of `gravity` (as the simulator's).
    static func shake(
        along axis: SIMD3<Double>, frequency: Double, amplitude: Double, cycles: Double,
        gravity: SIMD3<Double> = SIMD3(0, -1, 0)
    ) -> EventSignal {
        EventSignal(duration: cycles / frequency) { t in
            gravity + amplitude * Double.cos(2 * .pi * frequency * t) * axis
        }
    }

    /// This signal followed by `other`, whose time starts at 0 again.
    func then(_ other: EventSignal) -> EventSignal {
        let first = self
        return EventSignal(duration: first.duration + other.duration) { t in
            t < first.duration ? first.reading(t) : other.reading(t - first.duration)
        }
    }

    /// The samples at `rate` Hz from `start`, with Gaussian noise of standard deviation `noise` g per axis
    /// (seeded, so the same every run).
    func samples(rate: Double = 100, start: Double = 0, noise: Double = 0, seed: UInt64 = 1) -> [(
        t: Double, a: SIMD3<Double>
    )] {
        var random = NoiseGenerator(seed: seed)
        let count = Int((duration * rate).rounded(.down))
        return (0..<count).map { i in
            let local = Double(i) / rate
            var a = reading(local)
            if noise > 0 { a += noise * SIMD3(random.gaussian(), random.gaussian(), random.gaussian()) }
            return (start + local, a)
        }
    }
}

/// A small seeded Gaussian generator (SplitMix64 and Box–Muller).
struct NoiseGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / Double(1 << 53) }

    mutating func gaussian() -> Double {
        (-2 * Double.log(uniform())).squareRoot() * Double.cos(2 * .pi * uniform())
    }
}

extension ShakeDetector {
    /// Runs the samples through the detector and returns every event.
    mutating func events(_ samples: [(t: Double, a: SIMD3<Double>)]) -> [ShakeEvent] {
        samples.compactMap { update(SIMD3<Scalar>(Scalar($0.a.x), Scalar($0.a.y), Scalar($0.a.z)), at: $0.t) }
    }
}

/// The unit vector at `degrees` from `from` towards `to` (two perpendicular unit vectors).
func direction(from: SIMD3<Double>, towards to: SIMD3<Double>, degrees: Double) -> SIMD3<Double> {
    let angle = degrees * .pi / 180
    return Double.cos(angle) * from + Double.sin(angle) * to
}
