public import MotionCore

/// One accelerometer reading, as Core Motion's `CMAccelerometerData`.
public struct AccelerometerData: Hashable, Sendable {
    /// When the reading was taken, in seconds on the source's clock (`CLOCK_BOOTTIME` for devices, the trace's
    /// `t` column for recordings).
    public var timestamp: Double
    /// The acceleration in g, device frame, Core Motion's sign (face up at rest reads z ≈ −1).
    public var acceleration: Acceleration

    /// Creates a reading.
    public init(timestamp: Double, acceleration: Acceleration) {
        self.timestamp = timestamp
        self.acceleration = acceleration
    }
}

/// One gyroscope reading, as Core Motion's `CMGyroData`: the raw rate, bias included.
public struct GyroData: Hashable, Sendable {
    /// When the reading was taken, in seconds on the source's clock.
    public var timestamp: Double
    /// The rotation rate in rad/s about the device's axes, right-handed.
    public var rotationRate: RotationRate

    /// Creates a reading.
    public init(timestamp: Double, rotationRate: RotationRate) {
        self.timestamp = timestamp
        self.rotationRate = rotationRate
    }
}

/// One magnetometer reading, as Core Motion's `CMMagnetometerData`: the raw field, device bias included.
public struct MagnetometerData: Hashable, Sendable {
    /// When the reading was taken, in seconds on the source's clock.
    public var timestamp: Double
    /// The magnetic field in µT, device frame.
    public var magneticField: MagneticField

    /// Creates a reading.
    public init(timestamp: Double, magneticField: MagneticField) {
        self.timestamp = timestamp
        self.magneticField = magneticField
    }
}
