package import MotionAlgorithms
import MotionCore
package import MotionTesting

/// Precision and recall of shake detection on labelled scenarios.
///
/// A `began` counts as a detection of the shake segment it falls in (or within 0.3 s after its end); each
/// shake counts once, so a second `began` in the same shake is a false one. Every other `began` is false. A
/// detected shake's outcome should be `ended` when it lasts at most the maximum duration and
/// `cancelled: tooLong` when longer (either is right within half a stroke of the limit).
package struct ShakeScore {
    /// An empty score.
    package init() {}

    package var scenarios = 0
    package var shakes = 0
    package var detected = 0
    package var falseBegins = 0
    package var axisCorrect = 0
    package var ended = 0
    package var cancelled: [ShakeEvent.CancelReason: Int] = [:]
    package var outcomeMismatches = 0
    package var latencySum = 0.0
    package var latencyMax = 0.0
    package var falseByKind: [String: Int] = [:]
    package var details: [String] = []
    /// Scored Square seismic's rule rather than `ShakeDetector`.
    package var isSeismic = false
    /// Seismic only: reports after the first within one shake.
    package var repeats = 0

    package var precision: Double {
        detected + falseBegins == 0 ? 1 : Double(detected) / Double(detected + falseBegins)
    }
    package var recall: Double { shakes == 0 ? 1 : Double(detected) / Double(shakes) }

    package mutating func add(
        scenario: Scenario, simulation: Simulation, configuration: ShakeDetector<Double>.Configuration
    ) {
        scenarios += 1
        var detector = ShakeDetector<Double>(configuration: configuration)
        var events: [ShakeEvent] = []
        var last = 0.0
        for sample in simulation {
            guard let a = sample.acceleration else { continue }
            last = sample.timestamp
            if let event = detector.update(a.vector, at: sample.timestamp) { events.append(event) }
        }
        if let event = detector.cancel(at: last) { events.append(event) }
        let labelled = scenario.segments.filter(\.isShake)
        shakes += labelled.count
        var credited: Set<Int> = []
        let seed = scenario.seed.map { "\($0)" } ?? "?"
        for (index, event) in events.enumerated() where event.phase == .began {
            let shake = labelled.first { $0.start <= event.timestamp && event.timestamp <= $0.end + 0.3 }
            guard let shake, !credited.contains(shake.index) else {
                falseBegins += 1
                let current = scenario.segment(at: event.timestamp)?.kind ?? "end"
                falseByKind[current, default: 0] += 1
                details.append("false began: seed \(seed) t=\(fixed(event.timestamp, 3)) during \(current)")
                continue
            }
            credited.insert(shake.index)
            detected += 1
            let latency = event.timestamp - shake.start
            latencySum += latency
            latencyMax = max(latencyMax, latency)
            if shake.shakeAxis?.rawValue == event.axis.rawValue {
                axisCorrect += 1
            } else {
                details.append("wrong axis \(event.axis): seed \(seed) \(shake)")
            }
            guard let end = events[(index + 1)...].first(where: { $0.phase != .began }) else { continue }
            switch end.phase {
            case .ended: ended += 1
            case .cancelled(let reason): cancelled[reason, default: 0] += 1
            case .began: break
            }
            let longest = configuration.maximumDuration
            let margin = 0.5 / (shake.shakeFrequency ?? 1)
            if (end.phase == .ended) != (shake.duration <= longest), abs(shake.duration - longest) > margin {
                outcomeMismatches += 1
                details.append("outcome \(end.phase): seed \(seed) \(shake)")
            }
        }
        for shake in labelled where !credited.contains(shake.index) {
            details.append("missed: seed \(seed) \(shake)")
        }
    }

    /// Scores Square seismic's rule: each "hearShake" is a detection; later ones within the same shake are
    /// repeats (seismic reports every 0.25–0.5 s while shaking), not false.
    package mutating func addSeismic(scenario: Scenario, simulation: Simulation, threshold: Double) {
        scenarios += 1
        isSeismic = true
        var detector = SeismicRule(threshold: threshold)
        let labelled = scenario.segments.filter(\.isShake)
        shakes += labelled.count
        var credited: Set<Int> = []
        let seed = scenario.seed.map { "\($0)" } ?? "?"
        for sample in simulation {
            guard let a = sample.acceleration, detector.update(a.vector, at: sample.timestamp) else { continue }
            let t = sample.timestamp
            if let shake = labelled.first(where: { $0.start <= t && t <= $0.end + 0.3 }) {
                if credited.insert(shake.index).inserted {
                    detected += 1
                    latencySum += t - shake.start
                    latencyMax = max(latencyMax, t - shake.start)
                } else {
                    repeats += 1
                }
            } else {
                falseBegins += 1
                let current = scenario.segment(at: t)?.kind ?? "end"
                falseByKind[current, default: 0] += 1
                details.append("false shake: seed \(seed) t=\(fixed(t, 3)) during \(current)")
            }
        }
        for shake in labelled where !credited.contains(shake.index) {
            details.append("missed: seed \(seed) \(shake)")
        }
    }

    /// The report's lines: `title` on `settings` (the scenarios and noise), the figures, and with `verbose` every
    /// miss and false or wrong event.
    package func report(title: String, settings: String, verbose: Bool) -> [String] {
        if isSeismic {
            var lines = [
                "\(title) on \(settings)",
                "shakes \(shakes), detected \(detected), false \(falseBegins), repeats within a shake \(repeats)",
                "precision \(fixed(precision, 4)), recall \(fixed(recall, 4))",
                "first report after the shake's start: mean \(fixed(detected == 0 ? 0 : latencySum / Double(detected), 3)) s, "
                    + "max \(fixed(latencyMax, 3)) s",
            ]
            if !falseByKind.isEmpty {
                lines.append(
                    "false by segment: "
                        + falseByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                )
            }
            if verbose { lines += details }
            return lines
        }
        var lines = [
            "\(title) on \(settings)",
            "shakes \(shakes), detected \(detected), false began \(falseBegins)",
            "precision \(fixed(precision, 4)), recall \(fixed(recall, 4)), axis correct \(fixed(detected == 0 ? 1 : Double(axisCorrect) / Double(detected), 4))",
            "outcomes: ended \(ended), cancelled tooLong \(cancelled[.tooLong, default: 0]), notAShake "
                + "\(cancelled[.notAShake, default: 0]), interrupted \(cancelled[.interrupted, default: 0]); "
                + "outcome mismatches \(outcomeMismatches)",
            "began after the shake's start: mean \(fixed(detected == 0 ? 0 : latencySum / Double(detected), 3)) s, "
                + "max \(fixed(latencyMax, 3)) s",
        ]
        if !falseByKind.isEmpty {
            lines.append(
                "false began by segment: "
                    + falseByKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if verbose { lines += details }
        return lines
    }
}

/// Square seismic's shake rule, for comparison only (`--evaluate --seismic`), written from its description:
/// a sample is "accelerating" when |a| exceeds the threshold (m/s², gravity included); samples older than
/// 0.5 s are dropped (keeping at least 4); it is shaking when the kept samples span at least 0.25 s and at
/// least `(n >> 1) + (n >> 2)` (about 75 %) of them are accelerating; then the queue is cleared.
package struct SeismicRule {
    package let thresholdSquared: Double
    private var queue: [(t: Double, accelerating: Bool)] = []
    private var head = 0

    /// A rule with `threshold` in m/s² (seismic's default is 13).
    package init(threshold: Double) {
        let inG = threshold / Acceleration.standardGravity
        thresholdSquared = inG * inG
    }

    /// Adds a sample (g); `true` when it completes a shake.
    package mutating func update(_ a: SIMD3<Double>, at t: Double) -> Bool {
        queue.append((t, (a * a).sum() > thresholdSquared))
        while queue.count - head > 4 && t - queue[head].t > 0.5 { head += 1 }
        if head > 1024 {
            queue.removeFirst(head)
            head = 0
        }
        let n = queue.count - head
        guard n >= 4, t - queue[head].t >= 0.25 else { return false }
        let accelerating = queue[head...].reduce(0) { $0 + ($1.accelerating ? 1 : 0) }
        guard accelerating >= (n >> 1) + (n >> 2) else { return false }
        queue.removeAll(keepingCapacity: true)
        head = 0
        return true
    }
}
