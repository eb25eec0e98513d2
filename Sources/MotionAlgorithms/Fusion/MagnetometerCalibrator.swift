public import MotionCore
import RealModule

/// Settings of a ``MagnetometerCalibrator``. Fields in µT, angles in rad, durations in s.
public struct MagnetometerCalibratorConfiguration: Hashable, Sendable, Codable {
    /// Angle (seen from the fitted centre) within which a reading is averaged into its bin's point instead of
    /// replacing it, in rad (5°).
    @usableFromInline package var averagingAngle: Double = 5 * .pi / 180
    /// Largest number of readings averaged into one bin's point (later readings weigh 1/this).
    @usableFromInline package var maximumAveragedReadings: Double = 16
    /// Distance the binning centre may move before the points are sorted into bins again, in µT.
    @usableFromInline package var rebinningDistance: Double = 2
    /// Before the first fit (no centre to bin around yet): the smallest distance between kept readings, in µT.
    @usableFromInline package var initialSpacing: Double = 10
    /// Shortest interval between fits while readings only change existing points, in s (a point in a new bin is
    /// fitted at once).
    @usableFromInline package var fitInterval: Double = 0.2
    /// Relative deviation of a reading's distance from the fitted centre from the fitted radius beyond which it is a
    /// disturbance and left out of the fit, once the accuracy is at least ``rejectionMinimumAccuracy`` (0.1 = 10 %).
    @usableFromInline package var disturbanceThreshold: Double = 0.1
    /// The accuracy from which disturbances are rejected (below it, every reading is used).
    @usableFromInline package var rejectionMinimumAccuracy: MagneticFieldCalibrationAccuracy = .medium
    /// Time readings must agree with the fit without a break before they enter it again after a disturbance, in s.
    @usableFromInline package var minimumUndisturbedTime: Double = 1
    /// Time readings must stay disturbed (with no break of `minimumUndisturbedTime`) before the calibration is
    /// started again (the device's own field has changed, e.g. a magnet attached to it), in s.
    @usableFromInline package var recalibrationTime: Double = 30
    /// Occupied bins (of 26), spread and residual (µT) each level needs, from `low` to `high`.
    @usableFromInline package var minimumBins: SIMD3<Int> = SIMD3(6, 10, 16)
    /// Smallest eigenvalue of the points' covariance over r²/3 (1 for a uniformly covered sphere, 0 for points on
    /// one plane), from `low` to `high`.
    @usableFromInline package var minimumSpread: SIMD3<Double> = SIMD3(0.05, 0.15, 0.35)
    /// Largest RMS distance of the points from the fitted sphere, in µT, from `low` to `high`.
    @usableFromInline package var maximumResidual: SIMD3<Double> = SIMD3(6, 3, 1.5)
    /// Trust window: a reading joins the window of recent readings (the last 32 kept) when it is at least this far
    /// from the last reading kept, in µT, so that a device held still does not fill the window with one direction.
    @usableFromInline package var trustSpacing: Double = 2
    /// Trust window: the fewest readings it must hold before a fit is applied or dropped.
    @usableFromInline package var minimumTrustReadings: Int = 16
    /// A fit is applied only when the spread of the calibrated field's strength over the window is at most this
    /// fraction of the raw readings' spread (0.5: half as spread out), and at most the spread of the fit in use.
    /// Spread: the median absolute deviation of the strength from its median, over the median.
    @usableFromInline package var trustRatio: Double = 0.5
    /// Relative spread of the field strength that counts as consistent (sensor noise, scale errors of a few per cent
    /// are below it), 0.01 = 1 %: a fit is applied only when the raw readings are more spread out than this, and the
    /// fit in use is dropped only when its own spread exceeds it and the raw readings' spread.
    @usableFromInline package var consistentSpread: Double = 0.01
    /// Shortest interval between two trust checks, in s.
    @usableFromInline package var trustInterval: Double = 0.5
    /// Trust window: the RMS distance of its readings from their mean must be at least this fraction of their RMS
    /// strength before a fit is applied or dropped (0.25: turns of roughly ±20° or more). Readings of a device
    /// held still differ by noise alone, which says nothing about an offset; the spacing lets some of them in.
    @usableFromInline package var minimumTrustRotation: Double = 0.25

    /// The defaults, documented with each property.
    public init() {}
}

/// Estimates a magnetometer's hard-iron offset (the device's own field, which turns with it) online, and reports
/// the field with it removed, as Core Motion's `CMCalibratedMagneticField`.
///
/// Method: readings of a constant external field `e` seen through any rotation lie on a sphere `|m − b| = |e|`
/// around the offset `b`. Each reading is sorted into one of 26 direction bins (as seen from the current centre:
/// the faces, edges and corners of a cube); a bin keeps one point, the mean of its readings within 5° of each
/// other, or the latest. Before the first fit there is no centre: readings at least 10 µT from every kept one are
/// kept instead. A linear least-squares sphere fit over the bins' points (centred, so it reduces to a 3×3
/// solve; at once when a bin is first filled, else at most every 0.2 s) gives `b` and the radius. The accuracy follows from the number of occupied bins, the spread of the points
/// (smallest eigenvalue of their covariance over r²/3) and the fit's RMS residual; once the accuracy is at least
/// medium, a reading whose distance from `b` differs from the radius by more than 10 % is a disturbance (a magnet
/// nearby) and does not enter the fit, nor do the readings of the first 1 s after it. Disturbed readings for 30 s
/// (with no undisturbed second) start the calibration again, and so does a fit whose residual is above `low`'s
/// limit after one at `low` or better (below `medium` nothing is rejected: the device's own field changed).
///
/// Trust: that fit (the candidate) is applied only when the data show it helps. Over a window of the last 32 readings,
/// disturbed or not (kept at least 2 µT apart), the spread of the field strength (median absolute deviation over
/// median) is compared for the raw readings, the candidate and the fit in use: the candidate is applied when the raw
/// spread is above 1 % and the candidate's is at most half of it and no more than the fit in use's; the fit in use is
/// dropped (back to the one it replaced if that still qualifies, else to the raw readings, `uncalibrated`) when its
/// spread is above 1 % and above the raw spread (while the window holds disturbed readings, only for an alternative at
/// least twice as consistent: a passing magnet does not drop a good fit, a fit whose magnet has gone is dropped at the
/// next check after a turn). Nothing is decided while the window's readings span less than a quarter of their strength
/// (a device held still). So a clean raw field is left as it is.
///
/// A pure value type: time comes from the caller, it reads no clock, does no I/O, takes no lock and allocates
/// nothing. Units: µT (any unit works, the residual thresholds are in it), s.
public struct MagnetometerCalibrator: Sendable, Codable {
    /// The settings.
    @usableFromInline package let configuration: MagnetometerCalibratorConfiguration

    // One point per direction bin (index qx·9 + qy·3 + qz, q ∈ {0, 1, 2}; 13 unused), in µT, and the number of
    // readings averaged into it (0: empty).
    var pointX = SIMD32<Double>.zero
    var pointY = SIMD32<Double>.zero
    var pointZ = SIMD32<Double>.zero
    var pointCount = SIMD32<Double>.zero
    // The centre the points were binned around, µT, when `isBinned`; before the first fit the slots hold readings
    // at least `initialSpacing` apart instead.
    var binningCentre: SIMD3<Double> = .zero
    var isBinned = false

    // The latest fit (the candidate): its centre, µT, and level.
    var offset: SIMD3<Double> = .zero
    var fittedRadius: Double = 0
    var fittedResidual: Double = .infinity
    var fittedSpread: Double = 0
    var occupiedBins = 0
    var level = MagneticFieldCalibrationAccuracy.uncalibrated
    var disturbed = false
    var disturbedTime: Double = 0
    var undisturbedTime: Double = .infinity
    var lastTimestamp: Double?
    var lastFitTimestamp: Double = -.infinity
    let averagingCosine: Double

    // The trust window: the last 32 readings kept at least `trustSpacing` apart (raw, µT), a ring.
    var windowX = SIMD32<Double>.zero
    var windowY = SIMD32<Double>.zero
    var windowZ = SIMD32<Double>.zero
    var windowCount = 0
    var windowNext = 0
    var windowKeptSinceCheck = 0
    // Bit k set: the reading in slot k was disturbed (its distance from the candidate's centre off the radius).
    var disturbedSlots: UInt32 = 0
    var lastKept = SIMD3<Double>(repeating: .infinity)
    var lastCheckTimestamp: Double = -.infinity
    var fitSinceCheck = false
    // The fit in use (zero and `uncalibrated`: the raw readings) and the one it replaced.
    var applied: SIMD3<Double> = .zero
    var appliedLevel = MagneticFieldCalibrationAccuracy.uncalibrated
    var previous: SIMD3<Double>?
    var previousLevel = MagneticFieldCalibrationAccuracy.uncalibrated
    // While the raw readings are used: their strength was consistent at the last checks (at most
    // `consistentSpread`, and not yet above twice it), so they need no offset removed.
    var rawIsConsistent = false
    // Spreads at the last check: raw readings, the fit in use.
    var lastRawSpread: Double = .nan
    var lastAppliedSpread: Double = .nan

    /// Creates a calibrator with no estimate (offset zero, `uncalibrated`).
    public init(configuration: MagnetometerCalibratorConfiguration = .init()) {
        self.configuration = configuration
        averagingCosine = Double.cos(configuration.averagingAngle)
    }

    /// The hard-iron offset in use, in µT (device frame): the latest fit that has earned trust (see
    /// `isFitApplied`), or zero while the raw readings are used.
    public var bias: SIMD3<Double> { applied }
    /// The accuracy of the field reported: the applied fit's level. While the raw readings are used, the latest fit's
    /// level (from coverage, spread and residual) when the raw strength itself has been consistent over turns (a
    /// device with no offset worth removing is calibrated as it is), else `uncalibrated`.
    public var accuracy: MagneticFieldCalibrationAccuracy {
        appliedLevel >= .low ? appliedLevel : (rawIsConsistent ? level : .uncalibrated)
    }
    /// `true` while a fit is applied; `false` while the reported field is the raw reading.
    @usableFromInline package var isFitApplied: Bool { appliedLevel >= .low }
    /// The latest fit's centre, in µT, whether or not it is applied (zero before the first fit that reaches `low`).
    @usableFromInline package var candidateBias: SIMD3<Double> { offset }
    /// The latest fit's accuracy from coverage, spread and residual alone, whether or not it is applied.
    @usableFromInline package var candidateAccuracy: MagneticFieldCalibrationAccuracy { level }
    /// The spread of the raw readings' strength over the trust window at the last check (median absolute deviation
    /// over the median; NaN before the first check).
    @usableFromInline package var rawSpread: Double { lastRawSpread }
    /// The spread of the calibrated strength over the trust window at the last check, for the fit in use (equal to
    /// ``rawSpread`` while none is).
    @usableFromInline package var calibratedSpread: Double { lastAppliedSpread }
    /// The strength of the external field in the latest fit, in µT (0 before the first fit).
    public var radius: Double { fittedRadius }
    /// The RMS distance of the bins' points from the latest fit's sphere, in µT (infinity before the first fit).
    @usableFromInline package var residual: Double { fittedResidual }
    /// The smallest eigenvalue of the points' covariance over r²/3: about 1 when the readings cover the sphere
    /// evenly, 0 when they lie on one plane (a turn about one axis only).
    @usableFromInline package var spread: Double { fittedSpread }
    /// The number of occupied direction bins, of 26.
    @usableFromInline package var coverage: Int { occupiedBins }
    /// `true` from a disturbed reading until readings agree with the fit for
    /// `MagnetometerCalibratorConfiguration.minimumUndisturbedTime`; readings meanwhile stay out of the fit.
    public var isDisturbed: Bool { disturbed }

    /// `field` with the estimated offset removed, and the accuracy.
    public func calibrated(_ field: SIMD3<Double>) -> CalibratedMagneticField {
        CalibratedMagneticField(field: MagneticField(field - applied), accuracy: accuracy)
    }

    /// Processes one reading and returns it calibrated.
    /// - Parameters:
    ///   - field: The magnetometer reading in µT, device frame. Non-finite or zero readings are reported but not
    ///     used.
    ///   - timestamp: Seconds, non-decreasing; only the disturbance duration uses it.
    @discardableResult
    public mutating func update(_ field: SIMD3<Double>, at timestamp: Double) -> CalibratedMagneticField {
        let dt = lastTimestamp.map { min(max(timestamp - $0, 0), 1) } ?? 0
        lastTimestamp = timestamp
        let n2 = (field * field).sum()
        guard n2 > 0, n2.isFinite else { return calibrated(field) }

        if level >= configuration.rejectionMinimumAccuracy {
            // |distance − r| > threshold·r, compared squared: no square root.
            let d = field - offset
            let distance2 = (d * d).sum()
            let margin = configuration.disturbanceThreshold * fittedRadius
            let (near, far) = (fittedRadius - margin, fittedRadius + margin)
            if distance2 > far * far || (near > 0 && distance2 < near * near) {
                disturbed = true
                undisturbedTime = 0
                disturbedTime += dt
                if disturbedTime >= configuration.recalibrationTime { restart() }
                keep(field, disturbed: true)
                checkTrustWhenDue(at: timestamp)
                return calibrated(field)
            }
            // A disturbance ends after agreeing readings for a while: a disturbed field can pass through the
            // sphere's shell by chance.
            undisturbedTime += dt
            if undisturbedTime < configuration.minimumUndisturbedTime {
                disturbedTime += dt
                keep(field, disturbed: true)
                checkTrustWhenDue(at: timestamp)
                return calibrated(field)
            }
        }
        disturbed = false
        disturbedTime = 0
        keep(field, disturbed: false)
        switch insert(field) {
        case .none: break
        case .changed where timestamp - lastFitTimestamp < configuration.fitInterval: break
        case .changed, .added:
            fit()
            lastFitTimestamp = timestamp
            if level >= .low { fitSinceCheck = true }
        }
        checkTrustWhenDue(at: timestamp)
        return calibrated(field)
    }

    /// Checks trust when the window or the candidate has changed and the last check is `trustInterval` old.
    @inline(__always)
    mutating func checkTrustWhenDue(at timestamp: Double) {
        if (windowKeptSinceCheck > 0 || fitSinceCheck)
            && timestamp - lastCheckTimestamp >= configuration.trustInterval
        {
            checkTrust()
            lastCheckTimestamp = timestamp
        }
    }

    /// Adds `field` to the trust window when it is at least `trustSpacing` from the last reading kept, disturbed or
    /// not: the fit in use is judged on what the magnetometer reads now, also when the candidate rejects all of it
    /// (the fit of a magnet that has since gone).
    @inline(__always)
    mutating func keep(_ field: SIMD3<Double>, disturbed: Bool) {
        let d = field - lastKept
        guard !((d * d).sum() < configuration.trustSpacing * configuration.trustSpacing) else { return }
        lastKept = field
        let k = windowNext
        withUnsafeMutableBytes(of: &windowX) { $0.storeBytes(of: field.x, toByteOffset: 8 * k, as: Double.self) }
        withUnsafeMutableBytes(of: &windowY) { $0.storeBytes(of: field.y, toByteOffset: 8 * k, as: Double.self) }
        withUnsafeMutableBytes(of: &windowZ) { $0.storeBytes(of: field.z, toByteOffset: 8 * k, as: Double.self) }
        if disturbed { disturbedSlots |= 1 << UInt32(k) } else { disturbedSlots &= ~(1 << UInt32(k)) }
        windowNext = (windowNext + 1) & 31
        windowCount = min(windowCount + 1, 32)
        windowKeptSinceCheck += 1
    }

    /// Applies the latest fit when the calibrated strength is clearly more consistent over the window than the raw
    /// readings' and no less than the fit in use's; drops the fit in use (back to the previous one if it still
    /// qualifies, else to the raw readings) when it is no longer more consistent than the raw readings.
    mutating func checkTrust() {
        windowKeptSinceCheck = 0
        let c = configuration
        guard windowCount >= c.minimumTrustReadings, windowRotation >= c.minimumTrustRotation else { return }
        let raw = strengthSpread(around: .zero)
        var inUse = appliedLevel >= .low ? strengthSpread(around: applied) : raw
        @inline(__always) func qualifies(_ s: Double) -> Bool { raw > c.consistentSpread && s <= c.trustRatio * raw }
        if fitSinceCheck {
            fitSinceCheck = false
            if level >= .low && (offset != applied || level != appliedLevel) {
                let candidate = offset == applied ? inUse : strengthSpread(around: offset)
                if qualifies(candidate) && candidate <= inUse {
                    if appliedLevel >= .low && offset != applied { (previous, previousLevel) = (applied, appliedLevel) }
                    (applied, appliedLevel, inUse) = (offset, level, candidate)
                }
            }
        }
        if appliedLevel >= .low && inUse > c.consistentSpread && disturbedSlots == 0 && inUse > raw {
            if let p = previous, case let s = strengthSpread(around: p), qualifies(s) {
                (applied, appliedLevel, inUse) = (p, previousLevel, s)
            } else {
                (applied, appliedLevel, inUse) = (.zero, .uncalibrated, raw)
            }
            previous = nil
        } else if appliedLevel >= .low && inUse > c.consistentSpread && disturbedSlots != 0 {
            // Disturbed readings in the window: a magnet near, which no centre makes consistent, or the device's own
            // field has changed (a magnet taken off: the raw readings or the previous fit are consistent again). The
            // fit in use is dropped only for one at least twice as consistent, the margin a fit needs to be applied.
            let needed = c.trustRatio * inUse
            if let p = previous, case let s = strengthSpread(around: p), s <= needed && s <= raw {
                (applied, appliedLevel, inUse) = (p, previousLevel, s)
                previous = nil
            } else if raw <= needed {
                (applied, appliedLevel, inUse) = (.zero, .uncalibrated, raw)
                previous = nil
            }
        }
        // Twice the threshold to lose it: a raw spread near the threshold does not make the accuracy flicker.
        if raw <= c.consistentSpread {
            rawIsConsistent = true
        } else if raw > 2 * c.consistentSpread {
            rawIsConsistent = false
        }
        lastRawSpread = raw
        lastAppliedSpread = inUse
    }

    /// The RMS distance of the window's readings from their mean over their RMS strength.
    var windowRotation: Double {
        let n = Double(windowCount)
        let (mx, my, mz) = (windowX.sum() / n, windowY.sum() / n, windowZ.sum() / n)
        let squares = ((windowX * windowX).sum() + (windowY * windowY).sum() + (windowZ * windowZ).sum()) / n
        let mean2 = mx * mx + my * my + mz * mz
        guard squares > 0 else { return 0 }
        return (max(squares - mean2, 0) / squares).squareRoot()
    }

    /// The spread of |m − centre| over the trust window: the median absolute deviation from the median, over the
    /// median.
    /// (Mutating only to read the window in place: `withUnsafeBytes(of:)` on a value copies it first.)
    mutating func strengthSpread(around centre: SIMD3<Double>) -> Double {
        // Slots past the window's readings hold infinity, which sorts last.
        var scratch = SIMD32<Double>(repeating: .infinity)
        let n = windowCount
        return withUnsafeBytes(of: &windowX) { xs in
            withUnsafeBytes(of: &windowY) { ys in
                withUnsafeBytes(of: &windowZ) { zs in
                    withUnsafeMutableBytes(of: &scratch) { buffer in
                        let (x, y, z) = (
                            xs.assumingMemoryBound(to: Double.self), ys.assumingMemoryBound(to: Double.self),
                            zs.assumingMemoryBound(to: Double.self))
                        let m = buffer.baseAddress!.assumingMemoryBound(to: Double.self)
                        for i in 0..<n {
                            let (dx, dy, dz) = (x[i] - centre.x, y[i] - centre.y, z[i] - centre.z)
                            m[i] = (dx * dx + dy * dy + dz * dz).squareRoot()
                        }
                        Self.sort32(m)
                        let median = m[n / 2]
                        guard median > 0 else { return .infinity }
                        return Self.deviation(n / 2, around: n / 2, inSorted: m, count: n) / median
                    }
                }
            }
        }
    }

    /// The `k`-th smallest of `|values[i] − values[middle]|` over `values[0..<count]`, sorted ascending: the
    /// deviations below `middle` grow leftwards and those from it grow rightwards, so the two runs are merged from
    /// `middle` outwards for `k + 1` steps. The same value as selecting among the deviations (`a − b` is exactly
    /// `−(b − a)`), with no second selection.
    static func deviation(
        _ k: Int, around middle: Int, inSorted values: UnsafeMutablePointer<Double>, count: Int
    ) -> Double {
        let centre = values[middle]
        var (below, above) = (middle - 1, middle)
        var deviation = 0.0
        for _ in 0...k {
            let a = below >= 0 ? centre - values[below] : .infinity
            let b = above < count ? values[above] - centre : .infinity
            let takeBelow = a < b
            deviation = takeBelow ? a : b
            below -= takeBelow ? 1 : 0
            above += takeBelow ? 0 : 1
        }
        return deviation
    }

    /// Sorts `values[0..<32]` ascending (no NaN): Batcher's odd–even merge sort network, 191 compare-exchanges with
    /// no branch. On unordered data the comparisons of a selection cannot be predicted; a network has none to
    /// predict, and one sort gives the median and, merged outwards, the median deviation.
    /// Generated: Knuth's Algorithm M (TAOCP 5.3.4) for t = 5; checked against sorting by
    /// `MagnetometerTrustTests.sortingNetworkSorts`.
    static func sort32(_ values: UnsafeMutablePointer<Double>) {
        @inline(__always) func cx(_ i: Int, _ j: Int) {
            let (a, b) = (values[i], values[j])
            values[i] = Swift.min(a, b)
            values[j] = Swift.max(a, b)
        }
        cx(0, 16); cx(1, 17); cx(2, 18); cx(3, 19); cx(4, 20); cx(5, 21); cx(6, 22); cx(7, 23); cx(8, 24)
        cx(9, 25); cx(10, 26); cx(11, 27); cx(12, 28); cx(13, 29); cx(14, 30); cx(15, 31); cx(0, 8); cx(1, 9)
        cx(2, 10); cx(3, 11); cx(4, 12); cx(5, 13); cx(6, 14); cx(7, 15); cx(16, 24); cx(17, 25); cx(18, 26)
        cx(19, 27); cx(20, 28); cx(21, 29); cx(22, 30); cx(23, 31); cx(8, 16); cx(9, 17); cx(10, 18); cx(11, 19)
        cx(12, 20); cx(13, 21); cx(14, 22); cx(15, 23); cx(0, 4); cx(1, 5); cx(2, 6); cx(3, 7); cx(8, 12)
        cx(9, 13); cx(10, 14); cx(11, 15); cx(16, 20); cx(17, 21); cx(18, 22); cx(19, 23); cx(24, 28); cx(25, 29)
        cx(26, 30); cx(27, 31); cx(4, 16); cx(5, 17); cx(6, 18); cx(7, 19); cx(12, 24); cx(13, 25); cx(14, 26)
        cx(15, 27); cx(4, 8); cx(5, 9); cx(6, 10); cx(7, 11); cx(12, 16); cx(13, 17); cx(14, 18); cx(15, 19)
        cx(20, 24); cx(21, 25); cx(22, 26); cx(23, 27); cx(0, 2); cx(1, 3); cx(4, 6); cx(5, 7); cx(8, 10)
        cx(9, 11); cx(12, 14); cx(13, 15); cx(16, 18); cx(17, 19); cx(20, 22); cx(21, 23); cx(24, 26); cx(25, 27)
        cx(28, 30); cx(29, 31); cx(2, 16); cx(3, 17); cx(6, 20); cx(7, 21); cx(10, 24); cx(11, 25); cx(14, 28)
        cx(15, 29); cx(2, 8); cx(3, 9); cx(6, 12); cx(7, 13); cx(10, 16); cx(11, 17); cx(14, 20); cx(15, 21)
        cx(18, 24); cx(19, 25); cx(22, 28); cx(23, 29); cx(2, 4); cx(3, 5); cx(6, 8); cx(7, 9); cx(10, 12)
        cx(11, 13); cx(14, 16); cx(15, 17); cx(18, 20); cx(19, 21); cx(22, 24); cx(23, 25); cx(26, 28); cx(27, 29)
        cx(0, 1); cx(2, 3); cx(4, 5); cx(6, 7); cx(8, 9); cx(10, 11); cx(12, 13); cx(14, 15); cx(16, 17)
        cx(18, 19); cx(20, 21); cx(22, 23); cx(24, 25); cx(26, 27); cx(28, 29); cx(30, 31); cx(1, 16); cx(3, 18)
        cx(5, 20); cx(7, 22); cx(9, 24); cx(11, 26); cx(13, 28); cx(15, 30); cx(1, 8); cx(3, 10); cx(5, 12)
        cx(7, 14); cx(9, 16); cx(11, 18); cx(13, 20); cx(15, 22); cx(17, 24); cx(19, 26); cx(21, 28); cx(23, 30)
        cx(1, 4); cx(3, 6); cx(5, 8); cx(7, 10); cx(9, 12); cx(11, 14); cx(13, 16); cx(15, 18); cx(17, 20)
        cx(19, 22); cx(21, 24); cx(23, 26); cx(25, 28); cx(27, 30); cx(1, 2); cx(3, 4); cx(5, 6); cx(7, 8)
        cx(9, 10); cx(11, 12); cx(13, 14); cx(15, 16); cx(17, 18); cx(19, 20); cx(21, 22); cx(23, 24); cx(25, 26)
        cx(27, 28); cx(29, 30)
    }

    /// Forgets the times seen (for a new session on another clock); the fits, points and trust window stay.
    mutating func forgetTime() {
        lastTimestamp = nil
        lastFitTimestamp = -.infinity
        lastCheckTimestamp = -.infinity
        disturbedTime = 0
    }

    /// Forgets the points and the accuracy; the offset stays as the starting centre.
    mutating func restart() {
        pointX = .zero
        pointY = .zero
        pointZ = .zero
        pointCount = .zero
        isBinned = false
        occupiedBins = 0
        lastFitTimestamp = -.infinity
        fitSinceCheck = false
        level = .uncalibrated
        rawIsConsistent = false
        fittedResidual = .infinity
        fittedSpread = 0
        disturbedTime = 0
        undisturbedTime = .infinity
    }

    /// The bin of `p` as seen from `centre`: each component's sign, or 0 within ±22.5° of the perpendicular plane.
    static func bin(of p: SIMD3<Double>, around centre: SIMD3<Double>) -> Int {
        let u = p - centre
        // |c| > sin 22.5°·|u| compared squared: no square root.
        let threshold2 = 0.14644660940672624 * (u * u).sum()  // sin² 22.5°
        @inline(__always) func q(_ c: Double) -> Int { c * c > threshold2 ? (c > 0 ? 2 : 0) : 1 }
        return q(u.x) * 9 + q(u.y) * 3 + q(u.z)
    }

    /// What a reading did to the points.
    enum Insertion { case none, changed, added }

    mutating func insert(_ p: SIMD3<Double>) -> Insertion {
        guard isBinned else { return insertSpaced(p) ? .added : .none }
        let i = Self.bin(of: p, around: binningCentre)
        let centre = binningCentre
        let (cosineLimit, maximumCount) = (averagingCosine, configuration.maximumAveragedReadings)
        // Through pointers: SIMD32's per-lane access with a variable index compiles to slow code on Linux.
        return withUnsafeMutableBytes(of: &pointX) { xs in
            withUnsafeMutableBytes(of: &pointY) { ys in
                withUnsafeMutableBytes(of: &pointZ) { zs in
                    withUnsafeMutableBytes(of: &pointCount) { counts in
                        let (x, y, z, n) = (
                            xs.baseAddress!.assumingMemoryBound(to: Double.self),
                            ys.baseAddress!.assumingMemoryBound(to: Double.self),
                            zs.baseAddress!.assumingMemoryBound(to: Double.self),
                            counts.baseAddress!.assumingMemoryBound(to: Double.self))
                        let count = n[i]
                        if count > 0 {
                            let old = SIMD3(x[i], y[i], z[i])
                            let a = old - centre, b = p - centre
                            if Self.isWithin(cosine: cosineLimit, (a * b).sum(), (a * a).sum() * (b * b).sum()) {
                                let newCount = min(count + 1, maximumCount)
                                let mean = old + (p - old) / newCount
                                (x[i], y[i], z[i], n[i]) = (mean.x, mean.y, mean.z, newCount)
                                return .changed
                            }
                        }
                        (x[i], y[i], z[i], n[i]) = (p.x, p.y, p.z, 1)
                        return count > 0 ? .changed : .added
                    }
                }
            }
        }
    }

    /// `dot / √product ≥ cosine` (the angle between two vectors within the one of `cosine`, given their dot product
    /// and the product of their squared lengths), compared squared for a positive `cosine`: no square root and no
    /// division on the path of every reading. False for a zero vector.
    @inline(__always)
    static func isWithin(cosine: Double, _ dot: Double, _ product: Double) -> Bool {
        guard cosine > 0 else { return dot / product.squareRoot() >= cosine }
        return dot >= 0 && product > 0 && dot * dot >= cosine * cosine * product
    }

    /// Before the first fit: keeps `p` when it is at least `initialSpacing` from every kept reading, in a free slot
    /// or in place of the nearest one when all 27 are taken.
    mutating func insertSpaced(_ p: SIMD3<Double>) -> Bool {
        let s2 = configuration.initialSpacing * configuration.initialSpacing
        var slot = -1
        var nearest = 0
        var nearestDistance = Double.infinity
        var tooClose = false
        // Plain loops over the lanes: SIMD32's per-lane access, masks and reductions compile to slow code on Linux.
        // `of: &…`: the by-value form copies each 256-byte vector first.
        withUnsafeBytes(of: &pointX) { xs in
            withUnsafeBytes(of: &pointY) { ys in
                withUnsafeBytes(of: &pointZ) { zs in
                    withUnsafeBytes(of: &pointCount) { counts in
                        let (x, y, z, n) = (
                            xs.assumingMemoryBound(to: Double.self), ys.assumingMemoryBound(to: Double.self),
                            zs.assumingMemoryBound(to: Double.self), counts.assumingMemoryBound(to: Double.self))
                        for i in 0..<27 {
                            if n[i] == 0 {
                                if slot < 0 { slot = i }
                                continue
                            }
                            let (dx, dy, dz) = (x[i] - p.x, y[i] - p.y, z[i] - p.z)
                            let d2 = dx * dx + dy * dy + dz * dz
                            if d2 < s2 {
                                tooClose = true
                                return
                            }
                            if d2 < nearestDistance { (nearest, nearestDistance) = (i, d2) }
                        }
                    }
                }
            }
        }
        if tooClose { return false }
        if slot < 0 { slot = nearest }
        (pointX[slot], pointY[slot], pointZ[slot], pointCount[slot]) = (p.x, p.y, p.z, 1)
        return true
    }

    /// Sorts the points into bins around `centre` again (a later point wins a shared bin).
    mutating func rebin(around centre: SIMD3<Double>) {
        let (x, y, z, c) = (pointX, pointY, pointZ, pointCount)
        (pointX, pointY, pointZ, pointCount) = (.zero, .zero, .zero, .zero)
        binningCentre = centre
        isBinned = true
        for i in 0..<27 where c[i] > 0 {
            let j = Self.bin(of: SIMD3(x[i], y[i], z[i]), around: centre)
            (pointX[j], pointY[j], pointZ[j], pointCount[j]) = (x[i], y[i], z[i], c[i])
        }
    }

    /// The sphere fit over the bins' points, and the accuracy.
    mutating func fit() {
        // Plain loops over the lanes (see `insertSpaced`).
        var n = 0.0
        var mean = SIMD3<Double>.zero
        var sxx = 0.0, syy = 0.0, szz = 0.0, sxy = 0.0, sxz = 0.0, syz = 0.0, qSum = 0.0
        var t = SIMD3<Double>.zero
        // The points in place (`of: &…`): a copy of the four 256-byte vectors, and the by-value form, which copies
        // each again, took about 370 of a fit's 2 820 instructions.
        @inline(__always) func lanes<R>(
            _ body: (UnsafePointer<Double>, UnsafePointer<Double>, UnsafePointer<Double>, UnsafePointer<Double>) -> R
        ) -> R {
            withUnsafeBytes(of: &pointX) { xs in
                withUnsafeBytes(of: &pointY) { ys in
                    withUnsafeBytes(of: &pointZ) { zs in
                        withUnsafeBytes(of: &pointCount) { cs in
                            body(
                                xs.baseAddress!.assumingMemoryBound(to: Double.self),
                                ys.baseAddress!.assumingMemoryBound(to: Double.self),
                                zs.baseAddress!.assumingMemoryBound(to: Double.self),
                                cs.baseAddress!.assumingMemoryBound(to: Double.self))
                        }
                    }
                }
            }
        }
        lanes { x, y, z, c in
            for i in 0..<27 where c[i] > 0 {
                n += 1
                mean += SIMD3(x[i], y[i], z[i])
            }
            guard n > 0 else { return }
            mean /= n
            // Centred points x: |x|² = 2x·b' + c. With Σx = 0 the normal equations give S·b' = Σ x|x|² / 2 (S the
            // scatter matrix) and c = mean |x|²; the radius is √(c + |b'|²).
            for i in 0..<27 where c[i] > 0 {
                let (dx, dy, dz) = (x[i] - mean.x, y[i] - mean.y, z[i] - mean.z)
                let q = dx * dx + dy * dy + dz * dz
                sxx += dx * dx; syy += dy * dy; szz += dz * dz
                sxy += dx * dy; sxz += dx * dz; syz += dy * dz
                t += SIMD3(dx, dy, dz) * q
                qSum += q
            }
        }
        occupiedBins = Int(n)
        guard n >= 4 else { return }
        t /= 2
        // S⁻¹ by cofactors.
        let c11 = syy * szz - syz * syz, c12 = sxz * syz - sxy * szz, c13 = sxy * syz - sxz * syy
        let c22 = sxx * szz - sxz * sxz, c23 = sxy * sxz - sxx * syz, c33 = sxx * syy - sxy * sxy
        let det = sxx * c11 + sxy * c12 + sxz * c13
        var candidate = MagneticFieldCalibrationAccuracy.uncalibrated
        if det > 0 && det.isFinite {
            let local = SIMD3(
                c11 * t.x + c12 * t.y + c13 * t.z,
                c12 * t.x + c22 * t.y + c23 * t.z,
                c13 * t.x + c23 * t.y + c33 * t.z) / det
            let r2 = qSum / n + (local * local).sum()
            if r2 > 0 && r2.isFinite {
                let r = r2.squareRoot()
                let centre = mean + local
                let squares = lanes { x, y, z, c in
                    var sum = 0.0
                    for i in 0..<27 where c[i] > 0 {
                        let (ex, ey, ez) = (x[i] - centre.x, y[i] - centre.y, z[i] - centre.z)
                        let deviation = (ex * ex + ey * ey + ez * ez).squareRoot() - r
                        sum += deviation * deviation
                    }
                    return sum
                }
                let residual = (squares / n).squareRoot()
                let spread = Self.smallestEigenvalue(
                    sxx / n, syy / n, szz / n, sxy / n, sxz / n, syz / n) / (r2 / 3)
                let c = configuration
                for k in 0..<3 where occupiedBins >= c.minimumBins[k] && spread >= c.minimumSpread[k]
                    && residual <= c.maximumResidual[k] {
                    candidate = MagneticFieldCalibrationAccuracy(rawValue: k) ?? .uncalibrated
                }
                if candidate >= .low {
                    offset = centre
                    fittedRadius = r
                    fittedResidual = residual
                    fittedSpread = spread
                } else if level == .uncalibrated {
                    fittedResidual = residual
                    fittedSpread = spread
                } else if residual > configuration.maximumResidual[0] {
                    // There was a fit, and the points no longer lie on one sphere: the device's own field changed
                    // (a magnet attached or removed) while the fit was too weak to reject the readings as
                    // disturbances (below `rejectionMinimumAccuracy`). Points of the old field would stay in the
                    // bins the device no longer turns into and keep every later fit from reaching `low`: start again
                    // from the readings to come. The fit in use stays until the trust check drops it.
                    restart()
                    return
                }
            }
        }
        if candidate >= .low || level >= .low {
            level = candidate >= .low ? candidate : .low
        }
        // Bin around the fitted centre once there is one.
        guard level >= .low else { return }
        let moved = offset - binningCentre
        if !isBinned || (moved * moved).sum() > configuration.rebinningDistance * configuration.rebinningDistance {
            rebin(around: offset)
        }
    }

    /// The smallest eigenvalue of the symmetric matrix [[a, d, e], [d, b, f], [e, f, c]] (closed form).
    static func smallestEigenvalue(
        _ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double
    ) -> Double {
        let p1 = d * d + e * e + f * f
        let mean = (a + b + c) / 3
        let p2 = (a - mean) * (a - mean) + (b - mean) * (b - mean) + (c - mean) * (c - mean) + 2 * p1
        guard p2 > 0 else { return mean }
        let p = (p2 / 6).squareRoot()
        let (ba, bb, bc, bd, be, bf) = ((a - mean) / p, (b - mean) / p, (c - mean) / p, d / p, e / p, f / p)
        let half = (ba * (bb * bc - bf * bf) - bd * (bd * bc - bf * be) + be * (bd * bf - bb * be)) / 2
        let phi = Double.acos(min(max(half, -1), 1)) / 3
        return mean + 2 * p * Double.cos(phi + 2 * .pi / 3)
    }
}
