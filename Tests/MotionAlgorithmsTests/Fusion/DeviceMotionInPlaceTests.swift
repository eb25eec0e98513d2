import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing
import TestThreads

/// `update(_:into:)` writes what `update(_:)` returns.
@Suite(.computeBound) struct DeviceMotionInPlaceTests {
    @Test(arguments: AttitudeReferenceFrame.allCases)
    func inPlaceGivesTheSameValues(frame: AttitudeReferenceFrame) {
        var returning = DeviceMotionFilter(referenceFrame: frame, magneticDeclination: 0.05)
        var inPlace = returning
        let start = DeviceMotion(
            timestamp: -1, attitude: .identity, referenceFrame: frame, rotationRate: RotationRate(.zero),
            gravity: Acceleration(.zero), userAcceleration: Acceleration(.zero))
        var motion = start
        // Before any sample, a non-finite timestamp and an accelerometer alone: nothing, and `motion` untouched.
        var samples = [MotionSample(timestamp: .nan, rotationRate: RotationRate(x: 0, y: 0, z: 0))]
        samples.append(MotionSample(timestamp: 0, acceleration: Acceleration(x: 0, y: 0, z: -1)))
        samples += EstimatorStateTests.frames.prefix(1500).map(\.sample)
        var differing = 0
        for (i, sample) in samples.enumerated() {
            let expected = returning.update(sample)
            let written = inPlace.update(sample, into: &motion)
            #expect(written == (expected != nil))
            if i < 2 { #expect(motion == start) }
            if let expected, expected != motion { differing += 1 }
        }
        #expect(differing == 0)
    }
}
