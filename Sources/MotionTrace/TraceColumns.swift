public import MotionCore

/// The columns of the canonical trace format and their units.
///
/// | column | meaning | unit |
/// |---|---|---|
/// | `t` | timestamp (required) | s |
/// | `ax`, `ay`, `az` | acceleration, Core Motion sign (see `Acceleration`) | g |
/// | `gx`, `gy`, `gz` | rotation rate | rad/s |
/// | `mx`, `my`, `mz` | magnetic field | µT |
///
/// A reader accepts the columns in any order; a sensor's three columns must all be present or all absent.
/// Writers use the canonical order above.
public enum TraceColumns {
    /// Every column name in canonical order: `t, ax, ay, az, gx, gy, gz, mx, my, mz`.
    public static let all: [String] = ["t", "ax", "ay", "az", "gx", "gy", "gz", "mx", "my", "mz"]

    /// The column names for a set of sensors in canonical order, starting with `t`.
    public static func names(for sensors: SensorSet) -> [String] {
        var names = ["t"]
        for (index, sensor) in groupSensors.enumerated() where sensors.contains(sensor) {
            names += all[(1 + 3 * index)..<(4 + 3 * index)]
        }
        return names
    }

    /// The sensors of groups 0, 1 and 2 (slots 1–3, 4–6, 7–9).
    static let groupSensors: [SensorSet] = [.accelerometer, .gyroscope, .magnetometer]

    /// The slot (index in ``all``) of a column name given as bytes, or `nil`.
    static func slot(of name: UnsafeBufferPointer<UInt8>) -> Int? {
        all.firstIndex { $0.utf8.elementsEqual(name) }
    }
}
