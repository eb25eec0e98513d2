/// Processed motion: attitude, unbiased rotation rate, gravity and user acceleration, as Core Motion's
/// `CMDeviceMotion`.
///
/// Frames and units: every vector is in the device frame; accelerations in g with Core Motion's sign
/// (`acceleration = gravity + userAcceleration`), rotation rate in rad/s, magnetic field in µT, heading in degrees.
public struct DeviceMotion: Hashable, Sendable {
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
    public var heading: Double

    /// Creates a device-motion value.
    public init(
        timestamp: Double, attitude: Attitude, referenceFrame: AttitudeReferenceFrame, rotationRate: RotationRate,
        gravity: Acceleration, userAcceleration: Acceleration, magneticField: CalibratedMagneticField? = nil,
        heading: Double = -1
    ) {
        self.timestamp = timestamp
        self.attitude = attitude
        self.referenceFrame = referenceFrame
        self.rotationRate = rotationRate
        self.gravity = gravity
        self.userAcceleration = userAcceleration
        self.magneticField = magneticField
        self.heading = heading
    }
}
