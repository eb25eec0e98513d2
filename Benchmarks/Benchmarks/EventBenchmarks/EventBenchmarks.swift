import Benchmark
import MotionAlgorithms
import MotionCore

/// Per-sample cost of the shake detector and the orientation classifier. Each benchmark processes
/// `benchmark.scaledIterations` samples (scaling factor mega), so throughput reads in millions of samples per
/// second; `mallocCountTotal` must stay 0.

/// Deterministic input at 100 Hz: 4096 samples of gravity turning slowly with shakes of 1.5 g at 4 Hz in bursts,
/// so both state machines go through all their phases.
func makeEventInput<T: MotionScalar>(_: T.Type) -> [SIMD3<T>] {
    (0..<4096).map { i in
        let t = T(i) / 100
        let gravity = SIMD3(T.sin(t / 4), -T.cos(t / 4), 0)
        let burst: T = (i / 200) % 2 == 0 ? T(1.5) * T.cos(2 * T.pi * 4 * t) : 0
        return gravity + SIMD3(burst, 0, 0)
    }
}

func eventBenchmark<T: MotionScalar, S, Output>(
    _ name: String, _: T.Type, make: @escaping () -> S, update: @escaping (inout S, SIMD3<T>, Double) -> Output?
) {
    let input = makeEventInput(T.self)
    Benchmark(
        name,
        configuration: .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
            scalingFactor: .mega, maxDuration: .seconds(3), maxIterations: 20)
    ) { benchmark in
        var machine = make()
        var events = 0
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            if update(&machine, input[i & 4095], Double(i) * 0.01) != nil { events += 1 }
        }
        benchmark.stopMeasurement()
        blackHole(events)
    }
}

let benchmarks: @Sendable () -> Void = {
    eventBenchmark(
        "ShakeDetector Double", Double.self, make: { ShakeDetector<Double>() }, update: { $0.update($1, at: $2) })
    eventBenchmark(
        "ShakeDetector Float", Float.self, make: { ShakeDetector<Float>() }, update: { $0.update($1, at: $2) })
    eventBenchmark(
        "OrientationClassifier Double", Double.self, make: { OrientationClassifier<Double>() },
        update: { $0.update($1, at: $2) })
    eventBenchmark(
        "OrientationClassifier Float", Float.self, make: { OrientationClassifier<Float>() },
        update: { $0.update($1, at: $2) })
}
