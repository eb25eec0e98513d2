import MotionCore
import RealModule

// The closed-form motion of each segment kind: attitude and user acceleration as functions of the time since the
// segment started. The simulator derives the rotation rate from the attitude, so the gyroscope always agrees
// with it.

/// Quintic smoothstep `6x⁵ − 15x⁴ + 10x³` on [0, 1], clamped outside: first and second derivatives are zero at
/// both ends.
@inline(__always)
func smootherstep(_ x: Double) -> Double {
    let u = min(max(x, 0), 1)
    return u * u * u * (u * (u * 6 - 15) + 10)
}

/// `∫₀ˣ smootherstep` for x in [0, 1]: `x⁶ − 3x⁵ + 2.5x⁴`.
@inline(__always)
func smootherstepIntegral(_ x: Double) -> Double {
    let u = min(max(x, 0), 1)
    let u4 = u * u * u * u
    return u4 * (u * (u - 3) + 2.5)
}

/// Progress in [0, 1] of a turn at constant rate whose rate ramps smoothly (smootherstep) from zero over the
/// first `fraction` of the time and back to zero over the last.
@inline(__always)
func rampedProgress(_ u: Double, fraction rho: Double) -> Double {
    let u = min(max(u, 0), 1)
    let total = 1 - rho
    let covered: Double
    if u < rho {
        covered = rho * smootherstepIntegral(u / rho)
    } else if u > 1 - rho {
        covered = total - rho * smootherstepIntegral((1 - u) / rho)
    } else {
        covered = rho / 2 + (u - rho)
    }
    return covered / total
}

/// A taper that rises smoothly from 0 to 1 over `ramp` seconds after 0 and falls back over `ramp` seconds
/// before `length`.
@inline(__always)
func taper(_ t: Double, ramp: Double, length: Double) -> Double {
    guard ramp > 0 else { return t >= 0 && t <= length ? 1 : 0 }
    return smootherstep(min(t, length - t) / ramp)
}

/// The rotation vector (angle · axis, angle in [0, π]) of a unit quaternion; the inverse of
/// `Quaternion(rotationVector:)`.
@inline(__always)
func rotationVector(of q: Quaternion<Double>) -> SIMD3<Double> {
    var w = q.w
    var v = q.imaginary
    if w < 0 {
        w = -w
        v = -v
    }
    let sine = (v * v).sum().squareRoot()
    guard sine > 1e-300 else { return 2 * v }
    return v * (2 * Double.atan2(y: sine, x: w) / sine)
}

/// Per-segment constants, worked out once when the segment is added to a scenario.
struct SegmentModel: Hashable, Sendable {
    /// The device→reference attitude at the start.
    var start: Quaternion<Double>
    /// The rotation over the segment as a body-frame rotation vector (rotations and set-downs).
    var rotation: SIMD3<Double> = .zero
    /// Horizontal forward and left directions in the reference frame (gaits).
    var forward: SIMD3<Double> = SIMD3(1, 0, 0)
    var left: SIMD3<Double> = SIMD3(0, 1, 0)
    /// The length of a set-down's lowering phase, in seconds.
    var lowering: Double = 0

    init(segment: Segment, start: Quaternion<Double>) {
        self.start = start
        switch segment.motion {
        case .rotate(let target):
            rotation = SegmentModel.rotation(from: start, to: target)
        case .setDown(let target, _):
            rotation = SegmentModel.rotation(from: start, to: target)
            let angle = (rotation * rotation).sum().squareRoot()
            lowering = min(0.4 + 0.6 * angle / Double.pi, segment.duration / 2)
        case .turn(let angle, let axis, _, _):
            switch axis {
            case .device(let deviceAxis):
                rotation = angle * deviceAxis.unitVector
            case .vertical:
                // Turning by `angle` about the world's z is `exp(angle·ẑ) · q₀ = q₀ · exp(angle · q₀*ẑq₀)`.
                rotation = angle * start.conjugate.act(on: SIMD3(0, 0, 1))
            }
        case .gait:
            var heading = start.act(on: SIMD3(0, 0, -1))
            heading.z = 0
            if (heading * heading).sum() < 0.25 {
                heading = start.act(on: SIMD3(0, 1, 0))
                heading.z = 0
            }
            let length = (heading * heading).sum().squareRoot()
            forward = length > 1e-9 ? heading / length : SIMD3(1, 0, 0)
            left = cross(SIMD3(0, 0, 1), forward)
        case .hold, .shake, .tap, .vibration:
            break
        }
    }

    /// The body-frame rotation vector that turns `start` to `target` by the shortest path.
    static func rotation(from start: Quaternion<Double>, to target: Segment.Target) -> SIMD3<Double> {
        switch target {
        case .attitude(let attitude):
            return rotationVector(of: start.conjugate * attitude.quaternion)
        case .gravity(let wanted):
            // After a body-frame turn r, gravity in the device frame is r* · current, so r must take `wanted`
            // to `current`: about wanted × current, by the angle between them.
            let current = start.conjugate.act(on: SIMD3(0, 0, -1))
            let axis = cross(wanted, current)
            let sine = (axis * axis).sum().squareRoot()
            let cosine = (wanted * current).sum()
            let angle = Double.atan2(y: sine, x: cosine)
            if sine > 1e-9 { return axis * (angle / sine) }
            guard cosine < 0 else { return .zero }
            // Opposite directions: half a turn about an axis perpendicular to gravity, z when possible.
            let preferred: SIMD3<Double> = abs(wanted.z) < 0.9 ? SIMD3(0, 0, 1) : SIMD3(1, 0, 0)
            let perpendicular = preferred - (preferred * wanted).sum() * wanted
            return Double.pi * perpendicular / (perpendicular * perpendicular).sum().squareRoot()
        }
    }

    /// The device→reference attitude `t` seconds into `segment` (clamped to the segment).
    @inline(__always)
    func attitude(at t: Double, in segment: Segment) -> Quaternion<Double> {
        let length = segment.duration
        let t = min(max(t, 0), length)
        switch segment.motion {
        case .hold, .shake, .tap, .vibration:
            return start
        case .rotate:
            return start * Quaternion(rotationVector: smootherstep(t / length) * rotation)
        case .turn(_, _, let easing, _):
            let progress =
                switch easing {
                case .smooth: smootherstep(t / length)
                case .ramped(let fraction): rampedProgress(t / length, fraction: fraction)
                }
            return start * Quaternion(rotationVector: progress * rotation)
        case .setDown:
            return start * Quaternion(rotationVector: smootherstep(t / lowering) * rotation)
        case .gait(let gait):
            let envelope = taper(t, ramp: min(0.5, length / 4), length: length)
            let phase = 2 * Double.pi * gait.cadence * t
            let wobble =
                gait.wobble * envelope
                * SIMD3(Double.sin(phase + 0.3), 0.6 * Double.sin(phase / 2), 0.4 * Double.sin(phase / 2 + 1.1))
            return start * Quaternion(rotationVector: wobble)
        }
    }

    /// The deterministic part of the user acceleration (g, Core Motion's sign, device frame) `t` seconds into
    /// `segment`, for a device at `attitude`.
    @inline(__always)
    func userAcceleration(at t: Double, in segment: Segment, attitude: Quaternion<Double>) -> SIMD3<Double> {
        let length = segment.duration
        guard t >= 0 && t <= length else { return .zero }
        switch segment.motion {
        case .hold, .rotate, .turn:
            return .zero
        case .shake(let axis, let frequency, let amplitude):
            // Kinematic acceleration −amplitude·g·cos(ωt): velocity −(amplitude·g/ω)·sin(ωt) is zero at t = 0
            // and at the end (a whole number of strokes).
            return amplitude * Double.cos(2 * Double.pi * frequency * t) * axis.unitVector
        case .tap(let axis, let peak, let width):
            let s = t - Segment.tapOffset
            let value: Double
            if s < 0 || s > 3 * width {
                value = 0
            } else if s <= width {
                value = peak * Double.sin(Double.pi * s / width)
            } else {
                value = -peak / 2 * Double.sin(Double.pi * (s - width) / (2 * width))
            }
            return value * axis.unitVector
        case .vibration(let frequency, let amplitude, let axis):
            let envelope = taper(t, ramp: min(0.02, length / 2), length: length)
            return amplitude * envelope * Double.sin(2 * Double.pi * frequency * t) * axis.unitVector
        case .gait(let gait):
            let envelope = taper(t, ramp: min(0.5, length / 4), length: length)
            let phase = 2 * Double.pi * gait.cadence * t
            // Cosines, so each velocity component swings around zero instead of drifting.
            let vertical = gait.bounce * (Double.cos(phase) + 0.25 * Double.cos(2 * phase))
            let sideways = gait.sway * Double.cos(phase / 2)
            let forwards = gait.surge * Double.cos(phase + 0.5)
            let inReference = envelope * (SIMD3(0, 0, vertical) + sideways * left + forwards * forward)
            return attitude.conjugate.act(on: inReference)
        case .setDown(_, let bump):
            // Kinematic vertical acceleration in m/s²: smooth lowering to speed v₀, then a half-sine impact that
            // stops it. User acceleration (Core Motion's sign) is its negation, in g.
            let width = Segment.setDownImpactWidth
            let landingSpeed = bump * Acceleration.standardGravity * 2 * width / Double.pi
            let kinematic: Double
            if t < lowering {
                let u = t / lowering
                kinematic = -landingSpeed * 30 * u * u * (1 - u) * (1 - u) / lowering
            } else if t < lowering + width {
                kinematic = bump * Acceleration.standardGravity * Double.sin(Double.pi * (t - lowering) / width)
            } else {
                kinematic = 0
            }
            return attitude.conjugate.act(on: SIMD3(0, 0, -kinematic / Acceleration.standardGravity))
        }
    }

    /// The standard deviation of the random (broadband) part of the user acceleration, in g, or 0.
    @inline(__always)
    func noiseLevel(at t: Double, in segment: Segment) -> Double {
        guard case .vibration(_, let amplitude, _) = segment.motion, t >= 0, t <= segment.duration else { return 0 }
        return amplitude / 2 * taper(t, ramp: min(0.02, segment.duration / 2), length: segment.duration)
    }
}
