import Foundation
import Motion
import MotionCore
import MotionStore
import MotionTrace
import TestFiles
import Testing

/// `MotionManager.record(into:)` and `MotionHistory`: Core Motion's sensor recorder, recorded and queried.
@Suite struct MotionHistoryTests {
    static func directory() -> String { ScratchFolder.path("history") }

    @Test func recordedAccelerometerComesBackAtItsIntervalInUnixTime() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let samples = indexedSamples(count: 1_000)  // 10 s at 100 Hz, from t = 0
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
        let count = try await manager.record(into: store)  // the accelerometer, every 0.02 s
        try store.close()
        #expect(count == 500)

        var read: [AccelerometerData] = []
        var batches = 0
        for try await batch in MotionHistory(directory: directory).accelerometerData(from: 1_700_000_002, to: 1_700_000_004) {
            #expect(!batch.isEmpty)
            read += batch
            batches += 1
        }
        // Unix time 1 700 000 002 to 1 700 000 004: samples 200, 202, …, 400 of the trace.
        #expect(read.map { sampleIndex($0.acceleration) } == Array(stride(from: 200, through: 400, by: 2)))
        #expect(read.map(\.timestamp) == stride(from: 200, through: 400, by: 2).map { 1_700_000_000 + Double($0) / 100 })
        #expect(batches >= 1)

        // Every sensor recorded: the accelerometer only (the default), so samples carry nothing else.
        var all: [MotionSample] = []
        for try await batch in MotionHistory(directory: directory).samples(from: -.infinity, to: .infinity) { all += batch }
        #expect(all.count == 500 && all.allSatisfy { $0.rotationRate == nil && $0.acceleration != nil })
    }

    @Test func deviceMotionAndEventsComeBackInUnixTime() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
        for i in 0..<500 {  // 10 s at 50 Hz, turning about z
            let attitude = Attitude(roll: 0, pitch: 0, yaw: 0.01 * Double(i))
            store.append(
                DeviceMotion(
                    timestamp: Double(i) / 50, attitude: attitude, referenceFrame: .xArbitraryZVertical,
                    rotationRate: RotationRate(x: 0, y: 0, z: 0.5), gravity: attitude.gravity,
                    userAcceleration: Acceleration(x: 0, y: 0, z: 0)))
        }
        for second in 0..<10 {
            store.appendEvent(type: "shake", timestamp: Double(second) + 0.5, fields: [("phase", "ended"), ("strokes", 4)])
        }
        try store.close()
        var motion: [DeviceMotion] = []
        for try await batch in MotionHistory(directory: directory).deviceMotion(from: 1_700_000_002, to: 1_700_000_004) {
            motion += batch
        }
        #expect(motion.map(\.timestamp) == (100...200).map { 1_700_000_000 + Double($0) / 50 })
        #expect(motion.allSatisfy { abs($0.attitude.yaw - 0.01 * ($0.timestamp - 1_700_000_000) * 50) < 1e-5 })
        var events: [StoredEvent] = []
        for try await batch in MotionHistory(directory: directory).events(from: 1_700_000_002, to: 1_700_000_004) {
            events += batch
        }
        #expect(events.map(\.timestamp) == [1_700_000_002.5, 1_700_000_003.5])
        #expect(events.allSatisfy { $0.type == "shake" && $0.fields.count == 2 })
    }

    @Test func damageIsHeardOfAndAMissingStoreThrows() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try MotionStore(directory: directory, clock: .offset(0), configuration: .init(flushInterval: 60))
        let samples = indexedSamples(count: 300)
        for start in stride(from: 0, to: 300, by: 100) {
            store.append(contentsOf: samples[start..<start + 100])
            try store.synchronize()  // three frames
        }
        try store.close()
        let segment = directory + "/segment-000000000001.msr"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[bytes.count - 100] ^= 0x01  // in the last frame
        try bytes.write(to: URL(fileURLWithPath: segment))
        let heard = Heard()
        var read: [MotionSample] = []
        for try await batch in MotionHistory(directory: directory).samples(
            from: -.infinity, to: .infinity, damage: { heard.add($0) })
        {
            read += batch
        }
        #expect(read == Array(samples.prefix(200)))
        #expect(heard.all.count == 1 && heard.all.first?.reason == "a checksum mismatch", "\(heard.all)")

        await #expect {
            for try await _ in MotionHistory(directory: directory + "-missing").samples(from: 0, to: 1) {}
        } throws: { error in
            (error as? MotionError)?.code == .noInput
        }
    }
}

/// Damage reports collected from the query's thread.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var damage: [StoreDamage] = []
    func add(_ report: StoreDamage) { lock.withLock { damage.append(report) } }
    var all: [StoreDamage] { lock.withLock { damage } }
}
