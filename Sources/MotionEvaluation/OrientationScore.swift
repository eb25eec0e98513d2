package import MotionAlgorithms
import MotionCore
package import MotionTesting

/// Spurious orientation changes on labelled scenarios.
///
/// The truth of a steady segment (hold, shake, gait, tap, vibration) is its nearest named orientation; within
/// 3° + the dead zone of a boundary (offset > 45° − hysteresis − 3°) the second nearest is also right. A change
/// is **spurious** when its new orientation is not right for the steady segment it falls in, or, during a
/// rotation, tilt or set-down, for the next steady segment (or the previous one if that ended less than 1 s
/// before). A **flap** is a change back to the orientation of two changes ago within 2 s with no rotation
/// between. A hold of at least settle + 1 s with a clear truth is **wrong** when the orientation reported at
/// its end differs.
package struct OrientationScore {
    /// An empty score.
    package init() {}

    package var scenarios = 0
    package var changes = 0
    package var spurious = 0
    package var flaps = 0
    package var clearHolds = 0
    package var wrongHolds = 0
    package var ambiguousHolds = 0
    package var details: [String] = []

    /// The names of the orientations that are right for a steady segment, or `nil` for a moving one.
    package static func acceptable(_ segment: LabelledSegment, hysteresis: Double) -> Set<String>? {
        guard let expected = segment.expectedOrientation, let offset = segment.orientationOffset else { return nil }
        var names: Set<String> = [expected.rawValue]
        if offset > .pi / 4 - hysteresis - 3 * .pi / 180 {
            let g = segment.startAttitude.gravity.vector
            let others = NamedOrientation.allCases.filter { $0 != expected }
            if let second = others.max(by: { ($0.gravity.vector * g).sum() < ($1.gravity.vector * g).sum() }) {
                names.insert(second.rawValue)
            }
        }
        return names
    }

    package mutating func add(
        scenario: Scenario, simulation: Simulation, configuration: OrientationClassifier<Double>.Configuration
    ) {
        scenarios += 1
        let hysteresis = configuration.hysteresis
        var classifier = OrientationClassifier<Double>(configuration: configuration)
        var found: [(t: Double, from: DeviceOrientation, to: DeviceOrientation)] = []
        var atEnd: [Int: DeviceOrientation] = [:]
        var segmentIndex = 0
        for sample in simulation {
            guard let a = sample.acceleration else { continue }
            while segmentIndex + 1 < scenario.segments.count && sample.timestamp >= scenario.segments[segmentIndex].end
            {
                atEnd[segmentIndex] = classifier.orientation
                segmentIndex += 1
            }
            if let change = classifier.update(a.vector, at: sample.timestamp), change.orientationChanged {
                found.append((change.timestamp, change.previousOrientation, change.orientation))
            }
        }
        atEnd[segmentIndex] = classifier.orientation
        changes += found.count
        let seed = scenario.seed.map { "\($0)" } ?? "?"
        for (k, change) in found.enumerated() {
            guard let segment = scenario.segment(at: change.t) else { continue }
            let truth = segment.isSteady ? segment : scenario.segments[segment.index...].first(where: \.isSteady)
            var right =
                truth.flatMap { Self.acceptable($0, hysteresis: hysteresis) }?.contains(change.to.description) ?? true
            if !right, !segment.isSteady, let previous = scenario.segments[..<segment.index].last(where: \.isSteady),
                change.t - previous.end < 1, let names = Self.acceptable(previous, hysteresis: hysteresis)
            {
                right = names.contains(change.to.description)
            }
            if !right {
                spurious += 1
                details.append(
                    "spurious \(change.from) -> \(change.to): seed \(seed) t=\(fixed(change.t, 3)) in \(segment)")
            }
            if k > 0 {
                let before = found[k - 1]
                let rotated = scenario.segments.contains { $0.end > before.t && $0.start < change.t && !$0.isSteady }
                if before.from == change.to && change.t - before.t < 2 && !rotated {
                    flaps += 1
                    details.append(
                        "flap \(before.from) -> \(before.to) -> \(change.to): seed \(seed) t=\(fixed(change.t, 3))")
                }
            }
        }
        for segment in scenario.segments
        where segment.kind == "hold" && segment.duration >= configuration.settleTime + 1 {
            guard let names = Self.acceptable(segment, hysteresis: hysteresis), let reported = atEnd[segment.index]
            else {
                continue
            }
            if names.count > 1 {
                ambiguousHolds += 1
                continue
            }
            clearHolds += 1
            if !names.contains(reported.description) {
                wrongHolds += 1
                details.append("wrong at the end of a hold: \(reported), seed \(seed) \(segment)")
            }
        }
    }

    /// The report's lines: the figures on `settings` (the scenarios and noise), and with `verbose` every
    /// spurious change, flap and wrong hold.
    package func report(settings: String, verbose: Bool) -> [String] {
        var lines = [
            "orientation on \(settings)",
            "changes \(changes), spurious \(spurious), flaps \(flaps)",
            "holds of settle + 1 s or more: clear \(clearHolds) (wrong at the end \(wrongHolds)), "
                + "near a boundary \(ambiguousHolds)",
        ]
        if verbose { lines += details }
        return lines
    }
}
