/// How well the device's own magnetic bias has been estimated, as Core Motion's
/// `CMMagneticFieldCalibrationAccuracy`. Levels are ordered: `uncalibrated < low < medium < high`.
///
/// The thresholds of each level (directions covered, spread, fit residual in µT) are in `Docs/Attitude.md`.
public enum MagneticFieldCalibrationAccuracy: Int, Hashable, Sendable, Comparable, CaseIterable, Codable {
    /// No usable estimate yet: the field still carries the device's bias.
    case uncalibrated = -1
    /// A rough estimate from few directions.
    case low = 0
    /// A fair estimate: many directions, small residual.
    case medium = 1
    /// A good estimate: most directions covered, residual about the sensor noise.
    case high = 2

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A magnetic field with the device's own bias (hard-iron offset) removed, and how well that bias is known, as
/// Core Motion's `CMCalibratedMagneticField`.
public struct CalibratedMagneticField: Hashable, Sendable {
    /// The field in µT, device frame: the reading minus the estimated bias.
    public var field: MagneticField
    /// How well the bias removed from ``field`` is known.
    public var accuracy: MagneticFieldCalibrationAccuracy

    /// Creates a calibrated field.
    public init(field: MagneticField, accuracy: MagneticFieldCalibrationAccuracy) {
        self.field = field
        self.accuracy = accuracy
    }
}
