import MotionCore
import MotionIIO
import Testing

@Suite struct SampleMergerTests {
    func accel(_ t: Double, _ y: Double = -1) -> MotionSample {
        MotionSample(timestamp: t, acceleration: Acceleration(x: 0, y: y, z: 0))
    }

    func gyro(_ t: Double, _ z: Double = 0.1) -> MotionSample {
        MotionSample(timestamp: t, rotationRate: RotationRate(x: 0, y: 0, z: z))
    }

    @Test func mergesReadingsAtTheSameInstant() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0.001)
        merger.append([accel(1.00), accel(1.01), accel(1.02)], from: 0)
        merger.append([gyro(1.00), gyro(1.0105), gyro(1.02)], from: 1)
        var out: [MotionSample] = []
        merger.drain(into: &out)
        merger.finish(into: &out)
        #expect(out.map(\.timestamp) == [1.00, 1.01, 1.02])
        #expect(out.allSatisfy { $0.sensors == [.accelerometer, .gyroscope] })
    }

    @Test func keepsReadingsApartWhenTheyAreNotSimultaneous() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0.001)
        merger.append([accel(1.000), accel(1.010)], from: 0)
        merger.append([gyro(1.005), gyro(1.015)], from: 1)
        var out: [MotionSample] = []
        merger.drain(into: &out)
        merger.finish(into: &out)
        #expect(out.map(\.timestamp) == [1.000, 1.005, 1.010, 1.015])
        #expect(out.map(\.sensors) == [[.accelerometer], [.gyroscope], [.accelerometer], [.gyroscope]])
    }

    @Test func holdsBackUntilEverySourceHasCaughtUp() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0.001, maximumDelay: 10)
        merger.append([accel(1.00), accel(1.01), accel(1.02)], from: 0)
        var out: [MotionSample] = []
        merger.drain(into: &out)
        #expect(out.isEmpty)  // the gyroscope has said nothing yet
        merger.append([gyro(1.005)], from: 1)
        merger.drain(into: &out)
        #expect(out.map(\.timestamp) == [1.00])  // 1.005 might still merge with a gyroscope reading
        merger.append([gyro(1.02)], from: 1)
        merger.drain(into: &out)
        #expect(out.map(\.timestamp) == [1.00, 1.005, 1.01])
        merger.finish(into: &out)
        #expect(out.map(\.timestamp) == [1.00, 1.005, 1.01, 1.02])
        #expect(out.last?.sensors == [.accelerometer, .gyroscope])
    }

    @Test func aStalledSourceDoesNotStopTheOthers() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0, maximumDelay: 0.505)
        merger.append([gyro(1.0)], from: 1)
        merger.append((0..<100).map { accel(1.0 + Double($0) * 0.01) }, from: 0)
        var out: [MotionSample] = []
        merger.drain(into: &out)
        // Released up to newest − 0.505 s = 1.485: samples 1.00 (merged with the gyroscope) … 1.48.
        #expect(out.count == 49)
        #expect(out.first?.sensors == [.accelerometer, .gyroscope])
    }

    @Test func neverGoesBackInTime() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0, maximumDelay: 0.1)
        merger.append((0..<50).map { accel(2.0 + Double($0) * 0.01) }, from: 0)
        var out: [MotionSample] = []
        merger.drain(into: &out)
        merger.append([gyro(2.0)], from: 1)  // a straggler from before what was released
        merger.drain(into: &out)
        merger.finish(into: &out)
        #expect(out.contains { $0.rotationRate != nil })
        #expect(out.compactMap(\.acceleration).count == 50)
        #expect(zip(out, out.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }

    @Test func neverMergesTwoReadingsOfTheSameSensor() {
        var merger = SampleMerger(sourceCount: 2, tolerance: 0.01)
        merger.append([accel(1.0, -1)], from: 0)
        merger.append([accel(1.0, -2)], from: 1)
        var out: [MotionSample] = []
        merger.finish(into: &out)
        #expect(out.map { $0.acceleration?.y } == [-1, -2])
    }
}
