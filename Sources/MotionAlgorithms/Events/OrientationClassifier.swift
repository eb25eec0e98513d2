public import MotionCore
public import RealModule

/// Turns accelerometer samples into device-orientation changes that users can trust: one change per real
/// rotation, none while the device is carried, shaken or bumped, and no flapping near a boundary.
///
/// Each sample goes through four stages:
/// 1. **Low-pass** (``Configuration/cutoff``, default 1 Hz): the gravity estimate, free of noise, taps and
///    shakes.
/// 2. **Classification with a dead zone**: the nearest of the six ``DeviceOrientation`` directions. A change
///    to a new orientation is proposed only once gravity is within `45° − hysteresis` of it (default 30°), so
///    neighbouring orientations are separated by a dead zone of `2 × hysteresis` (default 30°) in which the
///    current orientation is kept. The first orientation (from ``DeviceOrientation/unknown``) only needs the
///    nearest direction within 45°, and keeps its claim while gravity stays within 45° + hysteresis of it.
/// 3. **Acceleration gate**: a sample whose magnitude differs from 1 g by more than
///    ``Configuration/accelerationTolerance`` (default 0.2 g) marks the device as being moved; no change is
///    reported until it has been still for ``Configuration/settleTime``.
/// 4. **Settle time** (default 0.5 s): a proposal must stand, unchanged, for that long before it is reported,
///    and the gravity estimate must have stayed within ``Configuration/stabilityAngle`` (default 10°) of one
///    direction meanwhile, so that a rotation passing through an orientation does not report it.
///
/// The same stages give the iio-sensor-proxy tilt (``tilt``, with its own dead zone
/// ``Configuration/tiltHysteresis`` around its 20° and 70° boundaries) and orientation
/// (``iioSensorProxyOrientation``: the last upright orientation, kept while the device lies flat, as
/// iio-sensor-proxy does).
///
/// A pure value-type state machine: it reads no clock (timestamps are input), does no I/O and allocates
/// nothing. Generic over `Float` and `Double`.
///
/// ```swift
/// var classifier = OrientationClassifier<Double>()
/// for sample in samples {
///     guard let a = sample.acceleration else { continue }
///     if let change = classifier.update(a.vector, at: sample.timestamp), change.orientationChanged {
///         print(change.timestamp, change.orientation)
///     }
/// }
/// ```
public struct OrientationClassifier<Scalar: MotionScalar>: Sendable {
    /// The classifier's settings. Every default is documented with its unit.
    public struct Configuration: Hashable, Sendable {
        /// The low-pass cutoff applied before classifying, in Hz. Default 1 Hz (time constant 0.16 s; Android's
        /// auto-rotate uses 0.2 s).
        public var cutoff: Scalar
        /// Half the dead zone between neighbouring orientations, in radians. Default 15° (0.2618 rad): a new
        /// orientation is taken once gravity is within 30° of it. Must be in [0, π/4).
        public var hysteresis: Scalar
        /// Half the dead zone around iio-sensor-proxy's tilt boundaries (20° and 70°), in radians. Default 5°
        /// (0.0873 rad). Must be in [0, 0.17] (10°), so the tilt classes keep a core.
        public var tiltHysteresis: Scalar
        /// How long a proposed change must stand, and how long the device must have been still, before the
        /// change is reported, in seconds. Default 0.5 s.
        public var settleTime: Double
        /// How far the gravity estimate may turn while a change settles, in radians. Default 10° (0.1745 rad):
        /// a device turning faster than 20°/s on average is not settled. Must be > 0.
        public var stabilityAngle: Scalar
        /// How far the magnitude of a sample may be from 1 g before the device counts as being moved, in g.
        /// Default 0.2 g (Android's auto-rotate uses 4 m/s², 0.41 g).
        public var accelerationTolerance: Scalar
        /// A gap between samples longer than this, in seconds, restarts the filter (a sensor that was off).
        /// Default 1 s (as Android's auto-rotate).
        public var maximumGap: Double

        /// Creates a configuration; every parameter has the documented default.
        ///
        /// - Precondition: `cutoff > 0`; `0 ≤ hysteresis < π/4`; `0 ≤ tiltHysteresis ≤ 0.17`;
        ///   `settleTime ≥ 0`; `0 < stabilityAngle ≤ π`; `accelerationTolerance > 0`; `maximumGap > 0`; all finite.
        @inlinable
        public init(
            cutoff: Scalar = 1,
            hysteresis: Scalar = 15 * Scalar.pi / 180,
            tiltHysteresis: Scalar = 5 * Scalar.pi / 180,
            settleTime: Double = 0.5,
            stabilityAngle: Scalar = 10 * Scalar.pi / 180,
            accelerationTolerance: Scalar = 0.2,
            maximumGap: Double = 1
        ) {
            precondition(cutoff > 0 && cutoff.isFinite, "The cutoff must be a positive number of hertz, got \(cutoff).")
            precondition(
                hysteresis >= 0 && hysteresis < Scalar.pi / 4,
                "The hysteresis must be in [0, π/4) rad, got \(hysteresis).")
            precondition(
                tiltHysteresis >= 0 && tiltHysteresis <= 0.17,
                "The tilt hysteresis must be in [0, 0.17] rad (10°), got \(tiltHysteresis).")
            precondition(settleTime >= 0 && settleTime.isFinite, "The settle time must be ≥ 0 s, got \(settleTime).")
            precondition(
                stabilityAngle > 0 && stabilityAngle <= Scalar.pi,
                "The stability angle must be in (0, π] rad, got \(stabilityAngle).")
            precondition(
                accelerationTolerance > 0 && accelerationTolerance.isFinite,
                "The acceleration tolerance must be a positive number of g, got \(accelerationTolerance).")
            precondition(maximumGap > 0 && maximumGap.isFinite, "The maximum gap must be > 0 s, got \(maximumGap).")
            self.cutoff = cutoff
            self.hysteresis = hysteresis
            self.tiltHysteresis = tiltHysteresis
            self.settleTime = settleTime
            self.stabilityAngle = stabilityAngle
            self.accelerationTolerance = accelerationTolerance
            self.maximumGap = maximumGap
        }
    }

    /// A reported change: the new orientation and tilt, and what they were before.
    public struct Change: Hashable, Sendable {
        /// The timestamp of the sample that settled the change, in seconds.
        public var timestamp: Double
        /// The orientation after the change.
        public var orientation: DeviceOrientation
        /// The orientation before the change (``DeviceOrientation/unknown`` at first).
        public var previousOrientation: DeviceOrientation
        /// The iio-sensor-proxy tilt after the change.
        public var tilt: IIOSensorProxyTilt
        /// The tilt before the change (``IIOSensorProxyTilt/undefined`` at first).
        public var previousTilt: IIOSensorProxyTilt
        /// The iio-sensor-proxy orientation after the change: the last upright orientation.
        public var iioSensorProxyOrientation: IIOSensorProxyOrientation
        /// The iio-sensor-proxy orientation before the change.
        public var previousIIOSensorProxyOrientation: IIOSensorProxyOrientation

        /// `true` when ``orientation`` changed.
        @inlinable public var orientationChanged: Bool { orientation != previousOrientation }
        /// `true` when ``tilt`` changed.
        @inlinable public var tiltChanged: Bool { tilt != previousTilt }
        /// `true` when ``iioSensorProxyOrientation`` changed.
        @inlinable public var iioSensorProxyOrientationChanged: Bool {
            iioSensorProxyOrientation != previousIIOSensorProxyOrientation
        }

        /// Creates a change.
        @inlinable
        public init(
            timestamp: Double, orientation: DeviceOrientation, previousOrientation: DeviceOrientation,
            tilt: IIOSensorProxyTilt, previousTilt: IIOSensorProxyTilt,
            iioSensorProxyOrientation: IIOSensorProxyOrientation,
            previousIIOSensorProxyOrientation: IIOSensorProxyOrientation
        ) {
            self.timestamp = timestamp
            self.orientation = orientation
            self.previousOrientation = previousOrientation
            self.tilt = tilt
            self.previousTilt = previousTilt
            self.iioSensorProxyOrientation = iioSensorProxyOrientation
            self.previousIIOSensorProxyOrientation = previousIIOSensorProxyOrientation
        }
    }

    /// The settings.
    public let configuration: Configuration

    /// The current (settled) orientation; ``DeviceOrientation/unknown`` until the first one settles.
    @inlinable public var orientation: DeviceOrientation { settledOrientation }
    /// The current (settled) iio-sensor-proxy tilt, with consistent signs (see ``IIOSensorProxyTilt``);
    /// ``IIOSensorProxyTilt/undefined`` until the first one settles.
    @inlinable public var tilt: IIOSensorProxyTilt { settledTilt }
    /// The current iio-sensor-proxy orientation: the last upright ``orientation``, kept while the device lies
    /// flat; ``IIOSensorProxyOrientation/undefined`` before the first upright one.
    @inlinable public var iioSensorProxyOrientation: IIOSensorProxyOrientation { lastUpright }
    /// The low-passed acceleration (the gravity estimate), in g; zero before the first sample.
    @inlinable package var gravity: SIMD3<Scalar> { filter.value }
    /// `true` while the device counts as being moved: a sample within the last ``Configuration/settleTime``
    /// had a magnitude more than ``Configuration/accelerationTolerance`` away from 1 g.
    @inlinable package var isAccelerating: Bool {
        guard let moved = lastMovement, let now = filter.lastTimestamp else { return false }
        return now - moved < configuration.settleTime
    }

    @usableFromInline var filter: LowPassFilter<Scalar>
    @usableFromInline var settledOrientation: DeviceOrientation = .unknown
    @usableFromInline var settledTilt: IIOSensorProxyTilt = .undefined
    @usableFromInline var lastUpright: IIOSensorProxyOrientation = .undefined
    @usableFromInline var proposedOrientation: DeviceOrientation = .unknown
    @usableFromInline var orientationProposedAt: Double = 0
    @usableFromInline var proposedTilt: IIOSensorProxyTilt = .undefined
    @usableFromInline var tiltProposedAt: Double = 0
    @usableFromInline var lastMovement: Double?
    /// The direction the gravity estimate has stayed near since ``stableSince``.
    @usableFromInline var anchor: SIMD3<Scalar> = .zero
    @usableFromInline var stableSince: Double = 0
    @usableFromInline let stabilityCosine: Scalar
    /// cos(45° − hysteresis): how close to a new orientation gravity must be.
    @usableFromInline let entryCosine: Scalar
    /// cos(45° + hysteresis): how far from a pending first orientation gravity may stray.
    @usableFromInline let exitCosine: Scalar
    /// The tilt class boundaries widened and narrowed by the tilt hysteresis, in radians.
    @usableFromInline let verticalLimit: Scalar
    @usableFromInline let flatLimit: Scalar

    /// Creates a classifier.
    /// - Parameter configuration: The settings; the default is documented on each ``Configuration`` property.
    @inlinable
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.filter = LowPassFilter(smoothing: .cutoff(hertz: configuration.cutoff), start: .firstSample)
        self.entryCosine = Scalar.cos(Scalar.pi / 4 - configuration.hysteresis)
        self.exitCosine = Scalar.cos(Scalar.pi / 4 + configuration.hysteresis)
        self.stabilityCosine = Scalar.cos(configuration.stabilityAngle)
        self.verticalLimit = Scalar(IIOSensorProxyTilt.verticalLimitDegrees) * Scalar.pi / 180
        self.flatLimit = Scalar(IIOSensorProxyTilt.flatLimitDegrees) * Scalar.pi / 180
    }

    /// Takes one accelerometer sample and returns the change it settles, if any.
    ///
    /// - Parameters:
    ///   - acceleration: The reading in g, Core Motion's sign (gravity plus user acceleration).
    ///   - timestamp: The sample's time in seconds. A sample that is not later than the previous one, or that
    ///     has a non-finite component, is ignored.
    /// - Returns: The change when the orientation, the tilt or both settle on a new value with this sample;
    ///   otherwise `nil`.
    @inlinable
    public mutating func update(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Change? {
        guard acceleration.x.isFinite, acceleration.y.isFinite, acceleration.z.isFinite, timestamp.isFinite else {
            return nil
        }
        if let last = filter.lastTimestamp {
            guard timestamp > last else { return nil }
            if timestamp - last > configuration.maximumGap {
                // The sensor was off: start over from this sample, keeping what was reported.
                filter.reset()
                lastMovement = nil
                anchor = .zero
                proposedOrientation = settledOrientation
                proposedTilt = settledTilt
            }
        }
        let gravity = filter.update(acceleration, at: timestamp)
        let magnitude = (acceleration * acceleration).sum().squareRoot()
        if abs(magnitude - 1) > configuration.accelerationTolerance {
            lastMovement = timestamp
        }
        let length = (gravity * gravity).sum().squareRoot()
        if length > 0 {
            let direction = gravity / length
            if (direction * anchor).sum() < stabilityCosine {
                anchor = direction
                stableSince = timestamp
            }
        }

        let orientationCandidate = candidateOrientation(for: gravity)
        let tiltCandidate = candidateTilt(for: gravity)
        if orientationCandidate != proposedOrientation {
            proposedOrientation = orientationCandidate
            orientationProposedAt = timestamp
        }
        if tiltCandidate != proposedTilt {
            proposedTilt = tiltCandidate
            tiltProposedAt = timestamp
        }
        let still = lastMovement.map { timestamp - $0 >= configuration.settleTime } ?? true
        guard still, timestamp - stableSince >= configuration.settleTime else { return nil }

        let newOrientation =
            proposedOrientation != settledOrientation && proposedOrientation != .unknown
            && timestamp - orientationProposedAt >= configuration.settleTime
        let newTilt =
            proposedTilt != settledTilt && proposedTilt != .undefined
            && timestamp - tiltProposedAt >= configuration.settleTime
        guard newOrientation || newTilt else { return nil }

        let before = (settledOrientation, settledTilt, lastUpright)
        if newOrientation {
            settledOrientation = proposedOrientation
            if let upright = settledOrientation.iioSensorProxyOrientation { lastUpright = upright }
        }
        if newTilt { settledTilt = proposedTilt }
        return Change(
            timestamp: timestamp, orientation: settledOrientation, previousOrientation: before.0,
            tilt: settledTilt, previousTilt: before.1,
            iioSensorProxyOrientation: lastUpright, previousIIOSensorProxyOrientation: before.2)
    }

    /// The orientation the filtered gravity `g` argues for: the nearest direction when gravity is within
    /// 45° − hysteresis of it, else the current orientation (the dead zone). Before the first orientation has
    /// settled, the nearest direction within 45° is enough, and a pending proposal is kept while gravity stays
    /// within 45° + hysteresis of it, so a device held on a boundary still settles.
    @inlinable
    func candidateOrientation(for g: SIMD3<Scalar>) -> DeviceOrientation {
        let (nearest, cosine) = DeviceOrientation.nearest(to: g)
        guard nearest != .unknown else { return settledOrientation }
        if settledOrientation != .unknown {
            return nearest != settledOrientation && cosine >= entryCosine ? nearest : settledOrientation
        }
        if nearest != proposedOrientation && cosine >= entryCosine { return nearest }
        if proposedOrientation != .unknown {
            let length = (g * g).sum().squareRoot()
            let toProposal = (g * proposedOrientation.gravity(Scalar.self)).sum() / length
            if toProposal >= exitCosine { return proposedOrientation }
        }
        return cosine >= Scalar.sqrt(2) / 2 ? nearest : .unknown
    }

    /// The tilt class the filtered gravity `g` argues for, keeping the current class within its widened
    /// boundaries.
    @inlinable
    func candidateTilt(for g: SIMD3<Scalar>) -> IIOSensorProxyTilt {
        let length = (g * g).sum().squareRoot()
        guard length > 0 else { return settledTilt }
        // Positive when the screen faces the sky (z < 0 in Core Motion's sign): consistent with `normal`.
        let theta = Scalar.asin(min(max(-g.z / length, -1), 1))
        let size = abs(theta)
        let h = configuration.tiltHysteresis
        // Keep the current class while the angle stays within its range widened by the hysteresis.
        switch settledTilt {
        case .vertical where size <= verticalLimit + h:
            return .vertical
        case .tiltedUp where theta > 0 && size >= verticalLimit - h && size <= flatLimit + h,
            .tiltedDown where theta < 0 && size >= verticalLimit - h && size <= flatLimit + h:
            return settledTilt
        case .faceUp where theta > 0 && size >= flatLimit - h, .faceDown where theta < 0 && size >= flatLimit - h:
            return settledTilt
        default:
            break
        }
        if size <= verticalLimit { return .vertical }
        if size < flatLimit { return theta > 0 ? .tiltedUp : .tiltedDown }
        return theta > 0 ? .faceUp : .faceDown
    }

    /// Forgets everything, as if no sample had been seen: the orientation becomes
    /// ``DeviceOrientation/unknown`` again.
    @inlinable
    public mutating func reset() {
        self = OrientationClassifier(configuration: configuration)
    }
}
