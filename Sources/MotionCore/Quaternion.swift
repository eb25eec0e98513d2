public import RealModule

/// A quaternion `w + x·i + y·j + z·k`, stored scalar first.
///
/// A unit quaternion `q` represents the rotation `v ↦ q · v · q*` (Hamilton product, `q*` the conjugate): it
/// turns a vector by `angle` about `axis` counter-clockwise when the axis points at the viewer (right-hand rule).
/// The `Attitude` type states which frames its quaternion maps between.
@frozen
public struct Quaternion<Scalar: MotionScalar>: Hashable, Sendable, Codable {
    /// The scalar (real) part.
    public var w: Scalar
    /// The coefficient of `i`.
    public var x: Scalar
    /// The coefficient of `j`.
    public var y: Scalar
    /// The coefficient of `k`.
    public var z: Scalar

    /// Creates a quaternion from its scalar part `w` and vector part `(x, y, z)`.
    @inlinable
    public init(w: Scalar, x: Scalar, y: Scalar, z: Scalar) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    /// The identity rotation, `1 + 0i + 0j + 0k`.
    @inlinable
    public static var identity: Quaternion { Quaternion(w: 1, x: 0, y: 0, z: 0) }

    /// The rotation by `angle` radians about `axis` (right-hand rule).
    ///
    /// - Parameters:
    ///   - angle: The rotation angle in radians.
    ///   - axis: The rotation axis; it need not be unit length but must not be zero. A zero axis gives the
    ///     identity.
    @inlinable
    public init(angle: Scalar, axis: SIMD3<Scalar>) {
        let length = (axis * axis).sum().squareRoot()
        guard length > 0 else {
            self = .identity
            return
        }
        let half = angle / 2
        let s = Scalar.sin(half) / length
        self.init(w: Scalar.cos(half), x: axis.x * s, y: axis.y * s, z: axis.z * s)
    }

    /// The rotation vector `angle · axis` (radians) turned into a quaternion; exact for any length.
    @inlinable
    public init(rotationVector v: SIMD3<Scalar>) {
        self.init(angle: (v * v).sum().squareRoot(), axis: v)
    }

    /// The vector part `(x, y, z)`.
    @inlinable
    public var imaginary: SIMD3<Scalar> { SIMD3(x, y, z) }

    /// The conjugate `w − x·i − y·j − z·k`; for a unit quaternion, the inverse rotation.
    @inlinable @inline(__always)
    public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

    /// The squared Euclidean norm `w² + x² + y² + z²`.
    @inlinable @inline(__always)
    public var lengthSquared: Scalar { w * w + x * x + y * y + z * z }

    /// The Euclidean norm.
    @inlinable
    public var length: Scalar { lengthSquared.squareRoot() }

    /// This quaternion scaled to unit length, with `w ≥ 0` not enforced. A zero quaternion gives the identity.
    @inlinable
    public var normalized: Quaternion {
        let n = length
        guard n > 0, n.isFinite else { return .identity }
        let inv = 1 / n
        return Quaternion(w: w * inv, x: x * inv, y: y * inv, z: z * inv)
    }

    /// The Hamilton product `lhs · rhs`: the rotation `rhs` followed by `lhs`.
    @inlinable @inline(__always)
    public static func * (lhs: Quaternion, rhs: Quaternion) -> Quaternion {
        Quaternion(
            w: lhs.w * rhs.w - lhs.x * rhs.x - lhs.y * rhs.y - lhs.z * rhs.z,
            x: lhs.w * rhs.x + lhs.x * rhs.w + lhs.y * rhs.z - lhs.z * rhs.y,
            y: lhs.w * rhs.y - lhs.x * rhs.z + lhs.y * rhs.w + lhs.z * rhs.x,
            z: lhs.w * rhs.z + lhs.x * rhs.y - lhs.y * rhs.x + lhs.z * rhs.w
        )
    }

    /// Rotates `v` by this unit quaternion: `q · v · q*`.
    @inlinable @inline(__always)
    public func act(on v: SIMD3<Scalar>) -> SIMD3<Scalar> {
        // v' = v + 2w(u × v) + 2u × (u × v), u the vector part.
        let u = imaginary
        let t = 2 * cross(u, v)
        return v + w * t + cross(u, t)
    }

    /// The matrix `M` with `M · v = q · v · q*` for a unit quaternion.
    @inlinable @inline(__always)
    public var rotationMatrix: RotationMatrix<Scalar> {
        let xx = x * x, yy = y * y, zz = z * z
        let xy = x * y, xz = x * z, yz = y * z
        let wx = w * x, wy = w * y, wz = w * z
        return RotationMatrix(
            m11: 1 - 2 * (yy + zz), m12: 2 * (xy - wz), m13: 2 * (xz + wy),
            m21: 2 * (xy + wz), m22: 1 - 2 * (xx + zz), m23: 2 * (yz - wx),
            m31: 2 * (xz - wy), m32: 2 * (yz + wx), m33: 1 - 2 * (xx + yy)
        )
    }

    /// The unit quaternion `q` (with `w ≥ 0`) whose `rotationMatrix` is `m`, for a proper rotation matrix.
    ///
    /// Uses the numerically stable branch on the largest of `w, x, y, z` (Shepperd's method).
    @inlinable
    public init(rotationMatrix m: RotationMatrix<Scalar>) {
        let trace = m.m11 + m.m22 + m.m33
        var q: Quaternion
        if trace > 0 {
            let s = (trace + 1).squareRoot() * 2  // 4w
            q = Quaternion(w: s / 4, x: (m.m32 - m.m23) / s, y: (m.m13 - m.m31) / s, z: (m.m21 - m.m12) / s)
        } else if m.m11 > m.m22 && m.m11 > m.m33 {
            let s = (1 + m.m11 - m.m22 - m.m33).squareRoot() * 2  // 4x
            q = Quaternion(w: (m.m32 - m.m23) / s, x: s / 4, y: (m.m12 + m.m21) / s, z: (m.m13 + m.m31) / s)
        } else if m.m22 > m.m33 {
            let s = (1 + m.m22 - m.m11 - m.m33).squareRoot() * 2  // 4y
            q = Quaternion(w: (m.m13 - m.m31) / s, x: (m.m12 + m.m21) / s, y: s / 4, z: (m.m23 + m.m32) / s)
        } else {
            let s = (1 + m.m33 - m.m11 - m.m22).squareRoot() * 2  // 4z
            q = Quaternion(w: (m.m21 - m.m12) / s, x: (m.m13 + m.m31) / s, y: (m.m23 + m.m32) / s, z: s / 4)
        }
        if q.w < 0 { q = Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z) }
        self = q.normalized
    }

    /// The angle in radians, in [0, π], of the rotation that takes `other` to `self`; `q` and `−q` are the same
    /// rotation, so their distance is 0.
    @inlinable
    public func angle(to other: Quaternion) -> Scalar {
        // 2·atan2(|v|, |w|) of the difference rotation stays accurate near 0 and π, unlike acos of a dot product.
        let d = normalized.conjugate * other.normalized
        let v = d.imaginary
        return 2 * Scalar.atan2(y: (v * v).sum().squareRoot(), x: abs(d.w))
    }

    /// Converts the components to another scalar type.
    @inlinable
    public init<Other: MotionScalar>(_ other: Quaternion<Other>) {
        self.init(w: Scalar(other.w), x: Scalar(other.x), y: Scalar(other.y), z: Scalar(other.z))
    }
}

/// The cross product `a × b`.
@inlinable @inline(__always)
public func cross<Scalar: MotionScalar>(_ a: SIMD3<Scalar>, _ b: SIMD3<Scalar>) -> SIMD3<Scalar> {
    SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
