/// How a device carried by a walking or running person moves: a vertical bounce at the step frequency, a sideways
/// sway at half of it, a forward surge, and a small attitude wobble.
///
/// Amplitudes are peaks of the user acceleration in g; each component is a cosine of the step phase, so its
/// velocity swings around zero (the walker's steady forward speed is not modelled: no sensor sees it). The
/// forward direction is where the back of the device points (or its top, when it is carried nearly flat).
public struct Gait: Hashable, Sendable, CustomStringConvertible {
    /// `walking` or `running`: the segment kind the gait labels.
    public var name: String
    /// Steps per second (the bounce frequency), in Hz.
    public var cadence: Double
    /// Peak vertical user acceleration of the step's fundamental, in g (a second harmonic of a quarter of it
    /// is added).
    public var bounce: Double
    /// Peak sideways user acceleration, at half the cadence (one sway per stride), in g.
    public var sway: Double
    /// Peak forward user acceleration, at the cadence, in g.
    public var surge: Double
    /// Peak attitude wobble, in radians.
    public var wobble: Double

    /// Creates a gait.
    ///
    /// - Precondition: `cadence` is positive; amplitudes are finite and not negative.
    public init(name: String, cadence: Double, bounce: Double, sway: Double, surge: Double, wobble: Double) {
        precondition(cadence > 0 && cadence.isFinite, "cadence must be a positive number of steps per second")
        for value in [bounce, sway, surge, wobble] {
            precondition(value >= 0 && value.isFinite, "gait amplitudes must be finite and not negative")
        }
        self.name = name
        self.cadence = cadence
        self.bounce = bounce
        self.sway = sway
        self.surge = surge
        self.wobble = wobble
    }

    /// Walking: 1.9 steps/s, 0.2 g bounce, 0.06 g sway, 0.1 g surge, 0.03 rad wobble.
    public static let walking = Gait(name: "walking", cadence: 1.9, bounce: 0.2, sway: 0.06, surge: 0.1, wobble: 0.03)

    /// Running: 2.8 steps/s, 0.9 g bounce, 0.2 g sway, 0.3 g surge, 0.08 rad wobble.
    public static let running = Gait(name: "running", cadence: 2.8, bounce: 0.9, sway: 0.2, surge: 0.3, wobble: 0.08)

    /// Walking at `cadence` steps per second, other values as ``walking``.
    public static func walking(cadence: Double) -> Gait {
        var gait = Gait.walking
        gait.cadence = cadence
        return gait
    }

    /// Running at `cadence` steps per second, other values as ``running``.
    public static func running(cadence: Double) -> Gait {
        var gait = Gait.running
        gait.cadence = cadence
        return gait
    }

    /// `walking cadence=1.900Hz bounce=0.200g …`.
    public var description: String {
        "\(name) cadence=\(fixed(cadence, 3))Hz bounce=\(fixed(bounce, 3))g sway=\(fixed(sway, 3))g "
            + "surge=\(fixed(surge, 3))g wobble=\(fixed(wobble, 3))rad"
    }
}
