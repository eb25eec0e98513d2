import MotionCore
import Testing
import TestThreads

@Suite(.computeBound) struct SampleAndErrorTests {
    @Test func sensorSetParsesShortNames() {
        #expect(SensorSet(shortNames: "accel,gyro") == [.accelerometer, .gyroscope])
        #expect(SensorSet(shortNames: "mag, accel") == [.accelerometer, .magnetometer])
        #expect(SensorSet(shortNames: "accel,compass") == nil)
        #expect(SensorSet(shortNames: "") == nil)
        #expect(SensorSet.all.description == "accel,gyro,mag")
    }

    @Test func sampleReportsAndRestrictsItsSensors() {
        let sample = MotionSample(
            timestamp: 1.5,
            acceleration: Acceleration(x: 0, y: -1, z: 0),
            magneticField: MagneticField(x: 20, y: 0, z: -43)
        )
        #expect(sample.sensors == [.accelerometer, .magnetometer])
        let accelOnly = sample.restricted(to: [.accelerometer, .gyroscope])
        #expect(accelOnly.sensors == [.accelerometer])
        #expect(accelOnly.timestamp == 1.5)
    }

    @Test func specificForceConvertsToCoreMotionSign() {
        // An accelerometer at rest, face up, measures +9.80665 m/s² along +z; Core Motion reports −1 g.
        let a = Acceleration(specificForceInMetersPerSecondSquared: SIMD3(0, 0, 9.80665))
        #expect(a == Acceleration(x: -0.0, y: -0.0, z: -1))
        #expect(a.specificForceInMetersPerSecondSquared == SIMD3(0, 0, 9.80665))
        #expect(a.magnitude == 1)
    }

    @Test func errorDescriptionNamesTheLocation() {
        let error = MotionError(
            .malformedTrace, "expected a finite number, found \"abc\"",
            at: .init(file: "walk.csv", line: 14, column: "ay"))
        #expect(error.description == "walk.csv:14: column 'ay': expected a finite number, found \"abc\"")
        #expect(error.code == .malformedTrace)
        let device = MotionError(
            .permissionDenied, "add yourself to the 'iio' group",
            at: .init(attribute: "in_accel_scale"), underlying: SystemErrno(rawValue: 13, text: "Permission denied"))
        #expect(device.description == "attribute 'in_accel_scale': add yourself to the 'iio' group (Permission denied (errno 13))")
    }
}
