public import MotionCore
public import RealModule

/// Counts steps in accelerometer samples: any orientation, any carrying position, 25–400 Hz, irregular timing.
///
/// Each sample goes through:
/// 1. **Gravity and the vertical**: a first-order low-pass with time constant
///    `Configuration.gravityTimeConstant` (default 1 s) estimates gravity `g`; the user acceleration `u = a − g`
///    and its vertical part `v = u·ĝ` (ĝ: gravity's direction after the previous sample, which moves by only
///    `dt/τ` of the difference per sample) are smoothed by two first-order low-passes at
///    `Configuration.smoothingCutoff` (default 4 Hz); the smoothed vertical part drives the trigger. For the
///    energy and line tests (step 3) both are also high-passed (first order) at `Configuration.highPassCutoff`
///    (default 0.5 Hz, half the slowest cadence), which removes what is left of slow motions such as a vehicle's
///    braking and cornering; the horizontal energy is the total less the vertical. Every filter is defined in
///    seconds and its coefficient is computed from each sample's interval, so the rate may be anything and may
///    change.
/// 2. **Step candidates**: a Schmitt trigger on the smoothed vertical acceleration. A candidate is the rise
///    through `+h` after a fall through `−h′` (its time interpolated between the two samples around the rise, so
///    step intervals do not depend on the rate), where `h` is the larger of `Configuration.minimumAmplitude`
///    (default 0.04 g) and `Configuration.relativeThreshold` (default 0.3) of the recent peak (which decays
///    with time constant `Configuration.peakDecay`, 1.5 s), and `h′` the same of the recent peak of the steps
///    of the side of the gait that comes next (the candidates alternate sides). A device carried on one side
///    sees that side's steps stronger: the trough before a weak step may stay above `−h` of the strong side's
///    peak, which would leave the weak step uncounted and every stride two steps long.
/// 3. **Gait tests**, each on the *stride* (the last two steps), because a device carried on one side (a
///    pocket, a swinging hand) sees its side's steps differently, so single step intervals alternate while
///    strides are regular:
///    - the stride lasts between `2/fmax` and `2/fmin` (`Configuration.cadenceRange`, default 1–3.5 steps/s);
///    - each of its two steps lasts between `Configuration.stepAsymmetry` (default 25 %) and 75 % of it;
///    - it lasts within ±`Configuration.strideTolerance` (default 30 %) of the previous stride;
///    - gravity's direction turned by at most `Configuration.maximumStrideTilt` (default 20°) over it and over
///      each of its steps (a turn that comes back within a stride is still seen), and by
///      at most `Configuration.maximumStreakTilt` (default 30°) since the current run of steps began: a
///      carried device keeps its attitude, a device turned in the hand does not;
///    - the horizontal acceleration's energy is at most `Configuration.maximumHorizontalRatio`² (default 2²)
///      times the vertical one's: walking moves the body up and down at every step;
///    - the vertical peak is at most `(2π·cadence)²·D` with `D` = `Configuration.maximumExcursion` (default
///      0.1 m): the body's centre of mass cannot bounce further than that at that cadence (hand motions can);
///    - at most `Configuration.maximumLinearity` (default 0.95) of the user acceleration's energy lies along
///      one line: a gait bounces, surges forwards out of phase with the bounce and sways sideways, while a
///      shake, a tap or a vibration moves the device along one line (``ShakeDetector``'s line test, whose
///      shakes have 0.97 or more).
/// 4. **Confirmation**: a candidate that fails a test starts a new run. Once a run holds
///    `Configuration.confirmationSteps` (default 10) steps, they are all counted at once (retroactively, as
///    phone pedometers do), and each later step that passes the tests is counted as it comes. A run that starts
///    within the longest stride (`2/fmin`, 2 s) of the last counted step *resumes* a walk and needs only
///    `Configuration.resumeSteps` (default 4: two strides, each tested) before it is counted. It also counts the
///    steps its break lost: when the cadences before and after agree within the stride tolerance, the
///    `round(gap / period) − 1` steps of the gap before its first step, up to `Configuration.maximumBridgedSteps`
///    (default 2, what one missed or extra trigger loses), spread evenly over the gap. The same holds before a
///    walk is confirmed: a run that a fault broke after at least one tested stride is *continued* by the next
///    run when their cadences and the gap between them agree in the same way, so once that run is counted, the
///    broken run's steps and the steps bridged between them are counted with it (the next run still needs its
///    own confirmation). At a walk's start, a run's first candidate is the one that broke the last run (or the
///    very first): when the run's first two strides disagree while each passes its own tests, or when its first
///    stride fails a test of its own, that doubtful candidate is dropped and the run goes on from its second,
///    rather than starting again at the newest step. A *bout* before a pause (an unconfirmed run of at least
///    `resumeSteps` broken by a test) is held and counted with the next confirmed walk when the two are one
///    episode: the bout ends at most `confirmationSteps / fmin` (10 s) before the walk's first step, at a cadence
///    within the stride tolerance of the walk's. Bouts in a row join by the same rule.
///
/// A gap between samples longer than the longest step (`1/fmin`, 1 s by default) restarts the filters and the
/// run. Docs/Pedometer.md gives the source of every constant.
///
/// A pure value-type state machine: it reads no clock (timestamps are input), does no I/O and allocates
/// nothing. Generic over `Float` and `Double`.
///
/// ```swift
/// var detector = StepDetector<Double>()
/// for sample in samples {
///     guard let a = sample.acceleration else { continue }
///     let counted = detector.update(a.vector, at: sample.timestamp)
///     for i in 0..<counted { print("step at", detector.newStepTime(i)) }
/// }
/// print(detector.count, "steps")
/// ```
public struct StepDetector<Scalar: MotionScalar>: Sendable {
    /// The detector's settings. Every default is documented with its unit and, in Docs/Pedometer.md, its source.
    public struct Configuration: Hashable, Sendable {
        /// The time constant of the gravity estimate, in seconds. Default 1 s: a cutoff of 0.16 Hz, a sixth of the
        /// slowest cadence, so the step signal hardly leaks into gravity, while a device turned in the hand is
        /// followed within a few seconds.
        @usableFromInline package var gravityTimeConstant: Double
        /// The cutoff of each of the two low-passes smoothing the user acceleration, in Hz. Default 4 Hz: above
        /// the fastest cadence (3.5 steps/s), below heel-strike transients and vibration.
        @usableFromInline package var smoothingCutoff: Scalar
        /// The cutoff of the first-order high-pass that limits the energy and line tests to the step band, in Hz.
        /// Default 0.5 Hz: half the slowest cadence.
        @usableFromInline package var highPassCutoff: Scalar
        /// The smallest hysteresis of the step trigger, in g. Default 0.04 g: the slowest walking moves the body's
        /// centre of mass by about 2.7 cm peak to peak at 1.4 steps/s, an acceleration of about 0.1 g peak.
        @usableFromInline package var minimumAmplitude: Scalar
        /// The hysteresis as a fraction of the recent vertical peak (for re-arming, of the recent peak of the next
        /// step's side of the gait), in [0, 1). Default 0.3.
        @usableFromInline package var relativeThreshold: Scalar
        /// The time constant with which the recent vertical peak decays, in seconds. Default 1.5 s (three steps).
        @usableFromInline package var peakDecay: Double
        /// The plausible cadences, in steps per second. Default 1–3.5 steps/s (60–210 steps/min: slow walking to
        /// fast running).
        @usableFromInline package var cadenceRange: ClosedRange<Double>
        /// How much a stride may differ from the previous one, as a fraction. Default 0.3 (30 %).
        @usableFromInline package var strideTolerance: Double
        /// The shortest step as a fraction of its stride, in [0, 0.5). Default 0.25.
        @usableFromInline package var stepAsymmetry: Double
        /// How far gravity's direction may turn over one stride, or over either of its steps, in degrees.
        /// Default 20°.
        @usableFromInline package var maximumStrideTilt: Scalar
        /// How far gravity's direction may turn over a run of steps, from its first step, in degrees. Default 30°.
        @usableFromInline package var maximumStreakTilt: Scalar
        /// The largest ratio of horizontal to vertical RMS acceleration over a stride. Default 2.
        @usableFromInline package var maximumHorizontalRatio: Scalar
        /// The largest vertical excursion of the body implied by the step signal, in metres. Default 0.1 m.
        @usableFromInline package var maximumExcursion: Scalar
        /// The largest fraction of the stride's user-acceleration energy that may lie along one line, in
        /// (0, 1]. Default 0.95.
        @usableFromInline package var maximumLinearity: Scalar
        /// How many regular steps in a row are needed before any is counted. Default 10 (at most 32).
        @usableFromInline package var confirmationSteps: Int
        /// How many regular steps in a row a run needs when it resumes a walk (it starts within the longest stride
        /// of the last counted step). Default 4: the fewest for which two strides have been tested, the second
        /// against the first. At most `confirmationSteps`.
        @usableFromInline package var resumeSteps: Int
        /// The most steps a resumed or a continued run adds for the gap before it (`missingStepCount`). Default 2:
        /// what one detection fault loses (a missed trigger one step, an extra trigger two: its stride and the next
        /// fail). 0 adds none. At most `(32 − confirmationSteps) / 2`.
        @usableFromInline package var maximumBridgedSteps: Int

        /// Creates a configuration; every parameter has the documented default.
        ///
        /// - Precondition: every value is finite; `gravityTimeConstant > 0`, `smoothingCutoff > 0`,
        ///   `minimumAmplitude > 0`, `0 ≤ relativeThreshold < 1`, `peakDecay > 0`,
        ///   `0 < cadenceRange.lowerBound < cadenceRange.upperBound`, `strideTolerance > 0`,
        ///   `0 ≤ stepAsymmetry < 0.5`, tilts in (0, 180], `maximumHorizontalRatio > 0`, `maximumExcursion > 0`,
        ///   `2 ≤ resumeSteps ≤ confirmationSteps ≤ 16`.
        @inlinable
        package init(
            gravityTimeConstant: Double = 1,
            smoothingCutoff: Scalar = 4,
            highPassCutoff: Scalar = 0.5,
            minimumAmplitude: Scalar = 0.04,
            relativeThreshold: Scalar = 0.3,
            peakDecay: Double = 1.5,
            cadenceRange: ClosedRange<Double> = 1...3.5,
            strideTolerance: Double = 0.3,
            stepAsymmetry: Double = 0.25,
            maximumStrideTilt: Scalar = 20,
            maximumStreakTilt: Scalar = 30,
            maximumHorizontalRatio: Scalar = 2,
            maximumExcursion: Scalar = 0.1,
            maximumLinearity: Scalar = 0.95,
            confirmationSteps: Int = 10,
            resumeSteps: Int = 4,
            maximumBridgedSteps: Int = 2
        ) {
            precondition(
                gravityTimeConstant > 0 && gravityTimeConstant.isFinite,
                "The gravity time constant must be > 0 s, got \(gravityTimeConstant).")
            precondition(
                smoothingCutoff > 0 && smoothingCutoff.isFinite,
                "The smoothing cutoff must be > 0 Hz, got \(smoothingCutoff).")
            precondition(
                highPassCutoff > 0 && highPassCutoff < smoothingCutoff,
                "The high-pass cutoff must be in (0, smoothingCutoff) Hz, got \(highPassCutoff).")
            precondition(
                minimumAmplitude > 0 && minimumAmplitude.isFinite,
                "The minimum amplitude must be > 0 g, got \(minimumAmplitude).")
            precondition(
                relativeThreshold >= 0 && relativeThreshold < 1,
                "The relative threshold must be in [0, 1), got \(relativeThreshold).")
            precondition(peakDecay > 0 && peakDecay.isFinite, "The peak decay must be > 0 s, got \(peakDecay).")
            precondition(
                cadenceRange.lowerBound > 0 && cadenceRange.upperBound > cadenceRange.lowerBound
                    && cadenceRange.upperBound.isFinite,
                "The cadence range must be a finite range of positive steps/s, got \(cadenceRange).")
            precondition(
                strideTolerance > 0 && strideTolerance.isFinite,
                "The stride tolerance must be > 0, got \(strideTolerance).")
            precondition(
                stepAsymmetry >= 0 && stepAsymmetry < 0.5, "The step asymmetry must be in [0, 0.5), got \(stepAsymmetry).")
            precondition(
                maximumStrideTilt > 0 && maximumStrideTilt <= 180 && maximumStreakTilt > 0 && maximumStreakTilt <= 180,
                "The tilt limits must be in (0, 180]°, got \(maximumStrideTilt) and \(maximumStreakTilt).")
            precondition(
                maximumHorizontalRatio > 0 && maximumHorizontalRatio.isFinite,
                "The horizontal ratio must be > 0, got \(maximumHorizontalRatio).")
            precondition(
                maximumExcursion > 0 && maximumExcursion.isFinite,
                "The maximum excursion must be > 0 m, got \(maximumExcursion).")
            precondition(
                maximumLinearity > 0 && maximumLinearity <= 1,
                "The maximum linearity must be in (0, 1], got \(maximumLinearity).")
            precondition(
                confirmationSteps >= 2 && confirmationSteps <= StepTimes.capacity,
                "The confirmation steps must be in 2...\(StepTimes.capacity), got \(confirmationSteps).")
            precondition(
                resumeSteps >= 2 && resumeSteps <= confirmationSteps,
                "The resume steps must be in 2...confirmationSteps, got \(resumeSteps).")
            precondition(
                maximumBridgedSteps >= 0 && confirmationSteps + 2 * maximumBridgedSteps <= StepTimes.capacity,
                "The bridged steps must be in 0...(\(StepTimes.capacity) − confirmationSteps) / 2, got "
                    + "\(maximumBridgedSteps).")
            self.gravityTimeConstant = gravityTimeConstant
            self.smoothingCutoff = smoothingCutoff
            self.highPassCutoff = highPassCutoff
            self.minimumAmplitude = minimumAmplitude
            self.relativeThreshold = relativeThreshold
            self.peakDecay = peakDecay
            self.cadenceRange = cadenceRange
            self.strideTolerance = strideTolerance
            self.stepAsymmetry = stepAsymmetry
            self.maximumStrideTilt = maximumStrideTilt
            self.maximumStreakTilt = maximumStreakTilt
            self.maximumHorizontalRatio = maximumHorizontalRatio
            self.maximumExcursion = maximumExcursion
            self.maximumLinearity = maximumLinearity
            self.confirmationSteps = confirmationSteps
            self.resumeSteps = resumeSteps
            self.maximumBridgedSteps = maximumBridgedSteps
        }

        /// The longest step, in seconds (`1/fmin`): a gap between samples longer than this restarts the detector.
        @inlinable package var longestStep: Double { 1 / cadenceRange.lowerBound }
    }

    /// The settings.
    @usableFromInline package let configuration: Configuration

    /// The steps counted so far.
    @inlinable public var count: Int { stepCount }
    /// How many steps the last ``update(_:at:)`` counted (0, 1, or a whole confirmed run).
    @inlinable public var newSteps: Int { newStepCount }
    /// The time of the last counted step, in seconds; `nil` before the first.
    @inlinable public var lastStepTime: Double? { lastCountedTime }
    /// The current cadence, in steps per second: two over the last counted stride; 0 before a step is counted.
    @inlinable public var cadence: Double { currentCadence }
    /// `true` while steps are being counted: a run has been confirmed and no test has failed since.
    @inlinable public var isStepping: Bool { stepping }
    /// The larger vertical peak of the last stride's two steps, in g (smoothed vertical user acceleration).
    @inlinable package var strideAmplitude: Scalar { lastStrideAmplitude }

    @usableFromInline var stepCount = 0
    @usableFromInline var newStepCount = 0
    @usableFromInline var lastCountedTime: Double?
    @usableFromInline var currentCadence: Double = 0
    @usableFromInline var stepping = false
    @usableFromInline var lastStrideAmplitude: Scalar = 0
    /// The gravity estimate, in g; zero before the first sample.
    @inlinable package var gravity: SIMD3<Scalar> { SIMD3(gravityEstimate.x, gravityEstimate.y, gravityEstimate.z) }

    /// The gravity estimate in g, and 0 in lane 3 (four lanes keep the vector arithmetic on whole registers).
    @usableFromInline var gravityEstimate: SIMD4<Scalar> = .zero
    /// Gravity's direction (a unit vector, or zero before gravity is known) after the previous sample, and 0.
    @usableFromInline var down: SIMD4<Scalar> = .zero
    /// `configuration.longestStep`, kept to spare a division per sample.
    @usableFromInline let longestStep: Double
    /// The cosines of `configuration.maximumStrideTilt` and `maximumStreakTilt`.
    @usableFromInline let strideTiltCosine: Scalar
    @usableFromInline let streakTiltCosine: Scalar
    /// The interval the coefficients below were computed for, in seconds (-1: none yet).
    @usableFromInline var coefficientInterval: Double = -1
    /// Each first-order filter's weight of its input (`…Factor`, 1 − e^(−Δt/τ)) and of its state (`…Retention`,
    /// e^(−Δt/τ)), for the interval `coefficientInterval`.
    @usableFromInline var gravityFactor: Scalar = 0
    @usableFromInline var smoothingFactor: Scalar = 0
    @usableFromInline var smoothingRetention: Scalar = 1
    /// `smoothingFactor·(1 − gravityFactor)`: the first smoothing stage's weight of `a − g` before g is updated.
    @usableFromInline var userSmoothingFactor: Scalar = 0
    @usableFromInline var highPassFactor: Scalar = 0
    @usableFromInline var highPassRetention: Scalar = 1
    @usableFromInline var peakRetention: Scalar = 0
    @usableFromInline var lastTimestamp: Double?
    /// The two smoothing stages of the user acceleration (lanes 0–2: device axes, g) and of its vertical part
    /// (lane 3, g), and the high-pass's low-passed part of the second.
    @usableFromInline var smoothed1: SIMD4<Scalar> = .zero
    @usableFromInline var smoothed2: SIMD4<Scalar> = .zero
    @usableFromInline var smoothedBase: SIMD4<Scalar> = .zero
    /// The step band (`smoothed2 − smoothedBase`) at the previous sample, in g.
    @usableFromInline var band: SIMD4<Scalar> = .zero
    /// The recent peaks of the smoothed vertical acceleration (g) while each side's steps were under way: the side
    /// of the last candidate's step takes the samples until the next candidate. Both decay (`peakDecay`); the
    /// larger is the recent peak.
    @usableFromInline var sidePeak0: Scalar = 0
    @usableFromInline var sidePeak1: Scalar = 0
    /// Whether the step the last candidate began is of side 1 (else side 0).
    @usableFromInline var stepOnSide1 = false
    /// The trigger's side: -1 after a fall through −h′ (and at the start: a device at rest is below +h, so the
    /// first rise through +h, the first step's push, is a candidate), +1 after a rise through +h.
    @usableFromInline var side: Int8 = -1
    /// Second moments (g²·s) of the step band since the last candidate: xx, yy, zz and vertical² (the vertical
    /// energy), and xy, xz, yz. The horizontal energy is xx + yy + zz less the vertical one.
    @usableFromInline var diagonalMoments: SIMD4<Scalar> = .zero
    @usableFromInline var crossMoments: SIMD3<Scalar> = .zero
    /// The extremes (g) of the smoothed vertical acceleration since the last candidate.
    @usableFromInline var verticalMaximum: Scalar = 0
    @usableFromInline var verticalMinimum: Scalar = 0
    /// The last three candidates of the current run (index 0 newest), with gravity's direction and the energies
    /// and extremes of the step each ends.
    @usableFromInline var candidates = CandidateHistory()
    /// Gravity's direction at the first step of the current run.
    @usableFromInline var runDirection: SIMD3<Scalar> = .zero
    /// The current run's steps not yet counted (while it is not confirmed): those of a run it continues
    /// (`carried`, joined at its first tested stride), the steps bridged between them, then its own.
    @usableFromInline var pending = StepTimes()
    /// How many of `pending` come from a run the current run continues (and the steps bridged to it).
    @usableFromInline var joinedCount = 0
    /// Whether the current run resumes a walk (`Configuration.resumeSteps`).
    @usableFromInline var resuming = false
    /// Two over the last tested stride of the current unconfirmed run, in steps/s; 0 before one has passed.
    @usableFromInline var runCadence: Double = 0
    /// The steps of the last unconfirmed run a fault broke after a tested stride: the next run continues them when
    /// its first stride agrees (`joinCarried`).
    @usableFromInline var carried = StepTimes()
    /// The carried run's `runCadence` (steps/s) and whether it resumed a walk.
    @usableFromInline var carriedCadence: Double = 0
    @usableFromInline var carriedResuming = false
    /// The steps of the last unconfirmed run of at least `resumeSteps` that a test broke (a short bout before a
    /// pause), with its `runCadence` (steps/s): counted with a walk confirmed soon after at the same cadence
    /// (`holdBout`, `countHeldBout`).
    @usableFromInline var held = StepTimes()
    @usableFromInline var heldCadence: Double = 0
    @usableFromInline var countedTimes = StepTimes()

    /// Creates a detector.
    /// - Parameter configuration: The settings; the default is documented on each ``Configuration`` property.
    @inlinable
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.longestStep = configuration.longestStep
        self.strideTiltCosine = Scalar.cos(configuration.maximumStrideTilt * Scalar.pi / 180)
        self.streakTiltCosine = Scalar.cos(configuration.maximumStreakTilt * Scalar.pi / 180)
    }

    /// The time of the `index`th step counted by the last ``update(_:at:)``, oldest first, in seconds.
    /// - Precondition: `0 ≤ index < newSteps`.
    @inlinable
    package func newStepTime(_ index: Int) -> Double {
        precondition(index >= 0 && index < newSteps, "Step \(index) of \(newSteps) new steps.")
        return countedTimes[index]
    }

    /// The times of the steps counted by the last ``update(_:at:)``, oldest first, in seconds (``newSteps`` of
    /// them).
    @inlinable public var newStepTimes: StepTimes { newStepCount == 0 ? StepTimes() : countedTimes }

    /// Takes one accelerometer sample and counts the steps it confirms.
    ///
    /// - Parameters:
    ///   - acceleration: The reading in g, Core Motion's sign (gravity plus user acceleration), in any orientation.
    ///   - timestamp: The sample's time in seconds. A sample that is not later than the previous one, or that has
    ///     a non-finite component, is ignored.
    /// - Returns: How many steps were counted (``newSteps``): 0, 1, or a whole run when it is confirmed. Their
    ///   times are `newStepTime(_:)`.
    @inlinable
    @discardableResult
    public mutating func update(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Int {
        newStepCount = 0
        // x·0 is 0 for a finite x and NaN otherwise: one test for the three components.
        let finiteProbe = acceleration * 0
        guard finiteProbe.x + finiteProbe.y + finiteProbe.z == 0, timestamp.isFinite else { return 0 }
        guard let last = lastTimestamp else {
            restart(at: timestamp, with: acceleration)
            return 0
        }
        guard timestamp > last else { return 0 }
        let dt = timestamp - last
        if dt > longestStep {
            restart(at: timestamp, with: acceleration)
            return 0
        }
        lastTimestamp = timestamp

        // 1. Gravity, the user acceleration and its vertical part, smoothed. The filters' coefficients depend on the
        // interval only; they are computed again when it changes by more than 0.1 % (never at a steady rate, where
        // intervals differ only by timestamp rounding; a coefficient off by 0.1 % for a sample changes nothing).
        if abs(dt - coefficientInterval) > 0.001 * dt { computeCoefficients(for: dt) }
        // The vertical is gravity's direction after the previous sample: it moves by dt/τ of the difference per
        // sample, and so no square root or division stands between a sample and its trigger.
        let previousDown = down
        let change = SIMD4(acceleration, 0) - gravityEstimate
        gravityEstimate += gravityFactor * change
        let norm = (gravityEstimate * gravityEstimate).sum().squareRoot()
        if norm > 0 { down = gravityEstimate * (1 / norm) }
        // The user acceleration a − g with this sample's g is (1 − gravityFactor)·change: that factor is in
        // userSmoothingFactor.
        var user = change
        user[3] = (change * previousDown).sum()
        let previousY = smoothed2[3]  // for the time of a rise through +h (below)
        smoothed1 = smoothingRetention * smoothed1 + userSmoothingFactor * user
        smoothed2 = smoothingRetention * smoothed2 + smoothingFactor * smoothed1
        smoothedBase = highPassRetention * smoothedBase + highPassFactor * smoothed2
        // The trigger and the peaks use the smoothed vertical acceleration; the energies and the line test use
        // the step band (high-passed), where slow motions cannot mask or fake a gait. The moments take the
        // previous sample's band (each interval weighs the value at its start), off this sample's critical path.
        let y = smoothed2[3]
        let weighted = band * Scalar(dt)
        diagonalMoments += band * weighted
        crossMoments += SIMD3(band.x * weighted.y, band.x * weighted.z, band.y * weighted.z)
        band = smoothed2 - smoothedBase
        verticalMaximum = y > verticalMaximum ? y : verticalMaximum
        verticalMinimum = y < verticalMinimum ? y : verticalMinimum

        // 2. The trigger: fires at +h of the recent peak; re-armed at −h′ of the next step's side's peak.
        let peak0 = sidePeak0 * peakRetention
        let peak1 = sidePeak1 * peakRetention
        let magnitude = abs(y)
        if stepOnSide1 {
            sidePeak0 = peak0
            sidePeak1 = magnitude > peak1 ? magnitude : peak1
        } else {
            sidePeak0 = magnitude > peak0 ? magnitude : peak0
            sidePeak1 = peak1
        }
        let c = configuration
        if side == 1 {
            let other = c.relativeThreshold * (stepOnSide1 ? peak0 : peak1)
            if y < -(other > c.minimumAmplitude ? other : c.minimumAmplitude) { side = -1 }
        } else {
            // +h is the larger of the minimum and the relative part of the recent peak, y included. A positive y
            // is always above its own relative part (relativeThreshold < 1), so the test needs the peak before y,
            // and y's part counts only for the level the rise is interpolated at.
            let relative = c.relativeThreshold * (peak0 > peak1 ? peak0 : peak1)
            let threshold = relative > c.minimumAmplitude ? relative : c.minimumAmplitude
            if y > threshold {
                side = 1
                stepOnSide1.toggle()
                // The step's time: where the rise crossed +h, interpolated between the two samples (not the later
                // sample's time, up to a sample late), so step intervals do not depend on the rate. y > +h, so a
                // zero denominator gives −∞, clamped to the previous sample.
                let fire = max(threshold, c.relativeThreshold * y)
                let fraction = Double(min(max((fire - previousY) / (y - previousY), 0), 1))
                candidate(at: last + fraction * dt, down: SIMD3(previousDown.x, previousDown.y, previousDown.z))
            }
        }
        return newSteps
    }

    /// Forgets everything but the count, as after a gap: the filters and the current run start over.
    @inlinable
    public mutating func interrupt() {
        lastTimestamp = nil
        forgetRuns()
    }

    /// Forgets everything, the count too, as if no sample had been seen.
    @inlinable
    public mutating func reset() {
        self = StepDetector(configuration: configuration)
    }

    // MARK: - Internals

    /// The filters' coefficients for a sample interval of `dt` seconds.
    @inlinable
    mutating func computeCoefficients(for dt: Double) {
        coefficientInterval = dt
        gravityFactor = Scalar(-Double.expMinusOne(-dt / configuration.gravityTimeConstant))
        smoothingFactor = -Scalar.expMinusOne(-2 * Scalar.pi * configuration.smoothingCutoff * Scalar(dt))
        userSmoothingFactor = smoothingFactor * Scalar(Double.exp(-dt / configuration.gravityTimeConstant))
        smoothingRetention = Scalar.exp(-2 * Scalar.pi * configuration.smoothingCutoff * Scalar(dt))
        highPassFactor = -Scalar.expMinusOne(-2 * Scalar.pi * configuration.highPassCutoff * Scalar(dt))
        highPassRetention = Scalar.exp(-2 * Scalar.pi * configuration.highPassCutoff * Scalar(dt))
        peakRetention = Scalar(Double.exp(-dt / configuration.peakDecay))
    }

    /// Starts over from `acceleration` (the first sample, or after a gap): gravity is that sample, no run.
    @inlinable
    mutating func restart(at timestamp: Double, with acceleration: SIMD3<Scalar>) {
        lastTimestamp = timestamp
        gravityEstimate = SIMD4(acceleration, 0)
        let norm = (acceleration * acceleration).sum().squareRoot()
        down = norm > 0 ? gravityEstimate * (1 / norm) : .zero
        smoothed1 = .zero
        smoothed2 = .zero
        smoothedBase = .zero
        band = .zero
        sidePeak0 = 0
        sidePeak1 = 0
        stepOnSide1 = false
        side = -1
        resetStepMeasures()
        resuming = false
        currentCadence = 0  // so nothing is bridged across a gap in the samples
        forgetRuns()
    }

    /// Forgets the current run and a carried one, but not the counted walk (`lastCountedTime`, `currentCadence`).
    @inlinable
    mutating func forgetRuns() {
        stepping = false
        pending.removeAll()
        joinedCount = 0
        runCadence = 0
        carried.removeAll()
        held.removeAll()
        candidates = CandidateHistory()
    }

    @inlinable
    mutating func resetStepMeasures() {
        verticalMaximum = 0
        verticalMinimum = 0
        diagonalMoments = .zero
        crossMoments = .zero
    }

    /// A step candidate at `timestamp`: the gait tests, then the run and the count.
    @inlinable
    mutating func candidate(at timestamp: Double, down: SIMD3<Scalar>) {
        candidates.push(
            Candidate(
                time: timestamp, down: down, verticalEnergy: diagonalMoments[3],
                horizontalEnergy: diagonalMoments.x + diagonalMoments.y + diagonalMoments.z - diagonalMoments[3],
                peak: max(verticalMaximum, -verticalMinimum),
                diagonalMoments: SIMD3(diagonalMoments.x, diagonalMoments.y, diagonalMoments.z),
                crossMoments: crossMoments))
        resetStepMeasures()
        if candidates.count < 3 {
            if candidates.count == 1 { runDirection = down }
            pending.append(timestamp)
            return
        }
        let verdict = gaitVerdict()
        if verdict == .irregular && dropsDoubtfulFirstCandidate(at: timestamp) { return }
        guard verdict == .regular else {
            // An unconfirmed run that has passed a stride test may have been broken by a fault (a missed or an
            // extra trigger): the next run continues it if their strides agree.
            if !stepping && runCadence > 0 {
                carryPending()
                if pending.count >= configuration.resumeSteps { holdBout() }
            }
            // At a walk's start, when a run's first stride fails, its first candidate is dropped and the run goes on
            // from its second (`dropsDoubtfulFirstCandidate`); else this candidate starts a new run, which resumes
            // the walk when the last counted step is recent.
            let keepsSecond = !resuming && runCadence == 0 && joinedCount == 0 && pending.count == 2
            resuming = lastCountedTime.map { timestamp - $0 <= 2 * configuration.longestStep } ?? false
            stepping = false
            pending.removeAll()
            if keepsSecond { pending.append(candidates[1].time) }
            pending.append(timestamp)
            joinedCount = 0
            runCadence = 0
            runDirection = keepsSecond ? candidates[1].down : down
            if keepsSecond { candidates.keepNewestTwo() } else { candidates.keepNewest() }
            return
        }
        let stride = candidates[0].time - candidates[2].time
        lastStrideAmplitude = max(candidates[0].peak, candidates[1].peak)
        if stepping {
            stepCount += 1
            countedTimes.removeAll()
            countedTimes.append(timestamp)
            newStepCount = 1
            lastCountedTime = timestamp
            currentCadence = 2 / stride
            return
        }
        pending.append(timestamp)
        if runCadence == 0 && carried.count > 0 { joinCarried(cadence: 2 / stride) }
        runCadence = 2 / stride
        if pending.count - joinedCount >= (resuming ? configuration.resumeSteps : configuration.confirmationSteps) {
            stepping = true
            countedTimes.removeAll()
            // A resumed walk: the steps the fault lost before the run's first step, spread evenly over the gap.
            if resuming, let last = lastCountedTime {
                let bridged = bridgedStepCount(gap: pending[0] - last, cadence: 2 / stride)
                countedTimes.appendEvenly(bridged, between: last, and: pending[0])
            } else if held.count > 0 {
                countHeldBout(cadence: 2 / stride)
            }
            held.removeAll()
            countedTimes.append(contentsOf: pending)
            newStepCount = countedTimes.count
            stepCount += countedTimes.count
            lastCountedTime = timestamp
            currentCadence = 2 / stride
            pending.removeAll()
            joinedCount = 0
            carried.removeAll()
        }
    }

    /// Keeps the steps of the unconfirmed run a gait test just broke (its newest ones, so that a run that continues
    /// them fits `StepTimes` with the steps bridged on either side), for `joinCarried`.
    @inlinable
    mutating func carryPending() {
        carried.removeAll()
        carried.append(contentsOf: pending, from: max(0, pending.count - earlierStepsCapacity))
        carriedCadence = runCadence
        carriedResuming = resuming
    }

    /// How many steps from before a run (`carried`, `held`) fit `StepTimes` with the run's confirmation and the
    /// steps bridged on either side.
    @inlinable
    var earlierStepsCapacity: Int {
        StepTimes.capacity - configuration.confirmationSteps - 2 * configuration.maximumBridgedSteps
    }

    /// Keeps the unconfirmed run a test just broke, of at least `resumeSteps` (two tested strides), as a bout that
    /// a walk confirmed soon after may count (`countHeldBout`). A bout held before it joins it when the two are one
    /// episode by the same rule (`isOneEpisode`), else it is dropped.
    @inlinable
    mutating func holdBout() {
        if held.count > 0 && isOneEpisode(before: held, cadence: heldCadence, first: carried[0], then: runCadence) {
            // The newest steps of both, as many as `carried` may hold (it holds no more itself).
            var joined = StepTimes()
            joined.append(contentsOf: held, from: max(0, held.count + carried.count - earlierStepsCapacity))
            joined.append(contentsOf: carried)
            held = joined
        } else {
            held = carried
        }
        heldCadence = runCadence
    }

    /// Whether the steps `bout` (at `cadence`, steps/s) and a run whose first step is `first` (at `then`) are one
    /// walking episode with a pause in it: the bout ends before the run, at most the longest confirmation
    /// (`confirmationSteps` steps at the slowest cadence, 10 s) before it, at a cadence within the stride
    /// tolerance of the run's (a walker's own gait; double triggers or hand motion have another).
    @inlinable
    func isOneEpisode(before bout: StepTimes, cadence: Double, first: Double, then: Double) -> Bool {
        let last = bout[bout.count - 1]
        let window = Double(configuration.confirmationSteps) * longestStep
        return last < first && first - last <= window && abs(then / cadence - 1) <= configuration.strideTolerance
    }

    /// At the confirmation of a walk (not a resumed one) at `cadence` (steps/s): counts the held bout first when
    /// it is one walking episode with the walk (`isOneEpisode`).
    @inlinable
    mutating func countHeldBout(cadence: Double) {
        guard isOneEpisode(before: held, cadence: heldCadence, first: pending[0], then: cadence) else { return }
        let room = StepTimes.capacity - pending.count
        countedTimes.append(contentsOf: held, from: max(0, held.count - room))
    }

    /// At the first tested stride of a run (cadence in steps/s): continues the carried run when the two agree
    /// as a walk broken by one fault does (`missingStepCount`), with the missing steps spread evenly over the gap.
    @inlinable
    mutating func joinCarried(cadence: Double) {
        defer { carried.removeAll() }
        let last = carried[carried.count - 1]
        let first = pending[0]
        guard let missing = missingStepCount(gap: first - last, before: carriedCadence, after: cadence) else { return }
        // Continued, the carried steps are no longer a bout; a bout held before them and joined to them still is.
        if held.count > 0 && held[held.count - 1] == last { held.removeAll(from: carried[0]) }
        var joined = carried
        joined.appendEvenly(missing, between: last, and: first)
        joinedCount = joined.count
        joined.append(contentsOf: pending)
        pending = joined
        resuming = resuming || carriedResuming
    }

    /// How many steps one detection fault lost in the `gap` (seconds) between a step of a walk at cadence `before`
    /// and a step of one at cadence `after` (steps/s): `round(gap / period) − 1`, the period from the mean
    /// cadence. `nil` when the two are not one walk broken by a fault: cadences that differ by more than the
    /// stride tolerance (another gait), or more than `maximumBridgedSteps` missing (a pause).
    @inlinable
    func missingStepCount(gap: Double, before: Double, after: Double) -> Int? {
        guard before > 0, after > 0, gap > 0 else { return nil }
        guard abs(after / before - 1) <= configuration.strideTolerance else { return nil }
        let missing = (gap / (2 / (after + before))).rounded() - 1
        guard missing >= 0, missing <= Double(configuration.maximumBridgedSteps) else { return nil }
        return Int(missing)
    }

    /// How many steps a detection fault lost in the `gap` (seconds) between the last counted step and the first
    /// step of a run that resumes the walk at `cadence` (steps/s): the steps of a whole number of periods that
    /// were not counted (`round(gap / period) − 1`, the period from the mean of `cadence` and the walk's before the
    /// break: `currentCadence`, which holds the last counted stride's until the resumed run is counted).
    /// None when the cadences differ by more than the stride tolerance (another gait, not a fault), or when more
    /// than `maximumBridgedSteps` are missing (a pause, not a fault). A pause of one or two steps' time at the
    /// walk's cadence cannot be told from a fault (the walker's last step and first step fill most of it): it is
    /// bridged too, so it adds at most that many steps.
    @inlinable
    func bridgedStepCount(gap: Double, cadence: Double) -> Int {
        // currentCadence is 0 after a gap in the samples: nothing is bridged across it.
        missingStepCount(gap: gap, before: currentCadence, after: cadence) ?? 0
    }

    /// What the gait tests say of the stride that the newest candidate ends.
    @usableFromInline
    enum GaitVerdict: Sendable {
        /// Every test passed.
        case regular
        /// Every test of the stride itself passed, but it disagrees with the stride before it (the stride
        /// tolerance): one of the two is not a stride of the walk.
        case irregular
        /// A test of the stride itself failed.
        case notAGait
    }

    /// The tests on the stride that the newest candidate ends (``Configuration``).
    @inlinable
    func gaitVerdict() -> GaitVerdict {
        passesStrideTests() ? (agreesWithPreviousStride() ? .regular : .irregular) : .notAGait
    }

    /// Whether the newest stride agrees with the one before it (the stride tolerance); true when there is none.
    @inlinable
    func agreesWithPreviousStride() -> Bool {
        guard candidates.count > 3 else { return true }
        let stride = candidates[0].time - candidates[2].time
        let previous = candidates[1].time - candidates[3].time
        return abs(stride / previous - 1) <= configuration.strideTolerance
    }

    /// At a walk's start (no run confirmed or resumed), a run begins at the candidate that broke the last run, or
    /// at the very first: the least trustworthy of its candidates, whose stride with the next step passes the
    /// tests of a single stride easily (the cadence band is wide). When the run's first two strides disagree,
    /// that candidate is dropped and the run goes on from its second (true), rather than starting again at the
    /// newest. Not when the newest step lasts 1.5 times the step before it or more: then the newest stride
    /// probably holds a missed trigger, which `joinCarried` handles.
    @inlinable
    mutating func dropsDoubtfulFirstCandidate(at timestamp: Double) -> Bool {
        guard !stepping, !resuming, joinedCount == 0, pending.count == 3 else { return false }
        let newestStep = candidates[0].time - candidates[1].time
        guard newestStep < 1.5 * (candidates[1].time - candidates[2].time) else { return false }
        var kept = StepTimes()
        kept.append(contentsOf: pending, from: 1)
        kept.append(timestamp)
        pending = kept
        runCadence = 2 / (candidates[0].time - candidates[2].time)
        runDirection = candidates[2].down
        candidates.keepNewestThree()
        return true
    }

    /// The tests on the stride itself that the newest candidate ends (``Configuration``), all but its agreement
    /// with the stride before.
    @inlinable
    func passesStrideTests() -> Bool {
        let c = configuration
        let newest = candidates[0]
        let stride = newest.time - candidates[2].time
        let step = newest.time - candidates[1].time
        guard stride >= 2 / c.cadenceRange.upperBound && stride <= 2 / c.cadenceRange.lowerBound else { return false }
        guard step >= c.stepAsymmetry * stride && step <= (1 - c.stepAsymmetry) * stride else { return false }
        guard Self.cosine(newest.down, candidates[1].down) >= strideTiltCosine,
            Self.cosine(candidates[1].down, candidates[2].down) >= strideTiltCosine,
            Self.cosine(newest.down, candidates[2].down) >= strideTiltCosine,
            Self.cosine(newest.down, runDirection) >= streakTiltCosine
        else { return false }
        let vertical = newest.verticalEnergy + candidates[1].verticalEnergy
        let horizontal = newest.horizontalEnergy + candidates[1].horizontalEnergy
        guard horizontal <= c.maximumHorizontalRatio * c.maximumHorizontalRatio * vertical else { return false }
        // The centre of mass bounces at the cadence 2/stride by at most D: a peak of at most (2π·2/stride)²·D.
        let omega = 2 * Scalar.pi * 2 / Scalar(stride)
        let limit = omega * omega * c.maximumExcursion / Scalar(Self.standardGravity)
        guard max(newest.peak, candidates[1].peak) <= limit else { return false }
        let diagonal = newest.diagonalMoments + candidates[1].diagonalMoments
        let trace = diagonal.sum()
        guard trace > 0 else { return false }
        return Self.largestEigenvalue(
            diagonal: diagonal, offDiagonal: newest.crossMoments + candidates[1].crossMoments,
            isAtMost: c.maximumLinearity * trace)
    }

    /// The cosine of the angle between two unit vectors, clamped to [−1, 1]: an angle is at most θ (in [0°, 180°])
    /// exactly when its cosine is at least cos θ, so the tilt tests need no arc cosine.
    @inlinable
    static func cosine(_ a: SIMD3<Scalar>, _ b: SIMD3<Scalar>) -> Scalar {
        min(max((a * b).sum(), -1), 1)
    }

    /// Whether the largest eigenvalue of the symmetric 3 × 3 matrix with `diagonal` (a11, a22, a33) and
    /// `offDiagonal` (a12, a13, a23) is at most `bound`: whether `bound·I − M` is positive semidefinite, that is
    /// whether all its principal minors are ≥ 0 (no square root or trigonometry, unlike
    /// `ShakeDetector.largestEigenvalue`).
    @inlinable
    static func largestEigenvalue(diagonal: SIMD3<Scalar>, offDiagonal: SIMD3<Scalar>, isAtMost bound: Scalar)
        -> Bool
    {
        let a = bound - diagonal
        let (p, q, r) = (offDiagonal.x, offDiagonal.y, offDiagonal.z)
        guard a.x >= 0, a.y >= 0, a.z >= 0 else { return false }
        let minor12 = a.x * a.y - p * p
        let minor13 = a.x * a.z - q * q
        let minor23 = a.y * a.z - r * r
        guard minor12 >= 0, minor13 >= 0, minor23 >= 0 else { return false }
        return a.x * minor23 - a.y * q * q - a.z * p * p - 2 * p * q * r >= 0
    }

    /// Standard gravity, in m/s² (1 g).
    @usableFromInline static var standardGravity: Double { 9.80665 }

    /// A step candidate: its time, gravity's direction then, and the energies and vertical peak of the step it
    /// ends.
    @usableFromInline
    struct Candidate: Sendable {
        @usableFromInline var time: Double
        @usableFromInline var down: SIMD3<Scalar>
        @usableFromInline var verticalEnergy: Scalar
        @usableFromInline var horizontalEnergy: Scalar
        @usableFromInline var peak: Scalar
        @usableFromInline var diagonalMoments: SIMD3<Scalar>
        @usableFromInline var crossMoments: SIMD3<Scalar>

        /// A placeholder for an empty slot of `CandidateHistory`.
        @inlinable static var none: Self {
            Candidate(
                time: 0, down: .zero, verticalEnergy: 0, horizontalEnergy: 0, peak: 0, diagonalMoments: .zero,
                crossMoments: .zero)
        }

        @inlinable
        init(
            time: Double, down: SIMD3<Scalar>, verticalEnergy: Scalar, horizontalEnergy: Scalar, peak: Scalar,
            diagonalMoments: SIMD3<Scalar>, crossMoments: SIMD3<Scalar>
        ) {
            self.diagonalMoments = diagonalMoments
            self.crossMoments = crossMoments
            self.time = time
            self.down = down
            self.verticalEnergy = verticalEnergy
            self.horizontalEnergy = horizontalEnergy
            self.peak = peak
        }
    }

    /// The last four candidates, newest first, in fixed storage: a ring, so a push writes one slot.
    @usableFromInline
    struct CandidateHistory: Sendable {
        @usableFromInline var slots: (Candidate, Candidate, Candidate, Candidate) = (.none, .none, .none, .none)
        /// The slot of the newest candidate.
        @usableFromInline var newest = 0
        @usableFromInline var count = 0

        @inlinable init() {}

        @inlinable
        mutating func push(_ candidate: Candidate) {
            newest = (newest + 1) & 3
            switch newest {
            case 0: slots.0 = candidate
            case 1: slots.1 = candidate
            case 2: slots.2 = candidate
            default: slots.3 = candidate
            }
            count = min(count + 1, 4)
        }

        @inlinable
        mutating func keepNewest() { count = min(count, 1) }

        @inlinable
        mutating func keepNewestTwo() { count = min(count, 2) }

        @inlinable
        mutating func keepNewestThree() { count = min(count, 3) }

        /// The `index`th newest candidate (0: the newest).
        @inlinable
        subscript(index: Int) -> Candidate {
            precondition(index >= 0 && index < count, "Candidate \(index) of \(count).")
            switch (newest - index) & 3 {
            case 0: return slots.0
            case 1: return slots.1
            case 2: return slots.2
            default: return slots.3
            }
        }
    }
}

/// Up to 32 step times, in fixed storage (no allocation).
public struct StepTimes: Sendable {
    /// The most times it holds.
    public static var capacity: Int { 32 }

    @usableFromInline var storage = SIMD32<Double>()
    @usableFromInline var storedCount = 0
    /// How many times it holds.
    @inlinable public var count: Int { storedCount }

    /// Creates an empty list.
    @inlinable public init() {}

    /// The `index`th time, oldest first, in seconds.
    @inlinable
    public subscript(index: Int) -> Double {
        precondition(index >= 0 && index < count, "Index \(index) out of 0..<\(count).")
        return storage[index]
    }

    @inlinable
    mutating func append(_ time: Double) {
        if storedCount == Self.capacity {
            // Keep the newest: drop the oldest.
            for i in 1..<Self.capacity { storage[i - 1] = storage[i] }
            storedCount -= 1
        }
        storage[storedCount] = time
        storedCount += 1
    }

    /// Appends `other`'s times from its `index`th on.
    @inlinable
    mutating func append(contentsOf other: StepTimes, from index: Int = 0) {
        for i in index..<other.count { append(other.storage[i]) }
    }

    /// Appends `count` times spread evenly between `start` and `end` (seconds, neither included): the steps bridged
    /// over a gap.
    @inlinable
    mutating func appendEvenly(_ count: Int, between start: Double, and end: Double) {
        guard count > 0 else { return }
        for k in 1...count { append(start + (end - start) * Double(k) / Double(count + 1)) }
    }

    @inlinable
    mutating func removeAll() { storedCount = 0 }

    /// Removes the times from `time` (seconds) on; the times are in order.
    @inlinable
    mutating func removeAll(from time: Double) {
        while storedCount > 0 && storage[storedCount - 1] >= time { storedCount -= 1 }
    }
}
