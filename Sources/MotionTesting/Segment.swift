public import MotionCore

/// One stretch of a ``Scenario``: a duration and what the device does during it.
///
/// Every segment starts at the attitude the previous one ended at, so attitude, rotation rate and acceleration
/// stay continuous across segments. Create segments with the static factories; each validates its arguments
/// with a precondition (they are programmer input, not user input).
///
/// Motions and the user acceleration they produce (g, Core Motion's sign, in the device frame):
/// - ``hold(_:)``: still.
/// - ``rotate(to:duration:)-(Attitude,_)``, ``rotate(toGravity:duration:)``,
///   ``tilt(by:about:duration:)``: slerp with quintic smoothstep easing, so rotation rate and angular
///   acceleration are continuous and zero at both ends; no translation.
/// - ``slowRotation(by:about:duration:)``: a constant-rate turn with smooth ramps over the first and last 20 %.
/// - ``shake(axis:frequency:amplitude:duration:)``: `amplitude · cos(2π f t)` along a device axis for a whole
///   number of strokes, so the device starts and stops at rest at the ends of a stroke, with no drift; the
///   attitude does not change.
/// - ``gait(_:duration:)``, ``walking(duration:cadence:)``, ``running(duration:cadence:)``: see ``Gait``.
/// - ``tap(axis:peak:width:duration:)``: a half-sine impulse followed by a rebound of half the height and
///   twice the width (no net velocity change).
/// - ``vibration(duration:amplitude:frequency:axis:)``: a motor tone plus broadband noise, point-sampled, so it
///   aliases as a real accelerometer's output does.
/// - ``setDown(onto:bump:duration:)-(Attitude,_,_)``: lowered onto a table while turning to the final
///   attitude, then an impact.
public struct Segment: Hashable, Sendable, CustomStringConvertible {
    enum Motion: Hashable, Sendable {
        case hold
        case rotate(to: Target)
        case turn(angle: Double, axis: RotationAxis, easing: Easing, name: String)
        case shake(axis: DeviceAxis, frequency: Double, amplitude: Double)
        case gait(Gait)
        case tap(axis: DeviceAxis, peak: Double, width: Double)
        case vibration(frequency: Double, amplitude: Double, axis: DeviceAxis)
        case setDown(onto: Target, bump: Double)
    }

    /// Where a rotation ends: a given attitude, or the smallest turn that makes gravity read a given direction.
    enum Target: Hashable, Sendable {
        case attitude(Attitude)
        /// A unit vector in the device frame.
        case gravity(SIMD3<Double>)

        /// The nearest named orientation to the target's gravity, and the angle from it.
        var nearestOrientation: (orientation: NamedOrientation, angle: Double) {
            switch self {
            case .attitude(let attitude): NamedOrientation.nearest(to: attitude)
            case .gravity(let gravity): NamedOrientation.nearest(toGravity: Acceleration(gravity))
            }
        }
    }

    /// How a rotation progresses from 0 to 1.
    enum Easing: Hashable, Sendable {
        /// Quintic smoothstep over the whole segment.
        case smooth
        /// Constant rate, with smooth ramps over `fraction` of the segment at each end.
        case ramped(fraction: Double)
    }

    let motion: Motion
    /// The segment's length, in seconds.
    public let duration: Double

    init(_ motion: Motion, duration: Double) {
        precondition(duration > 0 && duration.isFinite, "a segment's duration must be a positive number of seconds")
        self.motion = motion
        self.duration = duration
    }

    // MARK: Factories

    /// Holds the current attitude still for `duration` seconds.
    public static func hold(_ duration: Double) -> Segment {
        Segment(.hold, duration: duration)
    }

    /// Turns smoothly from the current attitude to `attitude` along the shortest path.
    public static func rotate(to attitude: Attitude, duration: Double = 1) -> Segment {
        Segment(.rotate(to: .attitude(attitude)), duration: duration)
    }

    /// Turns smoothly from the current attitude to a named orientation at `heading` radians.
    public static func rotate(to orientation: NamedOrientation, heading: Double, duration: Double = 1) -> Segment {
        rotate(to: orientation.attitude(heading: heading), duration: duration)
    }

    /// Turns smoothly, by the smallest rotation, until a device at rest reads `gravity` (its direction; the
    /// length is ignored). The turn is about the axis perpendicular to the old and new gravity, so the heading
    /// changes as little as possible; a half turn goes about the device's z axis when it can (the screen keeps
    /// facing the user), else about x.
    ///
    /// - Precondition: `gravity` is finite and not zero.
    public static func rotate(toGravity gravity: Acceleration, duration: Double = 1) -> Segment {
        Segment(.rotate(to: .gravity(unitGravity(gravity))), duration: duration)
    }

    /// Turns smoothly, by the smallest rotation, into a named orientation (see ``rotate(toGravity:duration:)``).
    public static func rotate(to orientation: NamedOrientation, duration: Double = 1) -> Segment {
        rotate(toGravity: orientation.gravity, duration: duration)
    }

    static func unitGravity(_ gravity: Acceleration) -> SIMD3<Double> {
        let g = gravity.vector
        let length = (g * g).sum().squareRoot()
        precondition(length > 0 && length.isFinite, "the target gravity must be finite and not zero")
        return g / length
    }

    /// Tilts by `angle` radians about a device axis (right-hand rule), with smooth easing.
    public static func tilt(by angle: Double, about axis: DeviceAxis = .x, duration: Double = 1) -> Segment {
        precondition(angle.isFinite, "the tilt angle must be finite")
        return Segment(.turn(angle: angle, axis: .device(axis), easing: .smooth, name: "tilt"), duration: duration)
    }

    /// Turns by `angle` radians (any size, several turns allowed) about `axis` at a constant rate, ramping the
    /// rate up and down smoothly over the first and last 20 % of the segment.
    public static func slowRotation(by angle: Double, about axis: RotationAxis = .vertical, duration: Double) -> Segment
    {
        precondition(angle.isFinite, "the rotation angle must be finite")
        return Segment(
            .turn(angle: angle, axis: axis, easing: .ramped(fraction: 0.2), name: "slowRotation"),
            duration: duration
        )
    }

    /// Shakes along a device axis: user acceleration `amplitude · cos(2π · frequency · t)` g.
    ///
    /// The device starts at rest at one end of a stroke (half a cycle) and the duration is rounded to a whole
    /// number of strokes, at least two (one cycle), so it also stops at rest; the velocity swings around zero and
    /// the displacement stays within `amplitude · 9.80665 m/s² / (2π f)²` of the middle.
    ///
    /// - Parameters:
    ///   - axis: The device axis of the motion.
    ///   - frequency: Back-and-forth cycles per second, in Hz.
    ///   - amplitude: Peak user acceleration, in g.
    ///   - duration: Seconds, before rounding to whole strokes.
    public static func shake(axis: DeviceAxis, frequency: Double, amplitude: Double, duration: Double) -> Segment {
        precondition(frequency > 0 && frequency.isFinite, "the shake frequency must be positive")
        precondition(amplitude >= 0 && amplitude.isFinite, "the shake amplitude must be finite and not negative")
        precondition(duration > 0 && duration.isFinite, "a segment's duration must be a positive number of seconds")
        let strokes = max(2, (2 * frequency * duration).rounded())
        return Segment(
            .shake(axis: axis, frequency: frequency, amplitude: amplitude),
            duration: strokes / (2 * frequency)
        )
    }

    /// Walks or runs with `gait`, carrying the device in its current attitude.
    public static func gait(_ gait: Gait, duration: Double) -> Segment {
        Segment(.gait(gait), duration: duration)
    }

    /// Walks at `cadence` steps per second (see ``Gait/walking``).
    public static func walking(duration: Double, cadence: Double = Gait.walking.cadence) -> Segment {
        gait(.walking(cadence: cadence), duration: duration)
    }

    /// Runs at `cadence` steps per second (see ``Gait/running``).
    public static func running(duration: Double, cadence: Double = Gait.running.cadence) -> Segment {
        gait(.running(cadence: cadence), duration: duration)
    }

    /// A tap: an impulse that starts ``tapOffset`` seconds into the segment.
    ///
    /// - Parameters:
    ///   - axis: The device axis the impulse is along.
    ///   - peak: Peak user acceleration in g; negative for the opposite direction.
    ///   - width: The impulse's length in seconds (10–30 ms for a finger tap). Impulses shorter than two
    ///     sample periods can fall between samples, as on a real sensor.
    ///   - duration: The segment's length; at least `tapOffset + 3 · width`.
    public static func tap(axis: DeviceAxis = .z, peak: Double = 1.5, width: Double = 0.02, duration: Double = 0.3)
        -> Segment
    {
        precondition(peak.isFinite, "the tap peak must be finite")
        precondition(width > 0 && width.isFinite, "the tap width must be positive")
        precondition(duration >= tapOffset + 3 * width, "a tap segment must last at least 0.05 s + 3 × width")
        return Segment(.tap(axis: axis, peak: peak, width: width), duration: duration)
    }

    /// Where a tap's impulse starts within its segment, in seconds.
    public static let tapOffset = 0.05

    /// A vibration motor: a tone of `amplitude` g at `frequency` Hz along `axis` plus white noise of standard
    /// deviation `amplitude / 2` on every axis, ramped over 20 ms at each end.
    ///
    /// Samples are taken at instants, so a tone above half the sample rate aliases (170 Hz at 100 Hz reads as
    /// 30 Hz), as it does on a phone.
    public static func vibration(
        duration: Double,
        amplitude: Double = 0.15,
        frequency: Double = 170,
        axis: DeviceAxis = .x
    ) -> Segment {
        precondition(amplitude >= 0 && amplitude.isFinite, "the vibration amplitude must be finite and not negative")
        precondition(frequency > 0 && frequency.isFinite, "the vibration frequency must be positive")
        return Segment(.vibration(frequency: frequency, amplitude: amplitude, axis: axis), duration: duration)
    }

    /// Sets the device down on a table: it is lowered (a few centimetres) while turning smoothly to
    /// `attitude`, lands with an upward deceleration pulse of `bump` g peak lasting 30 ms, and rests.
    ///
    /// The lowering takes `0.4 s + 0.6 s × (turn angle / π)`, at most half the segment; the impact follows.
    public static func setDown(onto attitude: Attitude, bump: Double = 1, duration: Double = 1.5) -> Segment {
        setDown(.attitude(attitude), bump: bump, duration: duration)
    }

    /// Sets the device down in a named orientation (``NamedOrientation/faceUp`` or ``NamedOrientation/faceDown``
    /// on a table), turning by the smallest rotation that gets there (see ``rotate(toGravity:duration:)``).
    public static func setDown(onto orientation: NamedOrientation = .faceUp, bump: Double = 1, duration: Double = 1.5)
        -> Segment
    {
        setDown(.gravity(orientation.gravity.vector), bump: bump, duration: duration)
    }

    /// Sets the device down in a named orientation at `heading` radians.
    public static func setDown(
        onto orientation: NamedOrientation,
        heading: Double,
        bump: Double = 1,
        duration: Double = 1.5
    ) -> Segment {
        setDown(onto: orientation.attitude(heading: heading), bump: bump, duration: duration)
    }

    private static func setDown(_ target: Target, bump: Double, duration: Double) -> Segment {
        precondition(bump >= 0 && bump.isFinite, "the set-down bump must be finite and not negative")
        precondition(duration >= 0.2, "a set-down segment must last at least 0.2 s")
        return Segment(.setDown(onto: target, bump: bump), duration: duration)
    }

    /// The width of a set-down's impact pulse, in seconds.
    static let setDownImpactWidth = 0.03

    // MARK: Description

    /// The kind of motion: `hold`, `rotate`, `tilt`, `slowRotation`, `shake`, `walking`, `running` (or another
    /// gait's name), `tap`, `vibration` or `setDown`.
    public var kind: String {
        switch motion {
        case .hold: "hold"
        case .rotate: "rotate"
        case .turn(_, _, _, let name): name
        case .shake: "shake"
        case .gait(let gait): gait.name
        case .tap: "tap"
        case .vibration: "vibration"
        case .setDown: "setDown"
        }
    }

    /// `true` for a shake, the ground truth a shake detector is scored against.
    public var isShake: Bool {
        if case .shake = motion { true } else { false }
    }

    /// The kind and its parameters, such as `shake axis=x frequency=4.000Hz amplitude=1.500g duration=1.000s`.
    public var description: String {
        let parameters: String
        switch motion {
        case .hold:
            parameters = ""
        case .rotate(let target):
            let (orientation, angle) = target.nearestOrientation
            parameters = " to=\(orientation)+\(degrees(angle))"
        case .turn(let angle, let axis, _, _):
            parameters = " angle=\(degrees(angle)) axis=\(axis)"
        case .shake(let axis, let frequency, let amplitude):
            parameters = " axis=\(axis) frequency=\(fixed(frequency, 3))Hz amplitude=\(fixed(amplitude, 3))g"
        case .gait(let gait):
            parameters = " cadence=\(fixed(gait.cadence, 3))Hz bounce=\(fixed(gait.bounce, 3))g"
        case .tap(let axis, let peak, let width):
            parameters = " axis=\(axis) peak=\(fixed(peak, 3))g width=\(fixed(width, 3))s"
        case .vibration(let frequency, let amplitude, let axis):
            parameters = " axis=\(axis) frequency=\(fixed(frequency, 1))Hz amplitude=\(fixed(amplitude, 3))g"
        case .setDown(let target, let bump):
            let (orientation, angle) = target.nearestOrientation
            parameters = " onto=\(orientation)+\(degrees(angle)) bump=\(fixed(bump, 3))g"
        }
        return kind + parameters + " duration=\(fixed(duration, 3))s"
    }
}
