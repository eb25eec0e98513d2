public import MotionCore

/// A symmetric 3×3 matrix (a covariance), stored as its three columns so that products vectorize. The
/// update keeps it exactly symmetric: each entry below the diagonal is a copy of the one above.
@usableFromInline
struct SymmetricMatrix3<Scalar: MotionScalar>: Sendable, Codable {
    @usableFromInline var c0: SIMD3<Scalar>, c1: SIMD3<Scalar>, c2: SIMD3<Scalar>

    @inlinable @inline(__always)
    init(diagonal d: Scalar) {
        (c0, c1, c2) = (SIMD3(d, 0, 0), SIMD3(0, d, 0), SIMD3(0, 0, d))
    }

    /// `P · v`, each entry summed in the order x, y, z.
    @inlinable @inline(__always)
    func times(_ v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        c0 * v.x + c1 * v.y + c2 * v.z
    }

    /// Adds `v` to the diagonal.
    @inlinable @inline(__always)
    mutating func addDiagonal(_ v: Scalar) {
        c0.x += v
        c1.y += v
        c2.z += v
    }

    /// The first diagonal entry.
    @inlinable @inline(__always)
    var xx: Scalar { c0.x }

    /// The largest diagonal entry.
    @inlinable
    var largestDiagonal: Scalar { max(c0.x, c1.y, c2.z) }

    /// One Kalman measurement update of a three-state filter with measurement matrix `H` given by its columns
    /// (`hc0`, `hc1`, `hc2`), innovation `e` and diagonal measurement noise `w`: with `A = P Hᵀ`, `S = H A +
    /// diag(w)`, `K = A S⁻¹`, the state moves by `K e` and `P` becomes `P − K Aᵀ` (upper triangle computed, the
    /// lower one copied). Returns the state change, or `nil` (nothing changed) when `S` is singular. Every sum runs
    /// in the order x, y, z.
    @inlinable @inline(__always)
    mutating func kalmanUpdate(
        columns hc0: SIMD3<Scalar>, _ hc1: SIMD3<Scalar>, _ hc2: SIMD3<Scalar>, innovation e: SIMD3<Scalar>,
        noise w: SIMD3<Scalar>
    ) -> SIMD3<Scalar>? {
        // Columns of A: aⱼ = P hⱼ, hⱼ the j-th row of H.
        let a0 = times(SIMD3(hc0.x, hc1.x, hc2.x))
        let a1 = times(SIMD3(hc0.y, hc1.y, hc2.y))
        let a2 = times(SIMD3(hc0.z, hc1.z, hc2.z))
        // Columns of H A: entry j of column l is hⱼ · aₗ.
        @inline(__always) func h(_ a: SIMD3<Scalar>) -> SIMD3<Scalar> { hc0 * a.x + hc1 * a.y + hc2 * a.z }
        let sc1 = h(a1), sc2 = h(a2)
        let s00 = hc0.x * a0.x + hc1.x * a0.y + hc2.x * a0.z + w.x, s01 = sc1.x, s02 = sc2.x
        let s11 = sc1.y + w.y, s12 = sc2.y, s22 = sc2.z + w.z
        let c00 = s11 * s22 - s12 * s12, c01 = s02 * s12 - s01 * s22, c02 = s01 * s12 - s02 * s11
        let det = s00 * c00 + s01 * c01 + s02 * c02
        guard det != 0, det.isFinite else { return nil }
        let inv = 1 / det
        let i00 = c00 * inv, i01 = c01 * inv, i02 = c02 * inv
        let i11 = (s00 * s22 - s02 * s02) * inv, i12 = (s01 * s02 - s00 * s12) * inv, i22 = (s00 * s11 - s01 * s01) * inv
        // Columns of K = A S⁻¹.
        let k0 = a0 * i00 + a1 * i01 + a2 * i02
        let k1 = a0 * i01 + a1 * i11 + a2 * i12
        let k2 = a0 * i02 + a1 * i12 + a2 * i22
        // P −= K Aᵀ: column l loses Σⱼ kⱼ · aⱼ[l]; only the entries on and above the diagonal are kept.
        let n2 = c2 - (k0 * a0.z + k1 * a1.z + k2 * a2.z)
        let n1 = c1 - (k0 * a0.y + k1 * a1.y + k2 * a2.y)
        let n0x = c0.x - (k0.x * a0.x + k1.x * a1.x + k2.x * a2.x)
        c0 = SIMD3(n0x, n1.x, n2.x)
        c1 = SIMD3(n1.x, n1.y, n2.y)
        c2 = n2
        return k0 * e.x + k1 * e.y + k2 * e.z
    }
}
