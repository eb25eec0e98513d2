import Benchmark
import MotionAlgorithms
import MotionCore

/// Per-sample cost of the shake detector, the orientation classifier, the step detector and the activity classifier. Each benchmark processes
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

/// Deterministic walking at 100 Hz: 4096 samples (40.96 s) of a 1.9 steps/s gait (0.2 g bounce with a heel-strike
/// harmonic, sway and surge) in a tilted carrying attitude, so the step detector counts steps throughout.
func makeGaitInput<T: MotionScalar>(_: T.Type) -> [SIMD3<T>] {
    (0..<4096).map { i in
        let t = T(i) / 100
        let phase = 2 * T.pi * T(1.9) * t
        let bounce = T(0.2) * (T.cos(phase) + T(0.25) * T.cos(2 * phase + T(0.3)))
        let sway = T(0.06) * T.sin(phase / 2)
        let surge = T(0.1) * T.cos(phase + T(0.8))
        // Gravity along −y (portrait) tilted 30° back; the bounce along gravity, surge and sway across it.
        let down = SIMD3(0, -T.cos(T.pi / 6), -T.sin(T.pi / 6))
        let forward = SIMD3(0, -T.sin(T.pi / 6), T.cos(T.pi / 6))
        return down * (1 - bounce) + forward * surge + SIMD3(sway, 0, 0)
    }
}

func eventBenchmark<T: MotionScalar, S, Output>(
    _ name: String, _: T.Type, input: [SIMD3<T>]? = nil, make: @escaping () -> S,
    update: @escaping (inout S, SIMD3<T>, Double) -> Output?
) {
    let input = input ?? makeEventInput(T.self)
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
    // The pedometer and the activity classifier on a walk (issue 26: ≤ 20 ns and 0 allocations per sample).
    eventBenchmark(
        "StepDetector Double", Double.self, input: makeGaitInput(Double.self), make: { StepDetector<Double>() },
        update: { $0.update($1, at: $2) > 0 ? true : nil })
    eventBenchmark(
        "StepDetector Float", Float.self, input: makeGaitInput(Float.self), make: { StepDetector<Float>() },
        update: { $0.update($1, at: $2) > 0 ? true : nil })
    eventBenchmark(
        "ActivityClassifier Double", Double.self, input: makeGaitInput(Double.self),
        make: { ActivityClassifier<Double>() }, update: { $0.update($1, at: $2) })
}
