public import MotionCore

/// A script of device motion: a starting attitude and a sequence of ``Segment``s, each placed on a timeline and
/// labelled with its ground truth (``LabelledSegment``).
///
/// Segments chain: each starts at the attitude the previous one ended at. The timeline has no gaps: the first
/// segment starts at 0, each ends where the next starts, and the last ends at ``duration``.
///
/// ```swift
/// var scenario = Scenario(name: "demo", start: .portrait)
/// scenario.append(.hold(1))
/// scenario.append(.shake(axis: .x, frequency: 4, amplitude: 1.5, duration: 1))
/// scenario.hold(.faceUp, for: 2)          // rotates there first, then holds
/// ```
public struct Scenario: Hashable, Sendable, CustomStringConvertible {
    /// A short name for trace headers, such as `orientationSweep`.
    public var name: String
    /// The seed the scenario was generated from, when it was randomised.
    public var seed: UInt64?
    /// The device→reference attitude at time 0.
    public let initialAttitude: Attitude
    /// The segments, in order, with their times and labels.
    public private(set) var segments: [LabelledSegment] = []

    /// Creates an empty scenario starting at `attitude`.
    public init(name: String, seed: UInt64? = nil, start attitude: Attitude) {
        self.name = name
        self.seed = seed
        self.initialAttitude = attitude
    }

    /// Creates an empty scenario starting in a named orientation at `heading` radians.
    public init(name: String, seed: UInt64? = nil, start orientation: NamedOrientation, heading: Double = 0) {
        self.init(name: name, seed: seed, start: orientation.attitude(heading: heading))
    }

    /// Creates a scenario from a list of segments.
    public init(name: String, seed: UInt64? = nil, start attitude: Attitude, segments: [Segment]) {
        self.init(name: name, seed: seed, start: attitude)
        append(contentsOf: segments)
    }

    /// The total length, in seconds: the end of the last segment (0 when empty).
    public var duration: Double { segments.last?.end ?? 0 }

    /// The attitude at the end of the last segment (the next segment's start).
    public var finalAttitude: Attitude { segments.last?.endAttitude ?? initialAttitude }

    /// The segment that covers time `t` (seconds): the last one whose start is ≤ `t`, or `nil` when `t` is
    /// outside [0, ``duration``).
    public func segment(at t: Double) -> LabelledSegment? {
        guard t >= 0, t < duration else { return nil }
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].start <= t { low = middle } else { high = middle - 1 }
        }
        return segments[low]
    }

    /// Appends a segment at the end of the timeline, starting from ``finalAttitude``.
    public mutating func append(_ segment: Segment) {
        segments.append(
            LabelledSegment(
                index: segments.count,
                segment: segment,
                start: segments.last?.end ?? 0,
                startAttitude: finalAttitude
            )
        )
    }

    /// Appends segments in order.
    public mutating func append(contentsOf newSegments: some Sequence<Segment>) {
        for segment in newSegments { append(segment) }
    }

    /// Holds a named orientation for `duration` seconds, first rotating there over `transition` seconds when
    /// the device is not already in it (within 10⁻⁹ rad).
    public mutating func hold(
        _ orientation: NamedOrientation,
        heading: Double = 0,
        for duration: Double,
        transition: Double = 1
    ) {
        hold(orientation.attitude(heading: heading), for: duration, transition: transition)
    }

    /// Holds `attitude` for `duration` seconds, first rotating there over `transition` seconds when the device is
    /// not already in it (within 10⁻⁹ rad).
    public mutating func hold(_ attitude: Attitude, for duration: Double, transition: Double = 1) {
        if finalAttitude.angle(to: attitude) > 1e-9 {
            append(.rotate(to: attitude, duration: transition))
        }
        append(.hold(duration))
    }

    /// One line per segment: `start-end description [labels]`, times in seconds with 3 decimals.
    public var segmentList: [String] { segments.map(\.description) }

    /// The name and the segment list, one segment per line.
    public var description: String {
        (["\(name) (\(segments.count) segments, \(fixed(duration, 3)) s)"] + segmentList).joined(separator: "\n")
    }
}

/// A segment placed on a scenario's timeline, with its ground truth.
public struct LabelledSegment: Hashable, Sendable, CustomStringConvertible {
    /// The position in ``Scenario/segments``.
    public let index: Int
    /// The motion.
    public let segment: Segment
    /// The start time, in seconds since the scenario started.
    public let start: Double
    /// The end time, in seconds (the next segment's start).
    public let end: Double
    /// The device→reference attitude at ``start``.
    public let startAttitude: Attitude
    /// The device→reference attitude at ``end``.
    public let endAttitude: Attitude
    let model: SegmentModel

    init(index: Int, segment: Segment, start: Double, startAttitude: Attitude) {
        let model = SegmentModel(segment: segment, start: startAttitude.quaternion)
        self.index = index
        self.segment = segment
        self.start = start
        self.end = start + segment.duration
        self.model = model
        self.startAttitude = startAttitude
        self.endAttitude = Attitude(quaternion: model.attitude(at: segment.duration, in: segment))
    }

    /// The segment's kind, as ``Segment/kind`` (`hold`, `shake`, `walking`, …).
    public var kind: String { segment.kind }

    /// The segment's length, in seconds.
    public var duration: Double { segment.duration }

    /// `true` when the segment is a shake: the ground truth for a shake detector.
    public var isShake: Bool { segment.isShake }

    /// The device axis of a shake, or `nil`.
    public var shakeAxis: DeviceAxis? {
        if case .shake(let axis, _, _) = segment.motion { axis } else { nil }
    }

    /// The frequency of a shake in Hz, or `nil`.
    public var shakeFrequency: Double? {
        if case .shake(_, let frequency, _) = segment.motion { frequency } else { nil }
    }

    /// The peak user acceleration of a shake in g, or `nil`.
    public var shakeAmplitude: Double? {
        if case .shake(_, _, let amplitude) = segment.motion { amplitude } else { nil }
    }

    /// `true` when the device's mean attitude does not change over the segment (holds, shakes, gaits, taps,
    /// vibrations); `false` for rotations, tilts and set-downs.
    public var isSteady: Bool {
        switch segment.motion {
        case .hold, .shake, .gait, .tap, .vibration: true
        case .rotate, .turn, .setDown: false
        }
    }

    /// For a steady segment, the named orientation nearest to its attitude (by the direction of gravity); `nil`
    /// during rotations. See ``orientationOffset`` for how far from the ideal orientation the device is.
    public var expectedOrientation: NamedOrientation? {
        isSteady ? NamedOrientation.nearest(to: startAttitude).orientation : nil
    }

    /// For a steady segment, the angle in radians between gravity and ``expectedOrientation``'s gravity: 0 for
    /// an ideal orientation, near π/4 close to the boundary with a neighbouring one; `nil` during rotations.
    public var orientationOffset: Double? {
        isSteady ? NamedOrientation.nearest(to: startAttitude).angle : nil
    }

    /// The instant of a tap's impulse peak or of a set-down's impact peak, in seconds since the scenario
    /// started, or `nil`.
    public var eventTime: Double? {
        switch segment.motion {
        case .tap(_, _, let width): start + Segment.tapOffset + width / 2
        case .setDown: start + model.lowering + Segment.setDownImpactWidth / 2
        default: nil
        }
    }

    /// `true` when `t` (seconds) is in [``start``, ``end``).
    public func contains(_ t: Double) -> Bool { t >= start && t < end }

    /// `start-end description`, plus `orientation=…` for steady segments and `shake` for shakes, such as
    /// `1.000-2.500 shake axis=x frequency=4.000Hz amplitude=1.500g duration=1.500s orientation=portrait+0.0deg`.
    public var description: String {
        var text = "\(fixed(start, 3))-\(fixed(end, 3)) \(segment)"
        if let expectedOrientation, let orientationOffset {
            text += " orientation=\(expectedOrientation)+\(degrees(orientationOffset))"
        }
        return text
    }
}
