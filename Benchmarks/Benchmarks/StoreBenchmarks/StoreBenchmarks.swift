import Benchmark
import Foundation
import MotionCore
import MotionStore
import MotionTesting

/// History store costs (issue 25; Docs/History.md, "Cost"). Input: a seeded simulation at 50 Hz with the
/// accelerometer only (what `motiond --history` records by default), 180 000 samples (an hour).
let sampleCount = 180_000

let samples: [MotionSample] = {
    let options = SimulationOptions(rate: 50, sensors: .accelerometer, seed: 1)
    var scenario = Scenario.random(seed: 3, segmentCount: 60)
    while scenario.duration * 50 < Double(sampleCount) { scenario.append(contentsOf: scenario.segments.map(\.segment)) }
    return try! Simulation(scenario: scenario, options: options).prefix(sampleCount).map {
        MotionSample(timestamp: $0.timestamp, acceleration: $0.acceleration)
    }
}()

/// The same hour as device motion (what `motiond --history-device-motion` adds): an attitude turning through the
/// simulation's accelerations, every value finite, no calibrated field.
let motion: [DeviceMotion] = samples.enumerated().map { index, sample in
    let attitude = Attitude(roll: 0.3 * sin(Double(index) / 500), pitch: 0.2 * cos(Double(index) / 700), yaw: Double(index) / 900)
    return DeviceMotion(
        timestamp: sample.timestamp, attitude: attitude, referenceFrame: .xArbitraryZVertical,
        rotationRate: RotationRate(x: 0.01, y: -0.02, z: 0.05), gravity: attitude.gravity,
        userAcceleration: Acceleration(sample.acceleration!.vector - attitude.gravity.vector))
}

/// A fresh directory for a store (on the temporary directory's file system, as given by TMPDIR).
func freshDirectory(_ name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("swift-motion-bench-\(name)").path
    try? FileManager.default.removeItem(atPath: path)
    return path
}

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident], maxDuration: .seconds(10),
        maxIterations: 10)

    // Appending as motiond does: 25 samples (half a second at 50 Hz) at a time, each batch written (`flush`), the
    // file synced every 10 s of wall time; 180 000 samples per iteration, so time / 180 000 is the cost per sample.
    Benchmark("Append an hour of 50 Hz accelerometer, written every 25 samples", configuration: configuration) { benchmark in
        let directory = freshDirectory("append")
        let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
        benchmark.startMeasurement()
        for start in stride(from: 0, to: samples.count, by: 25) {
            store.append(contentsOf: samples[start..<min(start + 25, samples.count)])
            store.flush()
        }
        try store.close()
        benchmark.stopMeasurement()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // The same for device motion: 180 000 records, 25 at a time, each batch written.
    Benchmark("Append an hour of 50 Hz device motion, written every 25 records", configuration: configuration) { benchmark in
        let directory = freshDirectory("append-motion")
        let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
        benchmark.startMeasurement()
        for start in stride(from: 0, to: motion.count, by: 25) {
            for record in motion[start..<min(start + 25, motion.count)] { store.append(record) }
            store.flush()
        }
        try store.close()
        benchmark.stopMeasurement()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // Reading the same hour back (every sample, oldest first).
    let queried = freshDirectory("query")
    do {
        let store = try MotionStore(directory: queried, clock: .offset(1_700_000_000))
        for start in stride(from: 0, to: samples.count, by: 25) {
            store.append(contentsOf: samples[start..<min(start + 25, samples.count)])
            store.flush()
        }
        try store.close()
    } catch {
        fatalError("cannot write the store to query: \(error)")
    }
    Benchmark("Query an hour of 50 Hz accelerometer (180 000 samples)", configuration: configuration) { benchmark in
        var reader = try StoreReader(directory: queried)
        var count = 0
        while let batch = try reader.next() { count += batch.samples.count }
        precondition(count == sampleCount && reader.damage.isEmpty)
    }
}
