/// A three-axis measurement in the device frame, in a unit fixed by the conforming type.
///
/// The device frame is right-handed: x to the right of the screen, y to the top of the screen, z out of the
/// screen (towards the viewer). See `Docs/Conventions.md`.
public protocol MotionVector: Hashable, Sendable, CustomStringConvertible {
    /// The x component, along the device's right edge.
    var x: Double { get set }
    /// The y component, towards the top of the screen.
    var y: Double { get set }
    /// The z component, out of the screen.
    var z: Double { get set }
    /// Creates a vector from its three components, in the type's unit.
    init(x: Double, y: Double, z: Double)
    /// The symbol of the unit every component is in, such as `"g"`.
    static var unitSymbol: String { get }
}

extension MotionVector {
    /// Creates a vector from a SIMD vector whose lanes are x, y and z, in the type's unit.
    @inlinable
    public init(_ vector: SIMD3<Double>) {
        self.init(x: vector.x, y: vector.y, z: vector.z)
    }

    /// The components as a SIMD vector (x, y, z), in the type's unit.
    @inlinable
    public var vector: SIMD3<Double> {
        get { SIMD3(x, y, z) }
        set { (x, y, z) = (newValue.x, newValue.y, newValue.z) }
    }

    /// The Euclidean length, in the type's unit.
    @inlinable
    public var magnitude: Double { (x * x + y * y + z * z).squareRoot() }

    /// `true` when every component is finite.
    @inlinable
    public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    /// The components and unit, for example `(0.0, -1.0, 0.0) g`.
    public var description: String { "(\(x), \(y), \(z)) \(Self.unitSymbol)" }
}

/// Acceleration in g (1 g = 9.80665 m/s²), with Core Motion's sign: the reported vector points along gravity.
///
/// This is the accelerometer reading negated: a device at rest upright in portrait reads (0, −1, 0) and one lying
/// flat face up reads (0, 0, −1). The vector includes gravity. The corresponding Core Motion type is
/// `CMAcceleration`.
public struct Acceleration: MotionVector {
    /// The x component, in g.
    public var x: Double
    /// The y component, in g.
    public var y: Double
    /// The z component, in g.
    public var z: Double

    /// Creates an acceleration from components in g.
    @inlinable
    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// `"g"`.
    public static var unitSymbol: String { "g" }

    /// Standard gravity, 9.80665 m/s²: the size of 1 g.
    public static let standardGravity: Double = 9.80665

    /// Creates an acceleration from an accelerometer's specific force in m/s² (the sign most drivers and
    /// papers use, reading +9.81 m/s² upwards at rest), converting it to g with Core Motion's sign.
    @inlinable
    public init(specificForceInMetersPerSecondSquared f: SIMD3<Double>) {
        self.init(-f / Acceleration.standardGravity)
    }

    /// The accelerometer's specific force in m/s² (the negated vector, times 9.80665).
    @inlinable
    public var specificForceInMetersPerSecondSquared: SIMD3<Double> { -vector * Acceleration.standardGravity }
}

/// Rotation rate in radians per second, sign by the right-hand rule about each device axis.
///
/// The corresponding Core Motion type is `CMRotationRate`.
public struct RotationRate: MotionVector {
    /// The rate about the x axis, in rad/s.
    public var x: Double
    /// The rate about the y axis, in rad/s.
    public var y: Double
    /// The rate about the z axis, in rad/s.
    public var z: Double

    /// Creates a rotation rate from components in rad/s.
    @inlinable
    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// `"rad/s"`.
    public static var unitSymbol: String { "rad/s" }
}

/// Magnetic field in microtesla (µT), in the device frame.
///
/// The corresponding Core Motion type is `CMMagneticField`. The Earth's field is 25–65 µT at the surface.
public struct MagneticField: MotionVector {
    /// The x component, in µT.
    public var x: Double
    /// The y component, in µT.
    public var y: Double
    /// The z component, in µT.
    public var z: Double

    /// Creates a magnetic field from components in µT.
    @inlinable
    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    /// `"µT"`.
    public static var unitSymbol: String { "µT" }
}
