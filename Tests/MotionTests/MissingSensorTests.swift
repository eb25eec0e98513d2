import Foundation
import MotionCore
import Testing

@testable import Motion

/// A subscription that needs a sensor the source lacks ends at once with `unsupported`, naming the sensor; the
/// sensors the source has keep working.
@Suite("Subscriptions to a sensor the source lacks")
struct MissingSensorTests {
    /// 1 s of accelerometer-only samples at 100 Hz.
    let accelerometerOnly = (0..<100).map { index in
        MotionSample(timestamp: Double(index) / 100, acceleration: Acceleration(x: 0, y: -1, z: 0))
    }

    @Test("Device motion, gyroscope and magnetometer updates on an accelerometer-only source end with unsupported, naming what is missing")
    func endsAtOnce() async throws {
        let manager = try MotionManager(source: .samples(accelerometerOnly, pacing: .asFastAsConsumed))
        #expect(manager.availableSensors == .accelerometer)
        let cases: [(String, () async throws(MotionError) -> Void)] = [
            ("gyro", { () throws(MotionError) in for try await _ in manager.gyroUpdates() {} }),
            ("mag", { () throws(MotionError) in for try await _ in manager.magnetometerUpdates() {} }),
            ("gyro", { () throws(MotionError) in
                for try await _ in manager.deviceMotionUpdates(using: .xArbitraryZVertical) {}
            }),
            ("gyro,mag", { () throws(MotionError) in
                for try await _ in manager.deviceMotionUpdates(using: .xMagneticNorthZVertical) {}
            }),
        ]
        for (missing, iterate) in cases {
            do {
                try await iterate()
                Issue.record("updates needing \(missing) ended without an error")
            } catch {
                #expect(error.code == .unsupported)
                #expect(error.message.contains("has no \(missing) (it has accel)"), "\(error.message)")
            }
        }
        // What the source has is delivered as before, after the refusals.
        var count = 0
        for try await _ in manager.accelerometerUpdates(interval: 0) { count += 1 }
        #expect(count == accelerometerOnly.count)
    }

    @Test("A handler gets the error once, with no update")
    func handlerGetsTheError() async throws {
        let manager = try MotionManager(source: .samples(accelerometerOnly))
        let errors = Recorder<MotionError>()
        let updates = Recorder<Double>()
        manager.startGyroUpdates(to: OperationQueue()) { data, error in
            if let data { updates.append(data.timestamp) }
            if let error { errors.append(error) }
        }
        #expect(await eventually { errors.count == 1 })
        #expect(errors.all.first?.code == .unsupported && updates.count == 0)
    }

    @Test("A source that does not know its sensors yet (a caller's stream) lets the subscription wait for them")
    func unknownSensorsWait() async throws {
        let (stream, continuation) = AsyncStream<MotionSample>.makeStream()
        let manager = try MotionManager(source: .stream(stream))
        #expect(manager.availableSensors.isEmpty)
        let gyro = Task { () throws(MotionError) -> Int in
            var count = 0
            for try await _ in manager.gyroUpdates(interval: 0) { count += 1 }
            return count
        }
        continuation.yield(MotionSample(timestamp: 1, rotationRate: RotationRate(x: 0, y: 0, z: 1)))
        continuation.yield(MotionSample(timestamp: 2, rotationRate: RotationRate(x: 0, y: 0, z: 1)))
        continuation.finish()
        #expect(try await gyro.value == 2)
    }
}
