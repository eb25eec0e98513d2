import MotionCore
import RealModule
import Testing
import TestThreads

@testable import MotionAlgorithms

/// `StepDetector` on synthetic gaits (known step times, random orientation, noise, irregular sampling) and on
/// distractors that must give no step.
@Suite(.computeBound) struct StepDetectorTests {
    static let flat = SIMD3<Double>(0, 0, -1)

    /// Counts the steps of `gait` sampled at `times`, from 2 s of rest before it to 3 s after.
    static func count(_ gait: GaitSignal, rate: Double = 100, jitter: Double = 0, noise: Double = 0.01) -> [Double] {
        let times = sampleTimes(from: 0, to: gait.end + 3, rate: rate, jitter: jitter)
        var detector = StepDetector<Double>()
        return detector.steps(readings(gait.reading, at: times, noise: noise))
    }

    // MARK: Gaits

    @Test(arguments: [
        (1.4, 0.12), (1.8, 0.2), (2.2, 0.3), (2.8, 0.9), (3.2, 1.2),
    ])
    func aWalkOrRunIsCountedToWithinOneStep(cadence: Double, amplitude: Double) {
        for seed: UInt64 in 1...4 {
            let gait = GaitSignal(steps: 120, cadence: cadence, amplitude: amplitude, seed: seed)
            let steps = Self.count(gait)
            #expect(abs(steps.count - 120) <= 1, "cadence \(cadence), seed \(seed): \(steps.count) steps")
            // Each counted step lies within a quarter step of a true one.
            let period = 1 / cadence
            let offsets = steps.map { t in gait.stepTimes.map { t - $0 }.min { abs($0) < abs($1) }! }
            #expect(offsets.allSatisfy { abs($0) < period / 2 }, "\(offsets.filter { abs($0) >= period / 2 })")
        }
    }

    /// A device carried on one side of the body (a pocket): its side's steps are sharp heel strikes (20–40 ms)
    /// with a shallow trough after them, the other side's a weak swing of 0.4–0.5 times the amplitude, read by a
    /// sensor whose low-pass averages each sample's interval. A trigger re-armed only below −h of the strong
    /// side's peak stays armed through the shallow trough and misses the weak steps (then every stride is two
    /// steps long: with the 20 ms strikes nothing is counted); re-armed by the next step's side, it counts them
    /// at every rate.
    @Test(arguments: [25.0, 50, 100, 200, 400])
    func aGaitWithHeelStrikesOnOneSideAndWeakStepsOnTheOtherIsCounted(rate: Double) {
        for (ratio, width) in [(0.4, 0.02), (0.4, 0.04), (0.5, 0.02), (0.5, 0.04)] {
            for seed: UInt64 in 1...4 {
                var gait = GaitSignal(steps: 60, cadence: 1.8, amplitude: 0.5, seed: seed)
                gait.heelStrike = (ratio, width)
                var detector = StepDetector<Double>()
                let steps = detector.steps(averagedReadings(gait.reading, from: 0, to: gait.end + 3, rate: rate))
                #expect(abs(steps.count - 60) <= 2, "ratio \(ratio), width \(width) s, seed \(seed): \(steps.count)")
                let offsets = steps.map { t in gait.stepTimes.map { t - $0 }.min { abs($0) < abs($1) }! }
                #expect(offsets.allSatisfy { abs($0) < 0.5 / 1.8 }, "\(offsets.filter { abs($0) >= 0.5 / 1.8 })")
            }
        }
    }

    @Test(arguments: [25.0, 50, 100, 200, 400])
    func theRateDoesNotChangeTheCount(rate: Double) {
        let gait = GaitSignal(steps: 80, cadence: 1.9, amplitude: 0.2, seed: 5)
        #expect(abs(Self.count(gait, rate: rate).count - 80) <= 1)
    }

    /// A step's time is when the smoothed vertical acceleration rises through the trigger's threshold, which lies
    /// between two samples: interpolated there, the steps' times at 25 or 50 Hz differ from those at 400 Hz by one
    /// offset common to all (the filters' discretization, under a sample) to within a quarter sample, so step
    /// intervals and cadence do not depend on the rate. Taken as the sample's time, a step came up to a whole
    /// sample late at random (40 ms at 25 Hz, a tenth of a step at 2.5 steps/s), which the stride tests saw as
    /// irregular strides.
    @Test(arguments: [25.0, 50])
    func stepTimesDoNotDependOnTheRateBeyondAnOffset(rate: Double) {
        for seed: UInt64 in 1...4 {
            let gait = GaitSignal(steps: 60, cadence: 1.9, amplitude: 0.2, seed: seed)
            let reference = Self.count(gait, rate: 400, noise: 0.002)
            let steps = Self.count(gait, rate: rate, noise: 0.002)
            #expect(steps.count == reference.count, "seed \(seed): \(steps.count) and \(reference.count) steps")
            let differences = zip(steps, reference).map { $0 - $1 }
            let spread = (differences.max() ?? 0) - (differences.min() ?? 0)
            #expect(
                spread < 0.25 / rate, "seed \(seed): offsets from \(differences.min() ?? 0) to \(differences.max() ?? 0) s")
            #expect(differences.allSatisfy { abs($0) < 1 / rate }, "seed \(seed)")
        }
    }

    @Test func irregularSamplingIsCountedLikeRegular() {
        // Android's "fastest" delivery: intervals vary by ±90 % around 5 ms.
        let gait = GaitSignal(steps: 80, cadence: 1.7, amplitude: 0.15, seed: 9)
        #expect(abs(Self.count(gait, rate: 200, jitter: 0.9).count - 80) <= 1)
    }

    @Test func theRateMayChangeDuringAWalk() {
        let gait = GaitSignal(steps: 100, cadence: 2, amplitude: 0.25, seed: 11)
        let middle = gait.stepTimes[50] + 0.13
        let times = sampleTimes(from: 0, to: middle, rate: 50) + sampleTimes(from: middle, to: gait.end + 3, rate: 400)
        var detector = StepDetector<Double>()
        #expect(abs(detector.steps(readings(gait.reading, at: times)).count - 100) <= 1)
    }

    @Test func aGapRestartsTheRunAndLosesOnlyTheStepsInIt() {
        let gait = GaitSignal(steps: 100, cadence: 2, amplitude: 0.25, seed: 12)
        let (gapStart, gapEnd) = (gait.stepTimes[40] + 0.1, gait.stepTimes[40] + 3.1)  // 3 s without samples
        let times = sampleTimes(from: 0, to: gait.end + 3, rate: 100).filter { $0 < gapStart || $0 >= gapEnd }
        var detector = StepDetector<Double>()
        let steps = detector.steps(readings(gait.reading, at: times))
        let outside = gait.stepTimes.filter { $0 < gapStart || $0 >= gapEnd }.count
        // The step after the gap is where the trigger starts again; the run re-confirms and counts retroactively.
        #expect(steps.count <= outside && steps.count >= outside - 3, "\(steps.count) of \(outside)")
        #expect(steps.allSatisfy { $0 < gapStart || $0 >= gapEnd })
    }

    @Test func aWalkWithAMissedStepEverySevenResumesAndBridgesTheMissedStep() {
        // 20 regular steps, then every 7th step a shuffle the trigger misses: runs of 6 steps between breaks.
        var gait = GaitSignal(steps: 120, cadence: 1.9, amplitude: 0.2, seed: 16)
        gait.weakSteps = Set(stride(from: 26, to: 120, by: 7))
        let steps = Self.count(gait)
        let counted = steps.count
        // Each resumed run bridges the step its break lost (the gap is two periods at the walk's cadence): the
        // shuffles are steps too, so nearly all 120 are counted, each bridged one in its gap, near the true one.
        #expect(counted >= 120 - 3 && counted <= 120, "\(counted) of 120")
        #expect(steps == steps.sorted())
        let offsets = steps.map { t in gait.stepTimes.map { t - $0 }.min { abs($0) < abs($1) }! }
        #expect(offsets.allSatisfy { abs($0) < gait.period / 2 }, "\(offsets.filter { abs($0) >= gait.period / 2 })")
        let times = sampleTimes(from: 0, to: gait.end + 3, rate: 100)
        // Without bridging, each break costs the stride that holds the missed step.
        var unbridged = StepDetector<Double>(configuration: .init(maximumBridgedSteps: 0))
        let detectable = 120 - gait.weakSteps.count
        let withoutBridging = unbridged.steps(readings(gait.reading, at: times)).count
        #expect(withoutBridging >= detectable - 2 * gait.weakSteps.count && withoutBridging <= detectable)
        // Without resuming (resume = confirmation), runs of 6 never reach 10: only the first 20-odd are counted.
        var strict = StepDetector<Double>(configuration: .init(resumeSteps: 10))
        #expect(strict.steps(readings(gait.reading, at: times)).count < 30)
    }

    @Test(arguments: [1.6, 1.9, 2.2])
    func anExtraTriggerInAWalkCostsAtMostOneStep(cadence: Double) {
        // A knock halfway between steps 40 and 41, with bridging on.
        let gait = GaitSignal(steps: 100, cadence: cadence, amplitude: 0.2, seed: 21)
        let knock = (gait.stepTimes[40] + gait.stepTimes[41]) / 2
        let signal = { (t: Double) -> SIMD3<Double> in
            // One cycle of 0.2 s, 0.6 g: a fall and a rise through the trigger's levels.
            let pulse = abs(t - knock) < 0.1 ? -0.6 * Double.sin(Double.pi * (t - knock) / 0.1) : 0
            return gait.reading(t) + GaitSignal.apply(gait.rotation, SIMD3(0, 0, -pulse))
        }
        let samples = readings(signal, at: sampleTimes(from: 0, to: gait.end + 3, rate: 100))
        var detector = StepDetector<Double>()
        let counted = detector.steps(samples)
        #expect(abs(counted.count - 100) <= 1, "cadence \(cadence): \(counted.count) of 100")
        #expect(counted == counted.sorted())
    }

    /// A fault before a walk is confirmed (a missed trigger at step 5, or at steps 4 and 9) breaks the run; the run
    /// after it continues the broken one, so the steps before the fault and the missed one are counted too.
    @Test(arguments: [[5], [4, 9]] as [[Int]])
    func aFaultBeforeTheWalkIsConfirmedLosesNoStep(weak: [Int]) {
        for cadence in [1.6, 1.9, 2.2] {
            var gait = GaitSignal(steps: 40, cadence: cadence, amplitude: 0.2, seed: 31)
            gait.weakSteps = Set(weak)
            let steps = Self.count(gait)
            // Before runs were continued, the steps up to the last fault were lost: 33 and 29 of 40 were counted.
            #expect(steps.count >= 40 - 1 && steps.count <= 40, "cadence \(cadence), weak \(weak): \(steps.count)")
            #expect(steps == steps.sorted())
            let offsets = steps.map { t in gait.stepTimes.map { t - $0 }.min { abs($0) < abs($1) }! }
            let far = offsets.filter { abs($0) >= gait.period / 2 }
            #expect(far.isEmpty, "\(far)")
        }
    }

    /// Counts the steps of a 40-step walk from 3 s with a bump `periodsBefore` step periods before its first
    /// detected step (its second: the first fades in and is not detected, so 39 is the most counted); also gives
    /// the bump's time and the walk's step period.
    static func countWalkWithBump(cadence: Double, periodsBefore: Double, seed: UInt64)
        -> (steps: [Double], bump: Double, period: Double)
    {
        let gait = GaitSignal(steps: 40, cadence: cadence, amplitude: 0.2, start: 3, seed: seed)
        let bump = gait.stepTimes[1] - periodsBefore * gait.period
        let signal = { (t: Double) -> SIMD3<Double> in
            // One cycle of a step's size and length, along gravity: down, then up.
            let x = (t - bump) / gait.period
            let pulse = abs(x) < 0.5 ? -0.2 * Double.sin(2 * Double.pi * x) : 0
            return gait.reading(t) + GaitSignal.apply(gait.rotation, SIMD3(0, 0, pulse))
        }
        var detector = StepDetector<Double>()
        let steps = detector.steps(readings(signal, at: sampleTimes(from: 0, to: gait.end + 3, rate: 100)))
        return (steps, bump, gait.period)
    }

    /// A bump as the walk starts (the device being put away): a candidate whose stride with the walk's first
    /// detected steps passes every test of a stride (the band allows up to 2 s) but is too long for the next
    /// stride. The run drops that doubtful first candidate instead of starting again at the newest step.
    @Test(arguments: [(1.6, 2.2), (1.9, 2.5), (2.2, 2.5)])
    func aBumpAsTheWalkStartsCostsNoStep(cadence: Double, periodsBefore: Double) {
        for seed: UInt64 in 41...45 {
            let (steps, bump, period) = Self.countWalkWithBump(
                cadence: cadence, periodsBefore: periodsBefore, seed: seed)
            // Before the doubtful first candidate could be dropped, the two steps after it were lost too (37).
            #expect(steps.count == 39, "cadence \(cadence), seed \(seed): \(steps.count)")
            #expect(steps.allSatisfy { $0 > bump + period / 2 }, "\(steps.prefix(3))")
        }
    }

    /// The same bump further before the walk (3.2 or 4 periods before its first detected step), so that the stride
    /// it starts fails a test of its own (too long, or its steps too unequal): the run's first candidate is
    /// dropped and the run goes on from its second, the walk's first detected step, instead of starting again at
    /// the newest and losing that step.
    @Test(arguments: [1.6, 1.9, 2.2])
    func aBumpLongBeforeTheWalkCostsNoStep(cadence: Double) {
        for periodsBefore in [3.2, 4.0] {
            for seed: UInt64 in 41...45 {
                let (steps, bump, period) = Self.countWalkWithBump(
                    cadence: cadence, periodsBefore: periodsBefore, seed: seed)
                // Starting again at the newest candidate lost the walk's first detected step (38).
                #expect(steps.count == 39, "cadence \(cadence), \(periodsBefore) periods, seed \(seed): \(steps.count)")
                #expect(steps.allSatisfy { $0 > bump + period / 2 }, "\(steps.prefix(3))")
            }
        }
    }

    /// Counts the steps of a walk of `first` steps from 2 s, a pause of `pause` seconds after its last step, a walk
    /// of `second` steps at the same cadence, and 3 s of rest; also gives the first walk's end.
    static func countTwoWalks(
        _ first: Int, pause: Double, _ second: Int, cadence: Double, secondCadence: Double? = nil,
        seeds: (UInt64, UInt64)
    ) -> (steps: [Double], firstEnd: Double) {
        let one = GaitSignal(steps: first, cadence: cadence, amplitude: 0.2, start: 2, seed: seeds.0)
        let two = GaitSignal(
            steps: second, cadence: secondCadence ?? cadence, amplitude: 0.2, start: one.stepTimes.last! + pause,
            seed: seeds.1)
        let signal = { (t: Double) -> SIMD3<Double> in t < one.end ? one.reading(t) : two.reading(t) }
        var detector = StepDetector<Double>()
        return (detector.steps(readings(signal, at: sampleTimes(from: 0, to: two.end + 3, rate: 100))), one.end)
    }

    /// A short bout (fewer steps than the confirmation, at least `resumeSteps`), a pause longer than bridging
    /// covers, then a walk at the same cadence: one walking episode, so the bout is counted with the walk when the
    /// pause is at most the longest confirmation (10 s).
    @Test(arguments: [1.6, 1.9, 2.2])
    func aShortBoutBeforeAPauseIsCountedWithTheWalk(cadence: Double) {
        for pause in [2.6, 4.0, 8.0] {
            let (counted, firstEnd) = Self.countTwoWalks(6, pause: pause, 30, cadence: cadence, seeds: (5, 6))
            #expect(counted.count >= 36 - 1 && counted.count <= 36, "cadence \(cadence), \(pause) s: \(counted.count)")
            #expect(counted.filter { $0 <= firstEnd }.count >= 5, "pause \(pause) s: \(counted.prefix(8))")
            #expect(zip(counted.dropFirst(), counted).allSatisfy { $0 > $1 }, "in time order")
        }
    }

    /// Two bouts, each with a pause after it, then a walk, all at one cadence: one episode, all counted.
    @Test(arguments: [1.6, 1.9, 2.2])
    func boutsInARowAreCountedWithTheWalk(cadence: Double) {
        let one = GaitSignal(steps: 6, cadence: cadence, amplitude: 0.2, start: 2, seed: 7)
        let two = GaitSignal(steps: 6, cadence: cadence, amplitude: 0.2, start: one.stepTimes.last! + 4, seed: 7)
        let walk = GaitSignal(steps: 30, cadence: cadence, amplitude: 0.2, start: two.stepTimes.last! + 4, seed: 7)
        let signal = { (t: Double) -> SIMD3<Double> in
            t < one.end ? one.reading(t) : t < two.end ? two.reading(t) : walk.reading(t)
        }
        var detector = StepDetector<Double>()
        let counted = detector.steps(readings(signal, at: sampleTimes(from: 0, to: walk.end + 3, rate: 100)))
        // Each of the three pieces may lose its first step, as any walk's start may.
        #expect(counted.count >= 42 - 3 && counted.count <= 42, "cadence \(cadence): \(counted.count)")
        #expect(counted.filter { $0 <= one.end }.count >= 5, "\(counted.prefix(6))")
    }

    /// A bout, a pause, then a run broken by a missed trigger after its fifth step and continued: a second bout of
    /// 12 steps with a pause after it, or the walk itself. The continued run's steps stop being a bout of their
    /// own, but the bout before them is still one with them: every piece is counted with the walk.
    @Test(arguments: [1.6, 1.9, 2.2])
    func aBoutBeforeARunContinuedAfterAFaultIsCountedWithTheWalk(cadence: Double) {
        for secondSteps in [12, 0] {
            let one = GaitSignal(steps: 6, cadence: cadence, amplitude: 0.2, start: 2, seed: 8)
            var two: GaitSignal?
            if secondSteps > 0 {
                two = GaitSignal(
                    steps: secondSteps, cadence: cadence, amplitude: 0.2, start: one.stepTimes.last! + 4, seed: 9)
                two?.weakSteps = [5]
            }
            let walkStart = (two ?? one).stepTimes.last! + 4
            var walk = GaitSignal(steps: 30, cadence: cadence, amplitude: 0.2, start: walkStart, seed: 10)
            if two == nil { walk.weakSteps = [5] }
            let signal = { [one, two, walk] (t: Double) -> SIMD3<Double> in
                if t < one.end { return one.reading(t) }
                if let two, t < two.end { return two.reading(t) }
                return walk.reading(t)
            }
            var detector = StepDetector<Double>()
            let counted = detector.steps(readings(signal, at: sampleTimes(from: 0, to: walk.end + 3, rate: 100)))
            // The missed step is bridged; each piece may lose its first step, as any walk's start may.
            let total = 6 + secondSteps + 30
            let label = "cadence \(cadence), second bout of \(secondSteps): \(counted.count)"
            #expect(counted.count >= total - 3 && counted.count <= total, "\(label)")
            #expect(counted.filter { $0 <= one.end }.count >= 5, "\(label): \(counted.prefix(6))")
        }
    }

    /// A bout that is not one episode with the walk stays uncounted: a pause beyond the longest confirmation, a
    /// cadence beyond the stride tolerance of the walk's, or fewer steps than two tested strides.
    @Test(arguments: [1.6, 1.9, 2.2])
    func aBoutApartFromTheWalkIsNotCounted(cadence: Double) {
        var cases: [(bout: Int, pause: Double, walkCadence: Double)] = [(6, 12, cadence), (3, 4, cadence)]
        cases.append((6, 4, cadence * 1.45))
        for (bout, pause, walkCadence) in cases {
            let (counted, firstEnd) = Self.countTwoWalks(
                bout, pause: pause, 30, cadence: cadence, secondCadence: walkCadence, seeds: (5, 6))
            let label = "\(bout) steps at \(cadence), \(pause) s, walk at \(walkCadence): \(counted.count)"
            // (The walk's own first steps may be lost as at any walk's start: 28 after a 3-step bout.)
            #expect(counted.count >= 30 - 2 && counted.count <= 30, "\(label)")
            #expect(counted.allSatisfy { $0 > firstEnd }, "\(label): \(counted.filter { $0 <= firstEnd })")
        }
    }

    /// Motion that is no gait just before a walk (shaking, turning in the hand, tapping for 6 s) is no bout: the
    /// walk's steps alone are counted, none from before it.
    @Test(arguments: [0, 1, 2])
    func motionBeforeAWalkIsNotCountedWithIt(distractor: Int) {
        let walk = GaitSignal(steps: 30, cadence: 1.9, amplitude: 0.2, start: 8.3, seed: 21)
        let before: (Double) -> SIMD3<Double> = switch distractor {
        case 0: { t in SIMD3(0, -1, 0) + Double.sin(2 * .pi * 3 * t) * SIMD3(0, 0, 1) }
        case 1: { t in
            let angle = Double.pi / 3 * Double.sin(2 * .pi * t)
            return SIMD3(Double.sin(angle), 0, -Double.cos(angle)) + SIMD3(0, 0, 0.2 * Double.sin(4 * .pi * t))
        }
        default: { t in
            let since = t.truncatingRemainder(dividingBy: 0.5)
            return Self.flat + SIMD3(0, 0, (since < 0.02 ? 2 : 0) + 0.3 * Double.exp(-since / 0.05))
        }
        }
        // From 6 s the device rests as it is then carried (the walk's orientation), 2 s before the walk.
        let signal = { (t: Double) -> SIMD3<Double> in t < 6 ? before(t) : walk.reading(t) }
        var detector = StepDetector<Double>()
        let counted = detector.steps(readings(signal, at: sampleTimes(from: 0, to: walk.end + 3, rate: 100)))
        // (Two of the walk's first steps are lost while gravity's estimate settles from the distractor's attitude.)
        #expect(counted.count >= 28 && counted.count <= 30, "distractor \(distractor): \(counted.count)")
        #expect(counted.allSatisfy { $0 > walk.begin }, "distractor \(distractor): \(counted.prefix(4))")
    }

    /// What bridging costs: a walker who stops for one or two steps' time and walks on at the same cadence cannot
    /// be told from a detection fault, so at most two steps are added; a longer pause adds none.
    @Test(arguments: [1.6, 1.9, 2.2])
    func aPauseAddsAtMostTwoSteps(cadence: Double) {
        for pause in [0.8, 1.2, 1.6, 2.6, 4.0] {
            let counted = Self.countTwoWalks(30, pause: pause, 30, cadence: cadence, seeds: (3, 4)).steps
            #expect(counted.count >= 60 - 3 && counted.count <= 62, "cadence \(cadence), pause \(pause) s: \(counted.count)")
            if pause > 2 * Self.configurationLongestStep {  // beyond the resume window: no bridging
                #expect(counted.count <= 60, "cadence \(cadence), pause \(pause) s: \(counted.count)")
            }
        }
    }
    static let configurationLongestStep = 1.0

    @Test func fewerStepsThanTheConfirmationAreNotCounted() {
        let gait = GaitSignal(steps: 8, cadence: 1.8, amplitude: 0.2, seed: 13)
        #expect(Self.count(gait).isEmpty)
    }

    /// Walks broken every way at once (pieces of 3–25 steps at 1.2–3 steps/s with missed steps, pauses of
    /// 0.3–3 s, bumps, gaps without samples, the rate changing between 25 and 400 Hz, non-finite and repeated
    /// samples): the runs are broken, carried, continued, resumed and restarted in every order, and the
    /// bookkeeping stays whole: each update's new steps are later than every step counted before, no later than
    /// the sample, and add up to the count.
    @Test(arguments: [101, 102, 103] as [UInt64])
    func brokenWalksKeepTheStepBookkeepingWhole(seed: UInt64) {
        var random = NoiseGenerator(seed: seed)
        var samples: [(t: Double, a: SIMD3<Double>)] = []
        var t = 0.0
        for piece in 0..<25 {
            var gait = GaitSignal(
                steps: 3 + Int(random.uniform() * 23), cadence: 1.2 + 1.8 * random.uniform(),
                amplitude: 0.1 + 0.3 * random.uniform(), start: t + 0.5, seed: seed &* 1000 &+ UInt64(piece))
            gait.weakSteps = Set((0..<gait.stepTimes.count).filter { _ in random.uniform() < 0.08 })
            let bump = random.uniform() < 0.3 ? gait.stepTimes[0] - (1 + 2 * random.uniform()) * gait.period : nil
            let signal = { (time: Double) -> SIMD3<Double> in
                let pulse = bump.map { abs(time - $0) < 0.15 ? -0.3 * Double.sin(Double.pi * (time - $0) / 0.15) : 0 }
                return gait.reading(time) + GaitSignal.apply(gait.rotation, SIMD3(0, 0, pulse ?? 0))
            }
            let rate = [25.0, 50, 100, 400][Int(random.uniform() * 4)]
            let end = gait.end + 0.3 + 2.7 * random.uniform()
            samples += readings(signal, at: sampleTimes(from: t, to: end, rate: rate, jitter: 0.3, seed: UInt64(piece)))
            if random.uniform() < 0.2 { samples.append((end, SIMD3(.nan, 0, -1))) }
            if random.uniform() < 0.2, let last = samples.last { samples.append(last) }  // a repeated timestamp
            t = end + (random.uniform() < 0.2 ? 0.5 + 1.5 * random.uniform() : 0)  // a gap without samples
        }
        func check<Scalar: MotionScalar>(_: Scalar.Type) {
            var detector = StepDetector<Scalar>()
            var total = 0
            var lastStep = -Double.infinity
            for (time, a) in samples {
                let n = detector.update(SIMD3<Scalar>(a), at: time)
                #expect(n == detector.newSteps && n <= StepTimes.capacity)
                for i in 0..<n {
                    let step = detector.newStepTime(i)
                    #expect(
                        step > lastStep && step <= time, "\(Scalar.self): step \(step) after \(lastStep), at \(time)")
                    lastStep = step
                }
                total += n
            }
            #expect(total == detector.count && total > 0, "\(Scalar.self): \(total) of \(detector.count)")
        }
        check(Double.self)
        check(Float.self)
    }

    @Test func worksInFloat() {
        let gait = GaitSignal(steps: 60, cadence: 1.8, amplitude: 0.2, seed: 14)
        let times = sampleTimes(from: 0, to: gait.end + 3, rate: 100)
        var detector = StepDetector<Float>()
        #expect(abs(detector.steps(readings(gait.reading, at: times)).count - 60) <= 1)
    }

    @Test func cadenceIsTwoOverTheLastStride() {
        let gait = GaitSignal(steps: 60, cadence: 2, amplitude: 0.25, variation: 0, asymmetry: 0, seed: 15)
        let times = sampleTimes(from: 0, to: gait.end - 0.2, rate: 200)
        var detector = StepDetector<Double>()
        _ = detector.steps(readings(gait.reading, at: times, noise: 0.002))
        #expect(detector.isStepping)
        #expect(abs(detector.cadence - 2) < 0.05)
    }

    // MARK: No steps

    /// Runs `signal` for `duration` seconds at 100 Hz with 0.005 g of noise and returns the steps counted.
    static func steps(_ duration: Double, rate: Double = 100, _ signal: @escaping (Double) -> SIMD3<Double>) -> Int {
        var detector = StepDetector<Double>()
        return detector.steps(readings(signal, at: sampleTimes(from: 0, to: duration, rate: rate), noise: 0.005)).count
    }

    @Test(arguments: [2.0, 3, 4, 6])
    func shakingIsNoSteps(frequency: Double) {
        // 20 s of shaking along each axis, 0.5–2 g, the device held upright.
        for axis in [SIMD3<Double>(1, 0, 0), SIMD3(0, 1, 0), SIMD3(0, 0, 1)] {
            for amplitude in [0.5, 1, 2] {
                let n = Self.steps(20) { t in
                    SIMD3(0, -1, 0) + amplitude * Double.sin(2 * .pi * frequency * t) * axis
                }
                #expect(n == 0, "\(frequency) Hz, \(amplitude) g along \(axis): \(n) steps")
            }
        }
    }

    @Test(arguments: [1.5, 2, 3])
    func regularTappingIsNoSteps(rate: Double) {
        // A finger tapping the screen of a device lying flat: 20 ms impulses of 2 g into the table, ringing at
        // 40 Hz, `rate` taps per second for 20 s.
        let n = Self.steps(20, rate: 400) { t in
            let since = t.truncatingRemainder(dividingBy: 1 / rate)
            let impulse = since < 0.02 ? 2.0 : 0
            let ringing = 0.3 * Double.exp(-since / 0.05) * Double.sin(2 * .pi * 40 * since)
            return Self.flat + SIMD3(0, 0, impulse + ringing)
        }
        #expect(n == 0, "\(n) steps")
    }

    @Test(arguments: [0.5, 1, 1.5])
    func turningTheDeviceInTheHandIsNoSteps(frequency: Double) {
        // Turned back and forth by ±60° about its long axis, with the hand's small translation at the same rate.
        let n = Self.steps(20) { t in
            let angle = Double.pi / 3 * Double.sin(2 * .pi * frequency * t)
            let hand = 0.2 * Double.sin(4 * .pi * frequency * t)
            return SIMD3(Double.sin(angle), 0, -Double.cos(angle)) + SIMD3(0, 0, hand)
        }
        #expect(n == 0, "\(n) steps")
    }

    @Test func engineVibrationAndVehicleMotionAreNoSteps() {
        // A device on a car seat: engine at 25–35 Hz (0.3 g), road noise, the car's suspension bouncing at
        // 1.2–1.8 Hz (0.1 g), and braking and cornering (0.2 g over seconds).
        var random = NoiseGenerator(seed: 21)
        let road = (0..<64).map { _ in random.gaussian() }
        let n = Self.steps(60, rate: 200) { t in
            let engine = 0.3 * Double.sin(2 * .pi * (30 + 5 * Double.sin(0.1 * t)) * t)
            let bounce = 0.1 * Double.sin(2 * .pi * (1.5 + 0.3 * Double.sin(0.05 * t)) * t)
            let bump = 0.05 * road[Int(t * 4) % road.count]
            let driving = 0.2 * Double.sin(2 * .pi * 0.08 * t)
            return Self.flat + SIMD3(driving, 0.5 * driving, engine + bounce + bump)
        }
        #expect(n == 0, "\(n) steps")
    }

    @Test func aStillDeviceIsNoSteps() {
        #expect(Self.steps(60) { _ in Self.flat } == 0)
    }

    @Test func aGaitAboveTheCadenceRangeIsNoSteps() {
        // Vibration-like 'steps' at 5 per second.
        let gait = GaitSignal(steps: 150, cadence: 5, amplitude: 0.5, seed: 30)
        #expect(Self.count(gait).isEmpty)
    }

    @Test func handMotionLargerThanABodyCanBounceIsNoSteps() {
        // Moving the device up and down by hand ±25 cm at 1.3 Hz: 1.7 g at a walking cadence.
        let n = Self.steps(30) { t in
            let a = 0.25 * (2 * .pi * 1.3) * (2 * .pi * 1.3) / 9.80665 * Double.sin(2 * .pi * 1.3 * t)
            return Self.flat + SIMD3(0, 0, a)
        }
        #expect(n == 0, "\(n) steps")
    }

    @Test func horizontalMotionIsNoSteps() {
        // Side-to-side hand motion at 2 Hz with the device flat: horizontal only.
        let n = Self.steps(30) { t in
            Self.flat + SIMD3(0.4 * Double.sin(2 * .pi * 2 * t), 0.1 * Double.sin(2 * .pi * 1 * t), 0)
        }
        #expect(n == 0, "\(n) steps")
    }

    /// The line test's eigenvalue bound (principal minors, no trigonometry) agrees with the closed-form largest
    /// eigenvalue on the moments of random motion: true just above it, false just below it.
    @Test(arguments: [7, 8, 9] as [UInt64])
    func theEigenvalueBoundAgreesWithTheClosedForm(seed: UInt64) {
        var random = NoiseGenerator(seed: seed)
        for _ in 0..<200 {
            // Second moments of a few random accelerations, some nearly along one line (as a shake's are).
            var diagonal = SIMD3<Double>.zero
            var offDiagonal = SIMD3<Double>.zero
            let line = SIMD3(random.uniform() - 0.5, random.uniform() - 0.5, random.uniform() - 0.5)
            let spread = [1.0, 0.1, 0.01][Int(random.uniform() * 3)]
            for _ in 0..<8 {
                let a = line * (random.uniform() - 0.5) * 4
                    + spread * SIMD3(random.uniform() - 0.5, random.uniform() - 0.5, random.uniform() - 0.5)
                diagonal += a * a
                offDiagonal += SIMD3(a.x * a.y, a.x * a.z, a.y * a.z)
            }
            let largest = ShakeDetector<Double>.largestEigenvalue(diagonal: diagonal, offDiagonal: offDiagonal)
            let bound = StepDetector<Double>.largestEigenvalue
            #expect(bound(diagonal, offDiagonal, largest * (1 + 1e-6)), "\(diagonal) \(offDiagonal)")
            #expect(!bound(diagonal, offDiagonal, largest * (1 - 1e-6)), "\(diagonal) \(offDiagonal)")
        }
        // [[2,1,0],[1,2,0],[0,0,1]]: eigenvalues 3, 1, 1.
        #expect(StepDetector<Double>.largestEigenvalue(diagonal: SIMD3(2, 2, 1), offDiagonal: SIMD3(1, 0, 0), isAtMost: 3))
        #expect(
            !StepDetector<Double>.largestEigenvalue(
                diagonal: SIMD3(2, 2, 1), offDiagonal: SIMD3(1, 0, 0), isAtMost: 2.999))
    }

    /// The candidate ring keeps the newest four, newest first, and forgets as asked.
    @Test func theCandidateHistoryKeepsTheNewestFour() {
        typealias History = StepDetector<Double>.CandidateHistory
        func candidate(_ time: Double) -> StepDetector<Double>.Candidate {
            .init(
                time: time, down: .zero, verticalEnergy: 0, horizontalEnergy: 0, peak: 0, diagonalMoments: .zero,
                crossMoments: .zero)
        }
        var history = History()
        for time in 1...6 { history.push(candidate(Double(time))) }
        #expect(history.count == 4)
        #expect((0..<4).map { history[$0].time } == [6, 5, 4, 3])
        history.keepNewestThree()
        history.push(candidate(7))
        #expect(history.count == 4)
        #expect((0..<4).map { history[$0].time } == [7, 6, 5, 4])
        history.keepNewest()
        #expect(history.count == 1 && history[0].time == 7)
        history.push(candidate(8))
        #expect(history.count == 2)
        #expect((0..<2).map { history[$0].time } == [8, 7])
    }
}
