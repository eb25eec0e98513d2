import Benchmark
import Motion
import MotionCore
import MotionTesting

/// Per-sample cost of `MotionProcessor`, the processing core every `motionctl` command and `MotionManager` run.
/// Each benchmark processes `benchmark.scaledIterations` samples (scaling factor mega): throughput reads in
/// millions of samples per second; `mallocCountTotal` must stay 0.
///
/// Input: 4096 samples (41 s at 100 Hz, accelerometer, gyroscope and magnetometer with the simulator's noise) of
/// the random scenario, seed 3, replayed in a loop with timestamps that keep increasing by 0.01 s.
func simulatedSamples() -> [MotionSample] {
    let simulation = try! Simulation(
        scenario: .random(seed: 3), options: SimulationOptions(rate: 100, sensors: .all, seed: 3))
    return Array(simulation.prefix(4096))
}

func processorBenchmark(_ name: String, configuration: MotionConfiguration, request: MotionProcessor.Request) {
    let samples = simulatedSamples()
    Benchmark(
        name,
        configuration: .init(
            metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
            scalingFactor: .mega, maxDuration: .seconds(3), maxIterations: 20)
    ) { benchmark in
        var processor = MotionProcessor(configuration: configuration, request: request)
        var events = 0
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            var sample = samples[i & 4095]
            sample.timestamp = Double(i) * 0.01
            processor.process(sample)
            if processor.outputs.sample != nil || processor.outputs.shake != nil { events &+= 1 }
        }
        benchmark.stopMeasurement()
        blackHole(events)
        blackHole(processor.outputs.deviceMotion(in: .xMagneticNorthZVertical))
    }
}

let benchmarks: @Sendable () -> Void = {
    processorBenchmark(
        "MotionProcessor readings (low-pass, 0.01 s interval)",
        configuration: MotionConfiguration(sensorFilter: .lowPass(.factor(0.1))),
        request: .init(sensors: .all, updateInterval: 0.01))
    processorBenchmark(
        "MotionProcessor readings, magnetic-north device motion, shake and orientation",
        configuration: MotionConfiguration(),
        request: .init(
            sensors: .all, referenceFrames: [.xMagneticNorthZVertical], shake: true, orientation: true))
}
