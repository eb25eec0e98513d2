public import MotionCore
import RealModule

/// A device orientation named as UIKit's `UIDeviceOrientation`, with the attitude the simulator uses for it and
/// the acceleration a device at rest in it reads.
///
/// The device frame is x right, y to the top of the screen, z out of the screen; the reference frame is x north,
/// y west, z up (see `Attitude`). Every vertical orientation keeps the screen facing reference −y (east), as a
/// user turns the device in front of them; ``faceUp`` is the identity attitude and ``faceDown`` is ``faceUp``
/// turned half a turn about the device's y axis.
///
/// | Orientation | Up in the world | Reading at rest (g) |
/// |---|---|---|
/// | ``portrait`` | device +y (top) | (0, −1, 0) |
/// | ``portraitUpsideDown`` | device −y | (0, +1, 0) |
/// | ``landscapeLeft`` | device +x (right side; home button on the right) | (−1, 0, 0) |
/// | ``landscapeRight`` | device −x (left side; home button on the left) | (+1, 0, 0) |
/// | ``faceUp`` | device +z (screen to the sky) | (0, 0, −1) |
/// | ``faceDown`` | device −z (screen to the ground) | (0, 0, +1) |
public enum NamedOrientation: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Upright, top of the screen up.
    case portrait
    /// Upright, top of the screen down.
    case portraitUpsideDown
    /// Landscape with the device's right side up (home button on the right).
    case landscapeLeft
    /// Landscape with the device's left side up (home button on the left).
    case landscapeRight
    /// Flat, screen to the sky.
    case faceUp
    /// Flat, screen to the ground.
    case faceDown

    /// The device→reference attitude the simulator uses, heading 0.
    public var attitude: Attitude {
        switch self {
        case .faceUp: .identity
        case .faceDown: Attitude(quaternion: Quaternion(angle: .pi, axis: SIMD3(0, 1, 0)))
        case .portrait: NamedOrientation.portraitAttitude
        case .portraitUpsideDown: NamedOrientation.upright(turnedBy: .pi)
        case .landscapeLeft: NamedOrientation.upright(turnedBy: .pi / 2)
        case .landscapeRight: NamedOrientation.upright(turnedBy: -.pi / 2)
        }
    }

    /// The attitude turned by `heading` radians about the vertical (counter-clockwise seen from above).
    ///
    /// Gravity in the device frame, and so the reading at rest, does not depend on the heading.
    public func attitude(heading: Double) -> Attitude {
        Attitude(quaternion: Quaternion(angle: heading, axis: SIMD3(0, 0, 1)) * attitude.quaternion)
    }

    /// The acceleration a device at rest in this orientation reads (gravity in the device frame), in g.
    public var gravity: Acceleration {
        switch self {
        case .portrait: Acceleration(x: 0, y: -1, z: 0)
        case .portraitUpsideDown: Acceleration(x: 0, y: 1, z: 0)
        case .landscapeLeft: Acceleration(x: -1, y: 0, z: 0)
        case .landscapeRight: Acceleration(x: 1, y: 0, z: 0)
        case .faceUp: Acceleration(x: 0, y: 0, z: -1)
        case .faceDown: Acceleration(x: 0, y: 0, z: 1)
        }
    }

    /// The orientation whose ``gravity`` is closest in angle to `gravity`, and that angle in radians.
    ///
    /// A zero vector gives ``faceUp`` with angle π/2.
    public static func nearest(toGravity gravity: Acceleration) -> (orientation: NamedOrientation, angle: Double) {
        let g = gravity.vector
        let length = (g * g).sum().squareRoot()
        guard length > 0 else { return (.faceUp, .pi / 2) }
        var best = NamedOrientation.faceUp
        var bestDot = -Double.infinity
        for candidate in allCases {
            let dot = (candidate.gravity.vector * g).sum() / length
            if dot > bestDot {
                bestDot = dot
                best = candidate
            }
        }
        return (best, Double.acos(min(max(bestDot, -1), 1)))
    }

    /// The orientation closest to `attitude`'s gravity, and the angle between the two gravity directions.
    public static func nearest(to attitude: Attitude) -> (orientation: NamedOrientation, angle: Double) {
        nearest(toGravity: attitude.gravity)
    }

    /// The case name, such as `landscapeLeft`.
    public var description: String { rawValue }

    /// Portrait: face up tilted top-up by a quarter turn about the device x axis (pitch π/2, screen facing −y).
    private static let portraitAttitude = Attitude(roll: 0, pitch: .pi / 2, yaw: 0)

    /// Portrait turned by `angle` about the screen normal (device z), so the screen keeps facing the user.
    private static func upright(turnedBy angle: Double) -> Attitude {
        Attitude(quaternion: portraitAttitude.quaternion * Quaternion(angle: angle, axis: SIMD3(0, 0, 1)))
    }
}

/// One of the device's axes: x right, y to the top of the screen, z out of the screen.
public enum DeviceAxis: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Along the right edge of the screen.
    case x
    /// Towards the top of the screen.
    case y
    /// Out of the screen.
    case z

    /// The unit vector of the axis in the device frame.
    public var unitVector: SIMD3<Double> {
        switch self {
        case .x: SIMD3(1, 0, 0)
        case .y: SIMD3(0, 1, 0)
        case .z: SIMD3(0, 0, 1)
        }
    }

    /// `x`, `y` or `z`.
    public var description: String { rawValue }
}

/// The axis a turn is about: one of the device's own axes, or the world's vertical.
public enum RotationAxis: Hashable, Sendable, CustomStringConvertible {
    /// A device axis (right-hand rule in the device frame).
    case device(DeviceAxis)
    /// The reference frame's z axis, up (positive turns are counter-clockwise seen from above).
    case vertical

    /// `x`, `y`, `z` or `vertical`.
    public var description: String {
        switch self {
        case .device(let axis): axis.rawValue
        case .vertical: "vertical"
        }
    }
}

extension Attitude {
    /// The `index`-th of a sequence of attitudes spread over all directions: roll steps by the golden angle,
    /// the sine of pitch by the golden ratio (equal area), yaw by 1.3 rad. Consecutive ones are far apart, and a
    /// few dozen cover the sphere, as a magnetometer calibration needs ("tumbling" scenarios).
    public static func spread(_ index: Int) -> Attitude {
        let roll = (Double(index) * 2.399963).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        let pitch = Double.asin(2 * (Double(index) * 0.618034).truncatingRemainder(dividingBy: 1) - 1)
        return Attitude(roll: roll, pitch: pitch, yaw: Double(index) * 1.3)
    }
}
