import MotionAlgorithms
import MotionCore
import Testing
import TestThreads

@Suite(.computeBound) struct SamplePipelineTests {
    static func sample(_ t: Double, accel: Double? = nil, gyro: Double? = nil, mag: Double? = nil) -> MotionSample {
        MotionSample(
            timestamp: t,
            acceleration: accel.map { Acceleration(x: $0, y: 0, z: -1) },
            rotationRate: gyro.map { RotationRate(x: 0, y: $0, z: 0) },
            magneticField: mag.map { MagneticField(x: 20, y: 0, z: $0) })
    }

    @Test func keepsOnlyTheChosenSensors() {
        var pipeline = SamplePipeline(sensors: [.gyroscope])
        #expect(pipeline.process(Self.sample(0, accel: 1, gyro: 2, mag: 3)) == Self.sample(0, gyro: 2))
        #expect(pipeline.process(Self.sample(0.01, accel: 1)) == nil)
    }

    @Test func thinsEachSensorOnItsOwnGrid() {
        // Accelerometer at 100 Hz, magnetometer at 20 Hz, both thinned to 0.05 s: 20 of each per second.
        var pipeline = SamplePipeline(updateInterval: 0.05)
        var accelCount = 0, magCount = 0
        for i in 0..<100 {
            let t = Double(i) * 0.01
            let delivered = pipeline.process(Self.sample(t, accel: 0.5, mag: i % 5 == 0 ? -43 : nil))
            if delivered?.acceleration != nil { accelCount += 1 }
            if delivered?.magneticField != nil { magCount += 1 }
        }
        #expect(accelCount == 20)
        #expect(magCount == 20)
    }

    @Test func filtersEveryInputSampleBeforeThinning() {
        // A low-pass at α = 0.5 fed 1, 1, 1, 1 from zero reads 1 − 0.5ⁿ; thinned to every second sample, the
        // delivered values must still be those of the full-rate filter (0.5, 0.875).
        var pipeline = SamplePipeline(sensors: [.accelerometer], updateInterval: 0.02, filter: .lowPass(.factor(0.5)))
        let delivered = (0..<4).compactMap { pipeline.process(Self.sample(Double($0) * 0.01, accel: 1)) }
        #expect(delivered.map(\.acceleration!.x) == [0.5, 0.875])
        #expect(delivered.map(\.timestamp) == [0, 0.02])
    }

    @Test func sensorsHaveSeparateFilterState() {
        var pipeline = SamplePipeline(filter: .highPass(.factor(0.1), start: .firstSample))
        _ = pipeline.process(Self.sample(0, accel: 1, gyro: 5))
        let next = pipeline.process(Self.sample(0.01, accel: 1, gyro: 5))
        #expect(next?.acceleration == Acceleration(x: 0, y: 0, z: 0))
        #expect(next?.rotationRate == RotationRate(x: 0, y: 0, z: 0))
    }

    @Test func describesItsFilter() {
        #expect(VectorFilter.lowPass(.factor(0.1)).description == "low-pass factor 0.1 from zero")
        #expect(VectorFilter.highPass(.cutoff(hertz: 5), start: .firstSample).description
            == "high-pass cutoff 5.0 Hz from first-sample")
    }
}
