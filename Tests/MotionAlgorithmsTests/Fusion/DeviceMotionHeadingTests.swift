import Foundation
import MotionAlgorithms
import MotionCore
import MotionTesting
import Testing
import TestThreads

/// `DeviceMotion.heading` of the filter's values, computed when read, against the C library's `atan2` of where the
/// device's top points; and a heading set or given by value stays that value.
@Suite(.computeBound) struct DeviceMotionHeadingTests {
    /// The compass heading (degrees clockwise from x, seen from above) of `attitude`'s top, or of its back when the
    /// top is within about 6° of vertical, by the C library.
    static func referenceHeading(_ attitude: Attitude) -> Double {
        let q = attitude.quaternion
        var direction = q.act(on: SIMD3(0, 1, 0))
        if direction.x * direction.x + direction.y * direction.y < 0.01 { direction = -q.act(on: SIMD3(0, 0, 1)) }
        let degrees = atan2(-direction.y, direction.x) * 180 / .pi
        return degrees < 0 ? degrees + 360 : degrees
    }

    @Test(arguments: [AttitudeReferenceFrame.xMagneticNorthZVertical, .xTrueNorthZVertical])
    func theHeadingReadIsTheAttitudesHeading(frame: AttitudeReferenceFrame) {
        var filter = DeviceMotionFilter(referenceFrame: frame, magneticDeclination: 0.05)
        var (headings, worst) = (0, 0.0)
        for frame in EstimatorStateTests.frames.prefix(3000) {
            guard let motion = filter.update(frame.sample), motion.heading >= 0 else { continue }
            headings += 1
            #expect(motion.heading == DeviceMotion.heading(of: motion.attitude))
            #expect(motion.heading < 360)
            let difference = abs(motion.heading - Self.referenceHeading(motion.attitude))
            worst = max(worst, min(difference, 360 - difference))
        }
        #expect(headings > 2900, "the magnetometer sets the heading from the first samples")
        #expect(worst < 1e-9, "degrees")
    }

    @Test(arguments: [AttitudeReferenceFrame.xArbitraryZVertical, .xArbitraryCorrectedZVertical])
    func framesWithoutNorthHaveNoHeading(frame: AttitudeReferenceFrame) {
        var filter = DeviceMotionFilter(referenceFrame: frame)
        var motions = 0
        for frame in EstimatorStateTests.frames.prefix(500) {
            guard let motion = filter.update(frame.sample) else { continue }
            motions += 1
            #expect(motion.heading == -1)
        }
        #expect(motions > 400)
    }

    @Test func aHeadingSetOrGivenIsKept() {
        var filter = DeviceMotionFilter(referenceFrame: .xMagneticNorthZVertical)
        var motion: DeviceMotion?
        for frame in EstimatorStateTests.frames.prefix(200) { motion = filter.update(frame.sample) ?? motion }
        guard var motion else {
            Issue.record("no device motion")
            return
        }
        let computed = motion.heading
        #expect(computed >= 0)

        // Equal, with the same hash, to the value given the same heading.
        let given = DeviceMotion(
            timestamp: motion.timestamp, attitude: motion.attitude, referenceFrame: motion.referenceFrame,
            rotationRate: motion.rotationRate, gravity: motion.gravity, userAcceleration: motion.userAcceleration,
            magneticField: motion.magneticField, heading: computed)
        #expect(given == motion)
        #expect(given.hashValue == motion.hashValue)
        var otherHeading = given
        otherHeading.heading = (computed + 1).truncatingRemainder(dividingBy: 360)
        #expect(otherHeading != motion)

        // Set: kept, also when the attitude changes afterwards.
        motion.heading = 123.5
        motion.attitude = Attitude(unitQuaternion: .identity)
        #expect(motion.heading == 123.5)
    }
}
