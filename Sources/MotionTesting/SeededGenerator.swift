import RealModule

/// A seeded pseudo-random number generator (xoshiro256**, seeded through SplitMix64) whose integer stream is
/// the same on every platform, run and Swift version.
///
/// The standard library's `random(in:using:)` algorithms are not guaranteed to stay the same across Swift
/// releases, so the simulator draws its numbers only through this type's own methods (``nextUniform()``,
/// ``uniform(in:)``, ``integer(in:)``, ``nextGaussian()``). The integers and uniforms are bit-identical
/// everywhere; the Gaussians use the platform's `log`, so they can differ in the last bit between C libraries.
///
/// The generator is a value: copying it forks the stream.
package struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64
    /// The second value of the last polar-method pair, returned by the next ``nextGaussian()``.
    private var spareGaussian: Double?

    /// Creates a generator whose state is four SplitMix64 outputs from `seed`.
    @usableFromInline package init(seed: UInt64) {
        var mixer = seed
        s0 = SeededGenerator.splitMix64(&mixer)
        s1 = SeededGenerator.splitMix64(&mixer)
        s2 = SeededGenerator.splitMix64(&mixer)
        s3 = SeededGenerator.splitMix64(&mixer)
        spareGaussian = nil
    }

    /// Creates the generator for one named stream of `seed`, so that independent consumers (the accelerometer's
    /// noise, the gyroscope's, a scenario's choices) do not shift each other's numbers.
    @usableFromInline package init(seed: UInt64, stream: UInt64) {
        var mixer = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        self.init(seed: SeededGenerator.splitMix64(&mixer))
    }

    /// One step of SplitMix64: advances `state` and returns the mixed value.
    @inlinable
    package static func splitMix64(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The next 64 random bits (xoshiro256**).
    @usableFromInline package mutating func next() -> UInt64 {
        let result = (s1 &* 5).rotatedLeft(by: 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = s3.rotatedLeft(by: 45)
        return result
    }

    /// A uniform value in [0, 1), from the top 53 bits of ``next()``.
    @usableFromInline package mutating func nextUniform() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }

    /// A uniform value in `range`.
    @usableFromInline package mutating func uniform(in range: ClosedRange<Double>) -> Double {
        range.lowerBound + (range.upperBound - range.lowerBound) * nextUniform()
    }

    /// A uniform integer in `range` (multiply-shift; the bias is below 2⁻³² for ranges under 2³²).
    @usableFromInline package mutating func integer(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard width != 0 else { return Int(truncatingIfNeeded: next()) }
        return range.lowerBound + Int(next().multipliedFullWidth(by: width).high)
    }

    /// `true` with probability `p`.
    @usableFromInline package mutating func chance(_ p: Double) -> Bool {
        nextUniform() < p
    }

    /// One element of `elements`, chosen uniformly.
    ///
    /// - Precondition: `elements` is not empty.
    @usableFromInline package mutating func element<C: Collection>(of elements: C) -> C.Element where C.Index == Int {
        precondition(!elements.isEmpty, "element(of:) needs a non-empty collection")
        return elements[elements.startIndex + integer(in: 0...(elements.count - 1))]
    }

    /// A standard normal value (mean 0, standard deviation 1), by Marsaglia's polar method.
    @usableFromInline package mutating func nextGaussian() -> Double {
        if let spare = spareGaussian {
            spareGaussian = nil
            return spare
        }
        while true {
            let u = 2 * nextUniform() - 1
            let v = 2 * nextUniform() - 1
            let s = u * u + v * v
            if s > 0 && s < 1 {
                let factor = (-2 * Double.log(s) / s).squareRoot()
                spareGaussian = v * factor
                return u * factor
            }
        }
    }

    /// Three independent standard normal values.
    @usableFromInline package mutating func nextGaussianVector() -> SIMD3<Double> {
        let x = nextGaussian()
        let y = nextGaussian()
        let z = nextGaussian()
        return SIMD3(x, y, z)
    }
}

extension UInt64 {
    fileprivate func rotatedLeft(by k: UInt64) -> UInt64 {
        (self << k) | (self >> (64 &- k))
    }
}
