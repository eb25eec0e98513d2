public import MotionCore

/// A general 3×3 matrix for the estimators' linear algebra (row by row, as ``MotionCore/RotationMatrix``).
@usableFromInline
typealias Matrix3<Scalar: MotionScalar> = RotationMatrix<Scalar>

extension RotationMatrix {
    /// A diagonal matrix with `d` on the diagonal.
    @inlinable
    static func diagonal(_ d: Scalar) -> RotationMatrix { diagonal(SIMD3(repeating: d)) }

    /// A diagonal matrix with `d` on the diagonal.
    @inlinable
    static func diagonal(_ d: SIMD3<Scalar>) -> RotationMatrix {
        RotationMatrix(m11: d.x, m12: 0, m13: 0, m21: 0, m22: d.y, m23: 0, m31: 0, m32: 0, m33: d.z)
    }

    @inlinable
    static func + (a: RotationMatrix, b: RotationMatrix) -> RotationMatrix {
        let (a1, a2, a3) = a.rows, (b1, b2, b3) = b.rows
        return RotationMatrix(rows: a1 + b1, a2 + b2, a3 + b3)
    }

    @inlinable
    static func - (a: RotationMatrix, b: RotationMatrix) -> RotationMatrix {
        let (a1, a2, a3) = a.rows, (b1, b2, b3) = b.rows
        return RotationMatrix(rows: a1 - b1, a2 - b2, a3 - b3)
    }

    /// The inverse by cofactors, or `nil` when the determinant is zero or not finite.
    @inlinable
    var inverse: RotationMatrix? {
        let c11 = m22 * m33 - m23 * m32, c12 = m23 * m31 - m21 * m33, c13 = m21 * m32 - m22 * m31
        let det = m11 * c11 + m12 * c12 + m13 * c13
        guard det != 0, det.isFinite else { return nil }
        let s = 1 / det
        return RotationMatrix(
            m11: c11 * s, m12: (m13 * m32 - m12 * m33) * s, m13: (m12 * m23 - m13 * m22) * s,
            m21: c12 * s, m22: (m11 * m33 - m13 * m31) * s, m23: (m13 * m21 - m11 * m23) * s,
            m31: c13 * s, m32: (m12 * m31 - m11 * m32) * s, m33: (m11 * m22 - m12 * m21) * s)
    }
}
