/// Processed motion: attitude, unbiased rotation rate, gravity and user acceleration, as Core Motion's
/// `CMDeviceMotion`.
///
/// Frames and units: every vector is in the device frame; accelerations in g with Core Motion's sign
/// (`acceleration = gravity + userAcceleration`), rotation rate in rad/s, magnetic field in µT, heading in degrees.
public struct DeviceMotion: Sendable {
    /// The instant this motion is valid for, in seconds on the source's clock.
    public var timestamp: Double
    /// The device's attitude relative to ``referenceFrame``.
    public var attitude: Attitude
    /// The frame ``attitude`` and ``heading`` are relative to.
    public var referenceFrame: AttitudeReferenceFrame
    /// The gyroscope reading minus the estimated bias, in rad/s.
    public var rotationRate: RotationRate
    /// Gravity in the device frame, in g: `attitude.rotationMatrix · (0, 0, −1)`.
    public var gravity: Acceleration
    /// The acceleration the user gives the device, in g, with Core Motion's sign: the accelerometer reading
    /// minus ``gravity`` (so pushing the device towards +x reads negative x).
    public var userAcceleration: Acceleration
    /// The magnetic field in µT with the device's own bias removed, and the accuracy of that calibration; `nil`
    /// without a magnetometer reading or in the `xArbitraryZVertical` frame, which ignores the magnetometer.
    public var magneticField: CalibratedMagneticField?
    /// Where the top of the device points, clockwise from the reference frame's x axis (north in the north
    /// frames), in degrees in [0, 360); −1 in the `xArbitrary…` frames, which have no north. See
    /// `Docs/Attitude.md` for how it is taken when the device stands upright.
    ///
    /// In a value made by the device-motion filter (north frames, once the magnetometer has set the heading), it is
    /// ``heading(of:)`` of ``attitude``, computed when read (an arctangent, about 20 ns): a user who reads only the
    /// attitude does not pay for it. Setting it stores the value given.
    public var heading: Double {
        get {
            switch headingStorage {
            case .value(let degrees): degrees
            case .fromAttitude: Self.heading(of: attitude)
            }
        }
        set { headingStorage = .value(newValue) }
    }

    /// The heading as given, or to be taken from the attitude when read.
    @usableFromInline
    enum HeadingStorage: Sendable {
        case value(Double)
        case fromAttitude
    }

    @usableFromInline var headingStorage: HeadingStorage

    /// Creates a device-motion value.
    public init(
        timestamp: Double, attitude: Attitude, referenceFrame: AttitudeReferenceFrame, rotationRate: RotationRate,
        gravity: Acceleration, userAcceleration: Acceleration, magneticField: CalibratedMagneticField? = nil,
        heading: Double = -1
    ) {
        self.init(
            timestamp: timestamp, attitude: attitude, referenceFrame: referenceFrame, rotationRate: rotationRate,
            gravity: gravity, userAcceleration: userAcceleration, magneticField: magneticField,
            headingStorage: .value(heading))
    }

    /// A device-motion value whose ``heading`` is ``heading(of:)`` of `attitude` when `hasHeading`, else −1 (the
    /// filter's: no north, or no magnetometer reading yet).
    @inlinable @inline(__always)
    package init(
        timestamp: Double, attitude: Attitude, referenceFrame: AttitudeReferenceFrame, rotationRate: RotationRate,
        gravity: Acceleration, userAcceleration: Acceleration, magneticField: CalibratedMagneticField?,
        headingFromAttitude hasHeading: Bool
    ) {
        self.init(
            timestamp: timestamp, attitude: attitude, referenceFrame: referenceFrame, rotationRate: rotationRate,
            gravity: gravity, userAcceleration: userAcceleration, magneticField: magneticField,
            headingStorage: hasHeading ? .fromAttitude : .value(-1))
    }

    @inlinable @inline(__always)
    init(
        timestamp: Double, attitude: Attitude, referenceFrame: AttitudeReferenceFrame, rotationRate: RotationRate,
        gravity: Acceleration, userAcceleration: Acceleration, magneticField: CalibratedMagneticField?,
        headingStorage: HeadingStorage
    ) {
        self.timestamp = timestamp
        self.attitude = attitude
        self.referenceFrame = referenceFrame
        self.rotationRate = rotationRate
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.magneticField = magneticField
        self.headingStorage = headingStorage
    }

    /// A value at time 0 in `frame`, the device lying flat and still (identity attitude, every vector zero): storage
    /// for a producer to write into in place.
    @inlinable
    package static func placeholder(in frame: AttitudeReferenceFrame) -> DeviceMotion {
        DeviceMotion(
            timestamp: 0, attitude: Attitude(unitQuaternion: .identity), referenceFrame: frame,
            rotationRate: RotationRate(.zero), gravity: Acceleration(.zero), userAcceleration: Acceleration(.zero),
            magneticField: nil, headingStorage: .value(-1))
    }

    /// The azimuth of the device's top (+y) for `attitude` (device → reference frame), clockwise from the reference
    /// x axis, in degrees in [0, 360). When the top points nearly straight up or down (less than about 6° from
    /// vertical), the azimuth of the back (−z) is used instead, as a compass held upright does.
    public static func heading(of attitude: Attitude) -> Double {
        heading(of: attitude.quaternion)
    }

    @inlinable @inline(__always)
    static func heading(of q: Quaternion<Double>) -> Double {
        // The top in the reference frame: the second column of q's rotation matrix; the back: minus the third.
        var (x, y) = (2 * (q.x * q.y - q.w * q.z), 1 - 2 * (q.x * q.x + q.z * q.z))
        if x * x + y * y < 0.01 { (x, y) = (-2 * (q.x * q.z + q.w * q.y), 2 * (q.w * q.x - q.y * q.z)) }
        // Clockwise from x seen from above (z up) is towards −y.
        let degrees = PolynomialTrigonometry<Double>.azimuth(y: -y, x: x) * (180 / .pi)
        return degrees >= 360 ? 0 : degrees  // 2π − a tiny angle rounds to 2π
    }
}

extension DeviceMotion: Hashable {
    /// Equal when every property is, ``heading`` compared by value (however it is stored).
    public static func == (a: DeviceMotion, b: DeviceMotion) -> Bool {
        a.timestamp == b.timestamp && a.attitude == b.attitude && a.referenceFrame == b.referenceFrame
            && a.rotationRate == b.rotationRate && a.gravity == b.gravity && a.userAcceleration == b.userAcceleration
            && a.magneticField == b.magneticField && a.heading == b.heading
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(timestamp)
        hasher.combine(attitude)
        hasher.combine(referenceFrame)
        hasher.combine(rotationRate)
        hasher.combine(gravity)
        hasher.combine(userAcceleration)
        hasher.combine(magneticField)
        hasher.combine(heading)
    }
}
