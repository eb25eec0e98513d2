public import MotionCore

/// A 3×3 matrix stored as three row vectors, for the estimators' small linear algebra. Every operation is
/// forced inline: these run on every sample.
@usableFromInline
struct Matrix3<Scalar: MotionScalar>: Sendable {
    @usableFromInline var r0: SIMD3<Scalar>
    @usableFromInline var r1: SIMD3<Scalar>
    @usableFromInline var r2: SIMD3<Scalar>

    @inlinable @inline(__always)
    init(rows r0: SIMD3<Scalar>, _ r1: SIMD3<Scalar>, _ r2: SIMD3<Scalar>) {
        (self.r0, self.r1, self.r2) = (r0, r1, r2)
    }

    /// The matrix `M` with `M · v = q · v · q*` for a unit quaternion.
    @inlinable @inline(__always)
    init(rotation q: Quaternion<Scalar>) {
        let m = q.rotationMatrix
        self.init(rows: SIMD3(m.m11, m.m12, m.m13), SIMD3(m.m21, m.m22, m.m23), SIMD3(m.m31, m.m32, m.m33))
    }

    @inlinable @inline(__always)
    static func diagonal(_ d: SIMD3<Scalar>) -> Matrix3 {
        Matrix3(rows: SIMD3(d.x, 0, 0), SIMD3(0, d.y, 0), SIMD3(0, 0, d.z))
    }

    @inlinable @inline(__always)
    static var identity: Matrix3 { diagonal(SIMD3(repeating: 1)) }

    @inlinable @inline(__always)
    static func * (m: Matrix3, v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        SIMD3((m.r0 * v).sum(), (m.r1 * v).sum(), (m.r2 * v).sum())
    }
}

/// A symmetric 3×3 matrix (a covariance), stored as its six distinct entries.
@usableFromInline
struct SymmetricMatrix3<Scalar: MotionScalar>: Sendable {
    @usableFromInline var xx: Scalar, xy: Scalar, xz: Scalar, yy: Scalar, yz: Scalar, zz: Scalar

    @inlinable @inline(__always)
    init(diagonal d: Scalar) {
        (xx, xy, xz, yy, yz, zz) = (d, 0, 0, d, 0, d)
    }

    /// `P · v`.
    @inlinable @inline(__always)
    func times(_ v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        SIMD3(xx * v.x + xy * v.y + xz * v.z, xy * v.x + yy * v.y + yz * v.z, xz * v.x + yz * v.y + zz * v.z)
    }

    /// The largest diagonal entry.
    @inlinable
    var largestDiagonal: Scalar { max(xx, yy, zz) }

    /// One Kalman measurement update of a three-state filter with measurement matrix `h` (rows h0, h1, h2),
    /// innovation `e` and diagonal measurement noise `w`: with `A = P Hᵀ`, `S = H A + diag(w)`, `K = A S⁻¹`,
    /// the state moves by `K e` and `P` becomes `P − K Aᵀ`. Returns the state change, or `nil` (nothing changed)
    /// when `S` is singular.
    @inlinable @inline(__always)
    mutating func kalmanUpdate(
        h0: SIMD3<Scalar>, _ h1: SIMD3<Scalar>, _ h2: SIMD3<Scalar>, innovation e: SIMD3<Scalar>, noise w: SIMD3<Scalar>
    ) -> SIMD3<Scalar>? {
        // Columns of A.
        let a0 = times(h0), a1 = times(h1), a2 = times(h2)
        @inline(__always) func dot(_ u: SIMD3<Scalar>, _ v: SIMD3<Scalar>) -> Scalar { u.x * v.x + u.y * v.y + u.z * v.z }
        let s00 = dot(h0, a0) + w.x, s01 = dot(h0, a1), s02 = dot(h0, a2)
        let s11 = dot(h1, a1) + w.y, s12 = dot(h1, a2), s22 = dot(h2, a2) + w.z
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
        // P −= K Aᵀ, entry (i, l) = Σⱼ kⱼ[i] · aⱼ[l].
        xx -= k0.x * a0.x + k1.x * a1.x + k2.x * a2.x
        xy -= k0.x * a0.y + k1.x * a1.y + k2.x * a2.y
        xz -= k0.x * a0.z + k1.x * a1.z + k2.x * a2.z
        yy -= k0.y * a0.y + k1.y * a1.y + k2.y * a2.y
        yz -= k0.y * a0.z + k1.y * a1.z + k2.y * a2.z
        zz -= k0.z * a0.z + k1.z * a1.z + k2.z * a2.z
        return k0 * e.x + k1 * e.y + k2 * e.z
    }
}
