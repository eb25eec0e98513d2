/// A 3×3 matrix, row by row: `m12` is row 1, column 2, as in Core Motion's `CMRotationMatrix`.
///
/// The type itself does not fix a direction; `Attitude.rotationMatrix` and `Quaternion.rotationMatrix` each
/// document what their matrix maps.
@frozen
public struct RotationMatrix<Scalar: MotionScalar>: Hashable, Sendable {
    public var m11: Scalar, m12: Scalar, m13: Scalar
    public var m21: Scalar, m22: Scalar, m23: Scalar
    public var m31: Scalar, m32: Scalar, m33: Scalar

    /// Creates a matrix from its entries, row by row.
    @inlinable
    public init(
        m11: Scalar, m12: Scalar, m13: Scalar,
        m21: Scalar, m22: Scalar, m23: Scalar,
        m31: Scalar, m32: Scalar, m33: Scalar
    ) {
        (self.m11, self.m12, self.m13) = (m11, m12, m13)
        (self.m21, self.m22, self.m23) = (m21, m22, m23)
        (self.m31, self.m32, self.m33) = (m31, m32, m33)
    }

    /// Creates a matrix from three rows.
    @inlinable
    public init(rows r1: SIMD3<Scalar>, _ r2: SIMD3<Scalar>, _ r3: SIMD3<Scalar>) {
        self.init(m11: r1.x, m12: r1.y, m13: r1.z, m21: r2.x, m22: r2.y, m23: r2.z, m31: r3.x, m32: r3.y, m33: r3.z)
    }

    /// The identity matrix.
    @inlinable
    public static var identity: RotationMatrix {
        RotationMatrix(m11: 1, m12: 0, m13: 0, m21: 0, m22: 1, m23: 0, m31: 0, m32: 0, m33: 1)
    }

    /// The rows, top to bottom.
    @inlinable
    public var rows: (SIMD3<Scalar>, SIMD3<Scalar>, SIMD3<Scalar>) {
        (SIMD3(m11, m12, m13), SIMD3(m21, m22, m23), SIMD3(m31, m32, m33))
    }

    /// The transpose; for a rotation matrix, its inverse.
    @inlinable
    public var transposed: RotationMatrix {
        RotationMatrix(m11: m11, m12: m21, m13: m31, m21: m12, m22: m22, m23: m32, m31: m13, m32: m23, m33: m33)
    }

    /// The product `M · v`.
    @inlinable
    public static func * (m: RotationMatrix, v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        let (r1, r2, r3) = m.rows
        return SIMD3((r1 * v).sum(), (r2 * v).sum(), (r3 * v).sum())
    }

    /// The product `A · B`.
    @inlinable
    public static func * (a: RotationMatrix, b: RotationMatrix) -> RotationMatrix {
        let bt = b.transposed.rows
        let (r1, r2, r3) = a.rows
        func row(_ r: SIMD3<Scalar>) -> SIMD3<Scalar> { SIMD3((r * bt.0).sum(), (r * bt.1).sum(), (r * bt.2).sum()) }
        return RotationMatrix(rows: row(r1), row(r2), row(r3))
    }
}
