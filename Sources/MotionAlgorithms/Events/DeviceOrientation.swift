public import MotionCore

/// The physical orientation of the device, as UIKit's `UIDeviceOrientation`: which way the device is held
/// relative to gravity, not the orientation of a user interface.
///
/// Each case but ``unknown`` has a direction: the acceleration a device at rest in it reads (gravity in the
/// device frame, Core Motion's sign; see `Docs/Conventions.md`):
///
/// | case | held | reads at rest (g) | iio-sensor-proxy |
/// |---|---|---|---|
/// | ``portrait`` | upright, top of the screen up | (0, −1, 0) | `normal` |
/// | ``portraitUpsideDown`` | upright, top of the screen down | (0, +1, 0) | `bottom-up` |
/// | ``landscapeLeft`` | on its side, right edge up (home button on the right) | (−1, 0, 0) | `right-up` |
/// | ``landscapeRight`` | on its side, left edge up (home button on the left) | (+1, 0, 0) | `left-up` |
/// | ``faceUp`` | flat, screen to the sky | (0, 0, −1) | tilt `face-up` |
/// | ``faceDown`` | flat, screen to the ground | (0, 0, +1) | tilt `face-down` |
///
/// The raw values are UIKit's (`UIDeviceOrientation.unknown` is 0, `.faceDown` is 6).
public enum DeviceOrientation: Int, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Not known yet, or not determinable (no settled reading).
    case unknown = 0
    /// Upright, top of the screen up: reads y ≈ −1 g.
    case portrait = 1
    /// Upright, top of the screen down: reads y ≈ +1 g.
    case portraitUpsideDown = 2
    /// On its side with the device's right edge up (home button on the right): reads x ≈ −1 g.
    case landscapeLeft = 3
    /// On its side with the device's left edge up (home button on the left): reads x ≈ +1 g.
    case landscapeRight = 4
    /// Flat, screen to the sky: reads z ≈ −1 g.
    case faceUp = 5
    /// Flat, screen to the ground: reads z ≈ +1 g.
    case faceDown = 6

    /// The six orientations that have a direction (every case but ``unknown``).
    public static let known: [DeviceOrientation] = [
        .portrait, .portraitUpsideDown, .landscapeLeft, .landscapeRight, .faceUp, .faceDown,
    ]

    /// The unit vector a device at rest in this orientation reads, in g (Core Motion's sign), or zero for
    /// ``unknown``.
    @inlinable
    public func gravity<Scalar: MotionScalar>(_: Scalar.Type = Scalar.self) -> SIMD3<Scalar> {
        switch self {
        case .unknown: .zero
        case .portrait: SIMD3(0, -1, 0)
        case .portraitUpsideDown: SIMD3(0, 1, 0)
        case .landscapeLeft: SIMD3(-1, 0, 0)
        case .landscapeRight: SIMD3(1, 0, 0)
        case .faceUp: SIMD3(0, 0, -1)
        case .faceDown: SIMD3(0, 0, 1)
        }
    }

    /// ``portrait`` or ``portraitUpsideDown`` (UIKit's `isPortrait`).
    @inlinable public var isPortrait: Bool { self == .portrait || self == .portraitUpsideDown }
    /// ``landscapeLeft`` or ``landscapeRight`` (UIKit's `isLandscape`).
    @inlinable public var isLandscape: Bool { self == .landscapeLeft || self == .landscapeRight }
    /// ``faceUp`` or ``faceDown`` (UIKit's `isFlat`).
    @inlinable public var isFlat: Bool { self == .faceUp || self == .faceDown }
    /// Portrait or landscape: an orientation a user interface can take (UIKit's `isValidInterfaceOrientation`).
    @inlinable public var isUpright: Bool { isPortrait || isLandscape }

    /// The orientation whose direction is nearest to `acceleration` (any length), and the cosine of the angle
    /// between them; ``unknown`` with cosine 0 for a zero or non-finite vector.
    @inlinable
    public static func nearest<Scalar: MotionScalar>(to acceleration: SIMD3<Scalar>)
        -> (orientation: DeviceOrientation, cosine: Scalar)
    {
        let length = (acceleration * acceleration).sum().squareRoot()
        guard length > 0, length.isFinite else { return (.unknown, 0) }
        let unit = acceleration / length
        // The largest component by magnitude names the axis; its sign names the end.
        let magnitudes = SIMD3(abs(unit.x), abs(unit.y), abs(unit.z))
        if magnitudes.x >= magnitudes.y && magnitudes.x >= magnitudes.z {
            return (unit.x < 0 ? .landscapeLeft : .landscapeRight, magnitudes.x)
        }
        if magnitudes.y >= magnitudes.z {
            return (unit.y < 0 ? .portrait : .portraitUpsideDown, magnitudes.y)
        }
        return (unit.z < 0 ? .faceUp : .faceDown, magnitudes.z)
    }

    /// The iio-sensor-proxy `AccelerometerOrientation` name of an upright orientation, or `nil` for the flat
    /// ones and ``unknown`` (iio-sensor-proxy has no flat orientation; it keeps the previous one).
    @inlinable
    public var iioSensorProxyOrientation: IIOSensorProxyOrientation? {
        switch self {
        case .portrait: .normal
        case .portraitUpsideDown: .bottomUp
        case .landscapeLeft: .rightUp
        case .landscapeRight: .leftUp
        case .unknown, .faceUp, .faceDown: nil
        }
    }

    /// The case name, such as `landscapeLeft`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .portrait: "portrait"
        case .portraitUpsideDown: "portraitUpsideDown"
        case .landscapeLeft: "landscapeLeft"
        case .landscapeRight: "landscapeRight"
        case .faceUp: "faceUp"
        case .faceDown: "faceDown"
        }
    }

    /// Parses a case name (``description``), such as `faceUp`.
    public init?(name: String) {
        guard let match = DeviceOrientation.allCases.first(where: { $0.description == name }) else { return nil }
        self = match
    }
}

/// iio-sensor-proxy's `AccelerometerOrientation` values (D-Bus property `net.hadess.SensorProxy`), named by the
/// edge of the device that is up. The raw values are the strings iio-sensor-proxy and `monitor-sensor` use.
///
/// iio-sensor-proxy has no flat orientation: lying flat keeps the previous value, and ``undefined`` only appears
/// before the first reading.
public enum IIOSensorProxyOrientation: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// No reading yet.
    case undefined
    /// Upright, top up: ``DeviceOrientation/portrait``.
    case normal
    /// Upright, top down: ``DeviceOrientation/portraitUpsideDown``.
    case bottomUp = "bottom-up"
    /// Left edge up: ``DeviceOrientation/landscapeRight``.
    case leftUp = "left-up"
    /// Right edge up: ``DeviceOrientation/landscapeLeft``.
    case rightUp = "right-up"

    /// The UIKit-style orientation with the same edge up, or ``DeviceOrientation/unknown`` for ``undefined``.
    @inlinable
    public var deviceOrientation: DeviceOrientation {
        switch self {
        case .undefined: .unknown
        case .normal: .portrait
        case .bottomUp: .portraitUpsideDown
        case .leftUp: .landscapeRight
        case .rightUp: .landscapeLeft
        }
    }

    /// The iio-sensor-proxy spelling, such as `left-up`.
    public var description: String { rawValue }
}

/// iio-sensor-proxy's `AccelerometerTilt` values (3.6+): how far the screen is tilted from vertical, and which
/// way. The raw values are the strings iio-sensor-proxy and `monitor-sensor` use.
///
/// swift-motion gives these names **consistent signs**: `face-up` means the screen faces the sky (z ≈ −1 g in
/// Core Motion's sign), in the same frame in which ``IIOSensorProxyOrientation/normal`` means the top is up.
/// iio-sensor-proxy itself computes tilt with the opposite sign of z from its orientation, so fed the same
/// frame it reports `face-up` for a device lying screen down (systemd issue 40119); see `Docs/MotionEvents.md`.
///
/// | case | tilt of the screen towards the sky, θ = asin(−z/‖a‖) |
/// |---|---|
/// | ``vertical`` | \|θ\| ≤ 20° |
/// | ``tiltedUp`` / ``tiltedDown`` | 20° < \|θ\| < 70°, θ > 0 / θ < 0 |
/// | ``faceUp`` / ``faceDown`` | \|θ\| ≥ 70°, θ > 0 / θ < 0 |
public enum IIOSensorProxyTilt: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// No reading yet.
    case undefined
    /// Within 20° of upright.
    case vertical
    /// Screen turned 20–70° towards the sky.
    case tiltedUp = "tilted-up"
    /// Screen turned 20–70° towards the ground.
    case tiltedDown = "tilted-down"
    /// Within 20° of flat, screen to the sky.
    case faceUp = "face-up"
    /// Within 20° of flat, screen to the ground.
    case faceDown = "face-down"

    /// The boundaries of iio-sensor-proxy's tilt classes, in degrees: vertical up to 20°, face-up/down from 70°.
    public static let verticalLimitDegrees = 20.0
    /// See ``verticalLimitDegrees``.
    public static let flatLimitDegrees = 70.0

    /// The class of a tilt angle θ in degrees (positive with the screen towards the sky), with iio-sensor-proxy's
    /// boundaries and no hysteresis: `|θ| ≤ 20` vertical, `20 < |θ| < 70` tilted, `|θ| ≥ 70` face-up/down;
    /// ``undefined`` for |θ| > 90 or a non-finite angle.
    @inlinable
    public static func forTilt(degrees theta: Double) -> IIOSensorProxyTilt {
        let size = abs(theta)
        guard size.isFinite, size <= 90 else { return .undefined }
        if size <= verticalLimitDegrees { return .vertical }
        if size < flatLimitDegrees { return theta > 0 ? .tiltedUp : .tiltedDown }
        return theta > 0 ? .faceUp : .faceDown
    }

    /// The iio-sensor-proxy spelling, such as `face-up`.
    public var description: String { rawValue }
}
