import Benchmark
import Foundation
import MotionCore
import MotionTesting
import MotionTrace

/// Trace reading and writing throughput. Each iteration reads or writes `rowCount` rows of 10 columns
/// (t, accelerometer, gyroscope, magnetometer; 9 significant digits, as the broad-dev traces), so rows per second
/// = rowCount / (wall-clock time per iteration).
let rowCount = 200_000

/// The rows as samples and as CSV text, made once from a seeded simulation.
let samples: [MotionSample] = {
    let options = SimulationOptions(rate: 1000, sensors: .all, seed: 1)
    var scenario = Scenario.random(seed: 3, segmentCount: 60)
    while scenario.duration * 1000 < Double(rowCount) { scenario.append(contentsOf: scenario.segments.map(\.segment)) }
    func round9(_ x: Double) -> Double { Double(String(format: "%.9g", x))! }
    func round9<V: MotionVector>(_ v: V?) -> V? { v.map { V(x: round9($0.x), y: round9($0.y), z: round9($0.z)) } }
    return try! Simulation(scenario: scenario, options: options).prefix(rowCount).map {
        MotionSample(
            timestamp: $0.timestamp, acceleration: round9($0.acceleration), rotationRate: round9($0.rotationRate),
            magneticField: round9($0.magneticField))
    }
}()

let csv: [UInt8] = Array(try! TraceWriter.render(samples, format: .csv, sensors: .all).utf8)

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident], maxDuration: .seconds(5),
        maxIterations: 30)

    Benchmark("Read 200k rows (10 columns) from memory", configuration: configuration) { benchmark in
        let reader = try TraceReader(bytes: csv, name: "memory")
        var count = 0
        while let sample = try reader.next() { count += sample.acceleration == nil ? 0 : 1 }
        precondition(count == rowCount)
    }

    let path = FileManager.default.temporaryDirectory.appendingPathComponent("swift-motion-bench.csv").path
    FileManager.default.createFile(atPath: path, contents: Data(csv))
    Benchmark("Read 200k rows (10 columns) from a file", configuration: configuration) { benchmark in
        let reader = try TraceReader(path: path)
        var count = 0
        while try reader.next() != nil { count += 1 }
        precondition(count == rowCount)
    }

    let devNull = open("/dev/null", O_WRONLY)
    for format in TraceFormat.allCases {
        Benchmark("Write 200k rows (10 columns) as \(format) to /dev/null", configuration: configuration) { benchmark in
            let writer = try TraceWriter(fileDescriptor: devNull, name: "/dev/null", format: format, sensors: .all)
            for sample in samples { try writer.write(sample) }
            try writer.flush()
        }
    }
}
