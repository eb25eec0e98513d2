import Benchmark
import MotionAlgorithms
import MotionCore

/// Per-sample cost of the filters and the stream pipeline. Each benchmark processes `benchmark.scaledIterations`
/// samples (scaling factor mega), so throughput reads in millions of samples per second and time per sample;
/// `mallocCountTotal` must stay 0.

/// Deterministic input: a slow rotation of gravity plus a small oscillation, precomputed outside the timing.
func makeInput<T: MotionScalar>(_: T.Type) -> [SIMD3<T>] {
    (0..<4096).map { i in
        let phase = T(i) * T(0.01)
        return SIMD3(T.sin(phase), T.cos(phase) * -1, T(0.05) * T.sin(phase * 13))
    }
}

func filterBenchmark<T: MotionScalar, F>(
    _ name: String, _: T.Type, make: @escaping () -> F, update: @escaping (inout F, SIMD3<T>, Double) -> SIMD3<T>
) {
    let input = makeInput(T.self)
    Benchmark(
        name,
        configuration: .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
            scalingFactor: .mega, maxDuration: .seconds(3), maxIterations: 20)
    ) { benchmark in
        var filter = make()
        var sink = SIMD3<T>.zero
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            sink += update(&filter, input[i & 4095], Double(i) * 0.01)
        }
        benchmark.stopMeasurement()
        blackHole(sink)
    }
}

let benchmarks: @Sendable () -> Void = {
    filterBenchmark("LowPass factor Double", Double.self, make: { LowPassFilter<Double>(smoothing: .factor(0.1)) },
                    update: { $0.update($1, at: $2) })
    filterBenchmark("LowPass factor Float", Float.self, make: { LowPassFilter<Float>(smoothing: .factor(0.1)) },
                    update: { $0.update($1, at: $2) })
    filterBenchmark("LowPass cutoff Double", Double.self,
                    make: { LowPassFilter<Double>(smoothing: .cutoff(hertz: 5)) }, update: { $0.update($1, at: $2) })
    filterBenchmark("LowPass cutoff Float", Float.self,
                    make: { LowPassFilter<Float>(smoothing: .cutoff(hertz: 5)) }, update: { $0.update($1, at: $2) })
    filterBenchmark("HighPass factor Double", Double.self, make: { HighPassFilter<Double>(smoothing: .factor(0.1)) },
                    update: { $0.update($1, at: $2) })
    filterBenchmark("HighPass cutoff Float", Float.self,
                    make: { HighPassFilter<Float>(smoothing: .cutoff(hertz: 5)) }, update: { $0.update($1, at: $2) })

    let samples = makeInput(Double.self).enumerated().map { i, v in
        MotionSample(timestamp: Double(i) * 0.0035, acceleration: Acceleration(v), rotationRate: RotationRate(v * 0.1))
    }
    Benchmark(
        "SamplePipeline high-pass + 0.01 s interval",
        configuration: .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
            scalingFactor: .mega, maxDuration: .seconds(3), maxIterations: 20)
    ) { benchmark in
        var pipeline = SamplePipeline(updateInterval: 0.01, filter: .highPass(.factor(0.1)))
        var delivered = 0
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            var sample = samples[i & 4095]
            sample.timestamp = Double(i) * 0.0035
            if pipeline.process(sample) != nil { delivered += 1 }
        }
        benchmark.stopMeasurement()
        blackHole(delivered)
    }
}
