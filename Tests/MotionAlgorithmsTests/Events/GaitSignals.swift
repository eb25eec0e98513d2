import MotionAlgorithms
import RealModule

/// Synthetic gaits and distractors for the step-detector tests: accelerometer readings (g, Core Motion's sign)
/// at given times, in a device frame turned by a seeded random rotation.
///
/// A walk is a sequence of step times (a cadence with seeded stride-to-stride variation); within each step the
/// body's vertical user acceleration is a cosine of the step's phase plus a heel-strike harmonic, the left and
/// right steps differ in amplitude, the body sways sideways once per stride and surges forwards once per step.
struct GaitSignal {
    /// The true step times, in seconds.
    let stepTimes: [Double]
    /// Peak vertical user acceleration of a step, in g.
    let amplitude: Double
    /// The device's attitude: world (x east, y north, z up) to device.
    let rotation: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>)
    /// Steps (indices) whose vertical acceleration is a tenth of the others': a shuffle the trigger misses.
    var weakSteps: Set<Int> = []
    /// A device carried on one side of the body: that side's steps (even indices) are a heel strike, a pulse of
    /// `width` seconds (standard deviation) with a shallow trough over the rest of the step, and the other side's
    /// a swing of `ratio` times the amplitude. `nil`: every step a cosine (``reading(_:)``).
    var heelStrike: (ratio: Double, width: Double)?

    /// A walk of `steps` steps at `cadence` steps/s starting at `start` seconds, with stride-to-stride variation
    /// `variation` (standard deviation as a fraction) and left/right asymmetry of the step time `asymmetry`.
    init(
        steps: Int, cadence: Double, amplitude: Double, start: Double = 2, variation: Double = 0.02,
        asymmetry: Double = 0.05, seed: UInt64 = 1
    ) {
        var random = NoiseGenerator(seed: seed)
        var times: [Double] = []
        var t = start
        for k in 0..<steps {
            times.append(t)
            let stride = 2 / cadence * (1 + variation * random.gaussian())
            t += stride / 2 * (k % 2 == 0 ? 1 + asymmetry : 1 - asymmetry)
        }
        stepTimes = times
        self.amplitude = amplitude
        rotation = GaitSignal.randomRotation(&random)
    }

    /// The mean step period, in seconds.
    var period: Double { (stepTimes[stepTimes.count - 1] - stepTimes[0]) / Double(stepTimes.count - 1) }
    /// When the motion starts: half a step before the first step, in seconds.
    var begin: Double { stepTimes[0] - period / 2 }
    /// When the motion ends: half a step after the last step, in seconds.
    var end: Double { stepTimes[stepTimes.count - 1] + period / 2 }

    /// The reading at `t`: gravity, plus the gait's user acceleration between ``begin`` and ``end``, fading in
    /// over the first half step and out over the last (a walker starts and stops over a step).
    func reading(_ t: Double) -> SIMD3<Double> {
        var world = SIMD3<Double>(0, 0, -1)
        if t >= begin && t < end {
            let k = stepTimes.lastIndex(where: { $0 <= t })
            let (from, to) =
                k.map { ($0 + 0 < stepTimes.count - 1) ? (stepTimes[$0], stepTimes[$0 + 1]) : (stepTimes[$0], stepTimes[$0] + period) }
                ?? (stepTimes[0] - period, stepTimes[0])
            let phase = (t - from) / (to - from)
            let side = (k ?? -1) % 2 == 0 ? 1.0 : -1.0
            let fade = min(1, (t - begin) / (period / 2), (end - t) / (period / 2))
            let envelope = Double.sin(Double.pi / 2 * fade) * Double.sin(Double.pi / 2 * fade)
            let weak = k.map { weakSteps.contains($0) } ?? false
            let a = amplitude * (1 + 0.15 * side) * envelope * (weak ? 0.1 : 1)
            let angle = 2 * Double.pi * phase
            var vertical = a * (Double.cos(angle) + 0.25 * Double.cos(2 * angle + 0.3))
            if let (ratio, width) = heelStrike {
                // The pulse peaks two widths after the step time; minus its mean over the step: no net velocity.
                let pulse = Double.exp(-0.5 * Double.pow((t - from - 2 * width) / width, 2))
                let mean = width * (2 * Double.pi).squareRoot() / (to - from)
                vertical = side > 0 ? a * (pulse - mean) : ratio * a * Double.cos(angle)
            }
            let sway = 0.3 * amplitude * envelope * side * Double.sin(angle / 2)
            let surge = 0.5 * amplitude * envelope * Double.cos(angle + 0.8)
            world += SIMD3(sway, surge, -vertical)
        }
        return Self.apply(rotation, world)
    }

    static func apply(_ r: (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>), _ v: SIMD3<Double>) -> SIMD3<Double> {
        SIMD3((r.0 * v).sum(), (r.1 * v).sum(), (r.2 * v).sum())
    }

    /// A uniformly random rotation matrix (rows), from a random unit quaternion.
    static func randomRotation(_ random: inout NoiseGenerator) -> (SIMD3<Double>, SIMD3<Double>, SIMD3<Double>) {
        var q = SIMD4(random.gaussian(), random.gaussian(), random.gaussian(), random.gaussian())
        q /= (q * q).sum().squareRoot()
        let (w, x, y, z) = (q.x, q.y, q.z, q.w)
        return (
            SIMD3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            SIMD3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
            SIMD3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
        )
    }
}

/// Sample times: `rate` Hz from `start` to `end`, each interval varied by up to ±`jitter` of itself (seeded).
func sampleTimes(from start: Double, to end: Double, rate: Double, jitter: Double = 0, seed: UInt64 = 7) -> [Double] {
    var random = NoiseGenerator(seed: seed)
    var times: [Double] = []
    var t = start
    while t < end {
        times.append(t)
        t += (1 + jitter * (2 * random.uniform() - 1)) / rate
    }
    return times
}

/// Readings of `signal` as a sensor's own low-pass gives them at `rate` Hz: each the mean of `signal` over the
/// 1/`rate` s before it (16 points), stamped at the window's middle, with Gaussian noise of `noise` g per axis.
func averagedReadings(
    _ signal: (Double) -> SIMD3<Double>, from start: Double, to end: Double, rate: Double, noise: Double = 0.01,
    seed: UInt64 = 3
) -> [(t: Double, a: SIMD3<Double>)] {
    var random = NoiseGenerator(seed: seed)
    return sampleTimes(from: start + 1 / rate, to: end, rate: rate).map { t in
        let mean = (0..<16).map { signal(t - (Double($0) + 0.5) / 16 / rate) }.reduce(.zero, +) / 16
        return (t - 0.5 / rate, mean + noise * SIMD3(random.gaussian(), random.gaussian(), random.gaussian()))
    }
}

/// Readings of `signal` at `times`, with Gaussian noise of `noise` g per axis (seeded).
func readings(
    _ signal: (Double) -> SIMD3<Double>, at times: [Double], noise: Double = 0.01, seed: UInt64 = 3
) -> [(t: Double, a: SIMD3<Double>)] {
    var random = NoiseGenerator(seed: seed)
    return times.map { t in
        (t, signal(t) + noise * SIMD3(random.gaussian(), random.gaussian(), random.gaussian()))
    }
}

extension StepDetector {
    /// Runs the samples through the detector and returns the time of every counted step.
    mutating func steps(_ samples: [(t: Double, a: SIMD3<Double>)]) -> [Double] {
        var times: [Double] = []
        for (t, a) in samples {
            let n = update(SIMD3<Scalar>(a), at: t)
            for i in 0..<n { times.append(newStepTime(i)) }
        }
        return times
    }
}
