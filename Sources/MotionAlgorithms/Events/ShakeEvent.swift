/// A shake gesture event, with UIKit's phases: `motionBegan`, `motionEnded` and `motionCancelled`.
///
/// A shake produces exactly one ``Phase/began`` followed by exactly one ``Phase/ended`` or ``Phase/cancelled(_:)``.
/// Apps act on ``Phase/ended``: that is the completed gesture.
public struct ShakeEvent: Hashable, Sendable, CustomStringConvertible {
    /// Where a shake is in its life.
    public enum Phase: Hashable, Sendable, CustomStringConvertible {
        /// A shake has started: enough back-and-forth strokes have been seen (UIKit's `motionBegan`).
        case began
        /// The shake stopped within the maximum duration: the completed gesture (UIKit's `motionEnded`).
        case ended
        /// The shake went on too long, turned out not to be a shake, or was interrupted (UIKit's
        /// `motionCancelled`).
        case cancelled(CancelReason)

        /// `began`, `ended` or `cancelled`.
        public var name: String {
            switch self {
            case .began: "began"
            case .ended: "ended"
            case .cancelled: "cancelled"
            }
        }

        /// `began`, `ended`, or `cancelled (tooLong)` and so on.
        public var description: String {
            if case .cancelled(let reason) = self { return "cancelled (\(reason))" }
            return name
        }
    }

    /// Why a shake was cancelled.
    public enum CancelReason: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Strokes went on beyond ``ShakeDetector/Configuration/maximumDuration``.
        case tooLong
        /// The motion stopped looking like a shake: it is no longer a back-and-forth along one line
        /// (below ``ShakeDetector/Configuration/minimumLinearity``).
        case notAShake
        /// The caller interrupted it (``ShakeDetector/cancel(at:)``), or the samples stopped for longer than
        /// ``ShakeDetector/Configuration/maximumGap``.
        case interrupted

        /// The reason's name, such as `tooLong`.
        public var description: String { rawValue }
    }

    /// A device axis: x along the right edge, y towards the top of the screen, z out of the screen.
    public enum Axis: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Side to side (the device's right edge).
        case x
        /// Up and down the screen (the device's top).
        case y
        /// In and out of the screen.
        case z

        /// `x`, `y` or `z`.
        public var description: String { rawValue }
    }

    /// The phase.
    public var phase: Phase
    /// The timestamp of the sample at which the event was recognised, in seconds (the samples' clock).
    public var timestamp: Double
    /// The device axis that carries most of the shake's energy so far, so that apps can give side-to-side and
    /// up-and-down shakes different meanings.
    public var axis: Axis
    /// When the shake's first stroke started (crossed the threshold), in seconds.
    public var startTime: Double
    /// The number of strokes (half cycles) so far.
    public var strokes: Int
    /// The largest stroke so far: the peak of the filtered linear acceleration, in g.
    public var peakAcceleration: Double

    /// Creates an event.
    @inlinable
    public init(
        phase: Phase, timestamp: Double, axis: Axis, startTime: Double, strokes: Int, peakAcceleration: Double
    ) {
        self.phase = phase
        self.timestamp = timestamp
        self.axis = axis
        self.startTime = startTime
        self.strokes = strokes
        self.peakAcceleration = peakAcceleration
    }

    /// `1.270 began axis=x strokes=3 peak=1.52g`.
    public var description: String {
        let peak = (peakAcceleration * 100).rounded() / 100
        return "\(timestamp) \(phase) axis=\(axis) strokes=\(strokes) peak=\(peak)g"
    }
}
