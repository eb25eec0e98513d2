public import RealModule

/// Arcsine and two-argument arctangent as polynomials, for the magnetometer update (which waits on them) and the
/// heading of device motion (``DeviceMotion/heading``): their dependency chains are shorter than the C library's
/// (9D update 5 % faster). Also cosine and sine of angles up to π/2, for the turns about the vertical of the 9D
/// attitude.
/// Absolute error below 10⁻¹³ rad in `Double` (tested against the C library over the whole domain); in `Float`,
/// within 10⁻⁶ rad.
///
/// Each function reduces its argument to a short interval around 0 and evaluates `x + x³·P(x²)` there, with `P` of
/// degree 8 fitted (least squares on Chebyshev nodes, weighted by x³) to `(f(x) − x)/x³`.
@usableFromInline
package enum PolynomialTrigonometry<Scalar: MotionScalar> {
    /// `asin(x)` in rad for `x` in [−1, 1]; beyond it the result of `x` clamped to ±1, NaN for NaN.
    @inlinable
    package static func arcsine(_ x: Scalar) -> Scalar {
        let a = x.magnitude
        let r: Scalar
        if a <= 0.5 {
            r = a + a * (a * a) * arcsinePolynomial(a * a)
        } else {
            // asin(a) = π/2 − 2·asin(√((1 − a)/2)), the inner argument in [0, 0.5].
            let z = (1 - Swift.min(a, 1)) / 2
            let s = z.squareRoot()
            r = Scalar.pi / 2 - 2 * (s + s * z * arcsinePolynomial(z))
        }
        return x < 0 ? -r : r
    }

    /// `atan2(y, x)` in rad, in [−π, π], signed as `y` (also for −0). Zero, infinite and NaN arguments go to the C
    /// library.
    @inlinable
    package static func arctangent(y: Scalar, x: Scalar) -> Scalar {
        guard case let (t, reduced, swapped)? = octantReduction(y: y, x: x) else { return Scalar.atan2(y: y, x: x) }
        var r = reduced * (Scalar.pi / 4) + (t + t * (t * t) * arctangentPolynomial(t * t))
        let negative: Scalar = x < 0 ? 1 : 0
        r = swapped * (Scalar.pi / 2) + (1 - 2 * swapped) * r
        r = negative * Scalar.pi + (1 - 2 * negative) * r
        return Scalar(signOf: y, magnitudeOf: r)  // −r for negative y (and −0), as a mask
    }

    /// `atan2(y, x)` turned into [0, 2π) (its negative results plus 2π; −0 gives +0): the angle counterclockwise from
    /// +x to `(x, y)`, as a compass heading needs it. The same reduction and polynomial as ``arctangent(y:x:)``, with
    /// the steps after the polynomial (to the octant, to the quadrant, to [0, 2π)) folded into one offset and one
    /// sign, which depend on the signs and order of the arguments only: computed beside the division and the
    /// polynomial, they leave two additions after the polynomial where there were eight dependent operations and a
    /// branch. Zero, infinite and NaN arguments go to the C library.
    @inlinable @inline(__always)
    package static func azimuth(y: Scalar, x: Scalar) -> Scalar {
        guard case let (t, reduced, swapped)? = octantReduction(y: y, x: x) else {
            let a = Scalar.atan2(y: y, x: x)
            return (a < 0 ? a + 2 * Scalar.pi : a) + 0
        }
        // atan(small/big) = reduced·π/4 + atan(t); then π/2 minus it when |y| > |x|, π minus that for negative x, and
        // 2π minus that for negative y. Each step is `offset + sign·previous`: composed, one offset and one sign.
        let negative: Scalar = x < 0 ? 1 : 0, below: Scalar = y < 0 ? 1 : 0
        let (s1, s2, s3) = (1 - 2 * swapped, 1 - 2 * negative, 1 - 2 * below)
        let offset = below * (2 * Scalar.pi)
            + s3 * (negative * Scalar.pi + s2 * (swapped * (Scalar.pi / 2) + s1 * (reduced * (Scalar.pi / 4))))
        let st = (s3 * s2 * s1) * t
        let u = t * t
        return offset + (st + st * u * arctangentPolynomial(u))
    }

    /// The reduction of both arctangents: with `small` and `big` the smaller and the larger of `|x|` and `|y|`,
    /// `atan(small/big) = reduced·π/4 + atan(t)` with |t| ≤ tan(π/8) (`reduced` 1 above tan(π/8), else 0), and
    /// `swapped` 1 when |y| > |x|. `nil` for a zero, infinite or NaN argument. No branches: for directions that turn
    /// every way (the heading of a tumbling device) they are mispredicted often. Each choice is a factor of 0 or 1,
    /// which compiles to a mask and leaves the arithmetic exact.
    @inlinable @inline(__always)
    package static func octantReduction(y: Scalar, x: Scalar) -> (t: Scalar, reduced: Scalar, swapped: Scalar)? {
        let ax = x.magnitude, ay = y.magnitude
        let big = Swift.max(ax, ay), small = Swift.min(ax, ay)
        guard big > 0, ax.isFinite, ay.isFinite else { return nil }
        let reduced: Scalar = small > Scalar(0.41421356237309503) * big ? 1 : 0
        let t = (small - reduced * big) / (big + reduced * small)
        return (t, reduced, ay > ax ? 1 : 0)
    }

    /// `(cos x, sin x)` for `x` in [−π/2, π/2] from their Taylor series (to x²⁰ and x¹⁹, whose remainders are below
    /// 4·10⁻¹⁶ there), with no range reduction; beyond that interval, and for NaN, the C library's. Within 5·10⁻¹⁶
    /// of the C library in `Double`. For turns about the vertical by at most π, whose quaternion takes the half angle.
    @inlinable
    package static func cosineSine(_ x: Scalar) -> (cos: Scalar, sin: Scalar) {
        guard x.magnitude <= Scalar(1.5707963267948966) else { return (Scalar.cos(x), Scalar.sin(x)) }
        let u = x * x
        let sine = x + x * u * estrin(
            u, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362_880, -1.0 / 39_916_800, 1.0 / 6_227_020_800,
            -1.0 / 1_307_674_368_000, 1.0 / 355_687_428_096_000, -1.0 / 121_645_100_408_832_000)
        let u2 = u * u, u4 = u2 * u2
        let cosine = 1 + u * (estrin(
            u, -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40_320, -1.0 / 3_628_800, 1.0 / 479_001_600,
            -1.0 / 87_178_291_200, 1.0 / 20_922_789_888_000, -1.0 / 6_402_373_705_728_000)
            + Scalar(1.0 / 2_432_902_008_176_640_000) * (u4 * u4 * u))
        return (cosine, sine)
    }

    /// `(asin(x) − x)/x³` as a polynomial in `u = x²`, for x in [0, 0.5].
    @inlinable @inline(__always)
    package static func arcsinePolynomial(_ u: Scalar) -> Scalar {
        estrin(u, 0.16666666674546823, 0.0749999904217907, 0.04464329154992689, 0.030371869372485764,
               0.02250732177106834, 0.016248425501670414, 0.019489802654000993, -0.0046088399599858556,
               0.03345445538627204)
    }

    /// `(atan(t) − t)/t³` as a polynomial in `u = t²`, for |t| ≤ tan(π/8).
    @inlinable @inline(__always)
    package static func arctangentPolynomial(_ u: Scalar) -> Scalar {
        estrin(u, -0.3333333333314538, 0.1999999996584897, -0.1428571195588093, 0.11111029114062765,
               -0.0908921773505969, 0.07670610250958163, -0.06489890229563197, 0.04976717027840396,
               -0.02471568092571957)
    }

    /// `c0 + c1·u + … + c8·u⁸` by Estrin's scheme: four levels of dependent multiply-adds instead of Horner's eight.
    @inlinable @inline(__always)
    package static func estrin(
        _ u: Scalar, _ c0: Double, _ c1: Double, _ c2: Double, _ c3: Double, _ c4: Double, _ c5: Double,
        _ c6: Double, _ c7: Double, _ c8: Double
    ) -> Scalar {
        let u2 = u * u
        let u4 = u2 * u2
        let p01 = Scalar(c0) + Scalar(c1) * u, p23 = Scalar(c2) + Scalar(c3) * u
        let p45 = Scalar(c4) + Scalar(c5) * u, p67 = Scalar(c6) + Scalar(c7) * u
        let p03 = p01 + p23 * u2, p47 = p45 + p67 * u2
        return p03 + (p47 + Scalar(c8) * u4) * u4
    }
}
