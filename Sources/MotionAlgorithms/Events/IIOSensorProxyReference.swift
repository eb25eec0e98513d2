import RealModule

/// iio-sensor-proxy's own orientation and tilt rules (`src/orientation.c`, 3.9), ported exactly, for comparing
/// with ``OrientationClassifier`` and for reproducing what a desktop running iio-sensor-proxy would report.
///
/// Both functions take one reading as iio-sensor-proxy sees it: the mount-matrix-corrected accelerometer vector
/// in m/s² (`in_accel_* × scale`), in the sign convention of its source. They reproduce its integer arithmetic:
/// each component becomes `(int)(v × 256 / 9.81)` (truncated towards zero, "1 G ≈ 256"), and angles are
/// rounded to whole degrees (C `round`, half away from zero).
///
/// With swift-motion's `Acceleration` `a` (g, Core Motion's sign), `orientation(reading:previous:)`
/// of `a × 9.81` gives `normal` for portrait, as iio-sensor-proxy's orientation expects that sign; its
/// `tilt(reading:)` of the same vector gives `face-up` for a device lying **screen down**, because
/// iio-sensor-proxy's tilt uses the opposite sign of z (systemd issue 40119). swift-motion's own tilt
/// (``OrientationClassifier/tilt``) uses consistent signs instead.
package enum IIOSensorProxyReference {
    /// The in-plane angle beyond which an edge counts as up, in degrees (`THRESHOLD_PORTRAIT`,
    /// `THRESHOLD_LANDSCAPE`).
    @usableFromInline package static let threshold = 35

    /// `orientation_calc()`: the orientation for one reading, given the previous result.
    ///
    /// `portrait = round(atan2(x, √(y² + z²)))°` and `landscape = round(atan2(y, √(x² + z²)))°`; when both
    /// exceed 35° in size, or neither does (the device is near flat), the previous value is kept; otherwise
    /// the larger one names the edge: `portrait > 35` left-up, `< −35` right-up, `landscape > 35` bottom-up,
    /// `< −35` normal.
    ///
    /// - Parameters:
    ///   - reading: The reading in m/s², in iio-sensor-proxy's frame and sign.
    ///   - previous: The previous result (``IIOSensorProxyOrientation/undefined`` at start).
    /// - Returns: The new orientation; `previous` when the reading is not finite.
    @usableFromInline package static func orientation(reading: SIMD3<Double>, previous: IIOSensorProxyOrientation)
        -> IIOSensorProxyOrientation
    {
        guard let (x, y, z) = integerReading(reading) else { return previous }
        let portrait = degrees(Double.atan2(y: x, x: (y * y + z * z).squareRoot()))
        let landscape = degrees(Double.atan2(y: y, x: (x * x + z * z).squareRoot()))
        if abs(portrait) > threshold && abs(landscape) > threshold { return previous }
        if abs(portrait) > threshold { return portrait > 0 ? .leftUp : .rightUp }
        if abs(landscape) > threshold { return landscape > 0 ? .bottomUp : .normal }
        return previous
    }

    /// `tilt_calc()`: the tilt for one reading, with no memory.
    ///
    /// `tilt = round(atan2(z, √(x² + y²)))°`; `|tilt| ≤ 20` vertical, `20 < |tilt| < 70` tilted-up (`tilt > 0`)
    /// or tilted-down, `70 ≤ |tilt| ≤ 90` face-up (`tilt > 0`) or face-down.
    ///
    /// - Parameter reading: The reading in m/s², in iio-sensor-proxy's frame and sign.
    /// - Returns: The tilt; ``IIOSensorProxyTilt/undefined`` when the reading is not finite.
    @usableFromInline package static func tilt(reading: SIMD3<Double>) -> IIOSensorProxyTilt {
        guard let (x, y, z) = integerReading(reading) else { return .undefined }
        let tilt = degrees(Double.atan2(y: z, x: (x * x + y * y).squareRoot()))
        return IIOSensorProxyTilt.forTilt(degrees: Double(tilt))
    }

    /// The reading in iio-sensor-proxy's integer units (256 per 9.81 m/s², truncated), as `Double`s, or `nil`
    /// when a component is not finite or out of range.
    static func integerReading(_ reading: SIMD3<Double>) -> (Double, Double, Double)? {
        // `in × scale × 256.0 / 9.81` left to right, as C evaluates SCALE(): `× (256 / 9.81)` rounds
        // differently (raw −250 at 9.81/256 m/s² per unit would become −249).
        let scaled = reading * 256.0 / 9.81
        guard scaled.x.isFinite, scaled.y.isFinite, scaled.z.isFinite,
            abs(scaled.x) < 1e9, abs(scaled.y) < 1e9, abs(scaled.z) < 1e9
        else { return nil }
        return (scaled.x.rounded(.towardZero), scaled.y.rounded(.towardZero), scaled.z.rounded(.towardZero))
    }

    /// Radians to whole degrees, rounded half away from zero (C `round`).
    static func degrees(_ radians: Double) -> Int {
        Int((radians * 180 / Double.pi).rounded(.toNearestOrAwayFromZero))
    }
}
