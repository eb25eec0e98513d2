public import RealModule

/// The orientation of the device relative to a reference frame, as Core Motion's `CMAttitude`.
///
/// Frames: the device frame is x right, y to the top of the screen, z out of the screen. The reference frame
/// (see ``AttitudeReferenceFrame``) is right-handed with z pointing up, away from the Earth's centre.
///
/// - ``quaternion`` maps **device to reference**: `v_reference = q · v_device · q*`. At the identity the device
///   lies flat, face up, its right edge (x) towards the reference x axis and its top (y) towards reference y.
/// - ``rotationMatrix`` maps **reference to device** (Core Motion's `CMRotationMatrix`): `v_device = R · v_reference`.
///   It is the transpose of `quaternion.rotationMatrix`. Gravity in the device frame is therefore
///   `R · (0, 0, −1)` (``gravity``).
/// - ``roll``, ``pitch`` and ``yaw`` are in radians, with `quaternion.rotationMatrix = Rz(yaw) · Rx(pitch) · Ry(roll)`:
///   pitch about the device x axis in [−π/2, π/2], roll about the device y axis in (−π, π], yaw about the
///   vertical in (−π, π]. All three are zero at the identity; at pitch = ±π/2 roll is 0 and yaw carries the turn.
@frozen
public struct Attitude: Hashable, Sendable, CustomStringConvertible {
    /// The unit quaternion that maps device-frame vectors to reference-frame vectors (scalar first).
    public var quaternion: Quaternion<Double>

    /// Creates an attitude from a device-to-reference quaternion, normalising it.
    @inlinable
    public init(quaternion: Quaternion<Double>) {
        self.quaternion = quaternion.normalized
    }

    /// An attitude from a quaternion that is already of unit length (to rounding), taken as it is: for producers
    /// that keep their quaternion normalised and need not pay for it twice.
    @inlinable
    package init(unitQuaternion: Quaternion<Double>) {
        quaternion = unitQuaternion
    }

    /// The attitude of a device lying flat, face up, its right edge towards reference x and its top towards
    /// reference y: device and reference axes coincide.
    public static let identity = Attitude(quaternion: .identity)

    /// Creates an attitude from a reference-to-device rotation matrix (Core Motion's `rotationMatrix`).
    @inlinable
    public init(rotationMatrix: RotationMatrix<Double>) {
        self.init(quaternion: Quaternion(rotationMatrix: rotationMatrix.transposed))
    }

    /// Creates an attitude from Euler angles in radians, composed as `Rz(yaw) · Rx(pitch) · Ry(roll)`
    /// (device to reference).
    @inlinable
    public init(roll: Double, pitch: Double, yaw: Double) {
        let qz = Quaternion<Double>(angle: yaw, axis: SIMD3(0, 0, 1))
        let qx = Quaternion<Double>(angle: pitch, axis: SIMD3(1, 0, 0))
        let qy = Quaternion<Double>(angle: roll, axis: SIMD3(0, 1, 0))
        self.init(quaternion: qz * qx * qy)
    }

    /// The reference-to-device rotation matrix: `v_device = R · v_reference` (Core Motion's `CMRotationMatrix`).
    @inlinable
    public var rotationMatrix: RotationMatrix<Double> { quaternion.rotationMatrix.transposed }

    /// Rotation about the device's y axis (top–bottom), in radians, in (−π, π].
    @inlinable
    public var roll: Double {
        let m = quaternion.rotationMatrix
        return isGimbalLocked(m) ? 0 : Double.atan2(y: -m.m31, x: m.m33)
    }

    /// Rotation about the device's x axis (side to side), in radians, in [−π/2, π/2]; positive when the top of
    /// the device rises from face up.
    @inlinable
    public var pitch: Double {
        Double.asin(min(max(quaternion.rotationMatrix.m32, -1), 1))
    }

    /// Rotation about the vertical (the reference z axis), in radians, in (−π, π]; positive counter-clockwise
    /// seen from above.
    @inlinable
    public var yaw: Double {
        let m = quaternion.rotationMatrix
        return isGimbalLocked(m) ? Double.atan2(y: m.m21, x: m.m11) : Double.atan2(y: -m.m12, x: m.m22)
    }

    @inlinable
    func isGimbalLocked(_ m: RotationMatrix<Double>) -> Bool {
        abs(m.m32) > 1 - 1e-12
    }

    /// Gravity in the device frame, in g: `rotationMatrix · (0, 0, −1)`.
    @inlinable
    public var gravity: Acceleration {
        Acceleration(rotationMatrix * SIMD3(0, 0, -1))
    }

    /// Replaces this attitude by the change from `reference` to it (Core Motion's `multiply(byInverseOf:)`).
    ///
    /// Afterwards the quaternion is `reference.quaternion* · quaternion`: the current device orientation
    /// expressed in the frame the device had at `reference`. It is the identity when nothing moved, and a turn
    /// of θ about the device's own x axis since `reference` reads as pitch θ.
    @inlinable
    public mutating func multiply(byInverseOf reference: Attitude) {
        self = relative(to: reference)
    }

    /// The change from `reference` to this attitude; see ``multiply(byInverseOf:)``.
    @inlinable
    public func relative(to reference: Attitude) -> Attitude {
        Attitude(quaternion: reference.quaternion.conjugate * quaternion)
    }

    /// The angle in radians, in [0, π], of the rotation between two attitudes.
    @inlinable
    public func angle(to other: Attitude) -> Double { quaternion.angle(to: other.quaternion) }

    /// The quaternion and the Euler angles in degrees.
    public var description: String {
        let q = quaternion
        let d = 180 / Double.pi
        return "Attitude(q: [\(q.w), \(q.x), \(q.y), \(q.z)], roll: \(roll * d)°, pitch: \(pitch * d)°, yaw: \(yaw * d)°)"
    }
}

/// The reference frame an attitude is relative to, as Core Motion's `CMAttitudeReferenceFrame`.
///
/// Every frame is right-handed with z vertical, pointing up; the frames differ in where x points.
public enum AttitudeReferenceFrame: String, Hashable, Sendable, CaseIterable, Codable {
    /// x arbitrary in the horizontal plane (set by the device's heading at start), z up; uses the accelerometer
    /// and gyroscope only, so yaw drifts slowly.
    case xArbitraryZVertical
    /// As ``xArbitraryZVertical``, but the magnetometer stops yaw drift without aligning x to north.
    case xArbitraryCorrectedZVertical
    /// x towards magnetic north, y west, z up (north–west–up).
    case xMagneticNorthZVertical
    /// x towards true north (magnetic north corrected by a declination the user provides), y west, z up.
    case xTrueNorthZVertical

    /// The sensors the frame needs.
    public var requiredSensors: SensorSet {
        switch self {
        case .xArbitraryZVertical: [.accelerometer, .gyroscope]
        case .xArbitraryCorrectedZVertical, .xMagneticNorthZVertical, .xTrueNorthZVertical: .all
        }
    }
}

extension AttitudeReferenceFrame {
    /// The short name `motionctl` and `motiond` use: `arbitrary`, `arbitrary-corrected`, `magnetic-north`,
    /// `true-north`.
    public var shortName: String {
        switch self {
        case .xArbitraryZVertical: "arbitrary"
        case .xArbitraryCorrectedZVertical: "arbitrary-corrected"
        case .xMagneticNorthZVertical: "magnetic-north"
        case .xTrueNorthZVertical: "true-north"
        }
    }

    /// The frame of a ``shortName`` or a raw value (`xMagneticNorthZVertical`); `nil` for anything else.
    public init?(shortName: String) {
        guard let frame = Self.allCases.first(where: { $0.shortName == shortName || $0.rawValue == shortName })
        else { return nil }
        self = frame
    }
}
