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
    var transposed: Matrix3 {
        Matrix3(rows: SIMD3(r0.x, r1.x, r2.x), SIMD3(r0.y, r1.y, r2.y), SIMD3(r0.z, r1.z, r2.z))
    }

    @inlinable @inline(__always)
    static func * (m: Matrix3, v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        SIMD3((m.r0 * v).sum(), (m.r1 * v).sum(), (m.r2 * v).sum())
    }

    /// `A · B`, each row of the product a combination of B's rows.
    @inlinable @inline(__always)
    static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        @inline(__always) func row(_ r: SIMD3<Scalar>) -> SIMD3<Scalar> { r.x * b.r0 + r.y * b.r1 + r.z * b.r2 }
        return Matrix3(rows: row(a.r0), row(a.r1), row(a.r2))
    }

    @inlinable @inline(__always)
    static func + (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(rows: a.r0 + b.r0, a.r1 + b.r1, a.r2 + b.r2) }

    @inlinable @inline(__always)
    static func - (a: Matrix3, b: Matrix3) -> Matrix3 { Matrix3(rows: a.r0 - b.r0, a.r1 - b.r1, a.r2 - b.r2) }

    /// The inverse by cofactors (rows of the inverse are cross products of the columns... of the transpose), or
    /// `nil` when the determinant is zero or not finite.
    @inlinable @inline(__always)
    var inverse: Matrix3? {
        // For M with rows a, b, c: M⁻¹ = [b×c, c×a, a×b]ᵀ / (a · (b×c)).
        let bc = cross(r1, r2), ca = cross(r2, r0), ab = cross(r0, r1)
        let det = (r0 * bc).sum()
        guard det != 0, det.isFinite else { return nil }
        return Matrix3(rows: bc / det, ca / det, ab / det).transposed
    }
}
