import Benchmark
import MotionAlgorithms
import MotionCore

/// Per-sample cost of the shake detector, the orientation classifier, the step detector and the activity
/// classifier, and of the loop around them ("Loop floor"). Each benchmark processes `benchmark.scaledIterations`
/// samples (scaling factor mega), so throughput reads in millions of samples per second; `mallocCountTotal` must
/// stay 0.

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

/// A state machine that takes one sample at a time: the event algorithms, adapted to one signature so that the
/// benchmark loop is specialized for each and calls `update` directly (inlined), not through a closure, which
/// added about 3 ns a sample to every figure until 3 December (the loop's floor went from 5 to 2 ns).
protocol PerSampleMachine {
    associatedtype Scalar: MotionScalar
    /// Takes a sample; `true` when it produced an event (a shake phase, an orientation change, steps, an activity).
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool
}

extension ShakeDetector: PerSampleMachine {
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool {
        update(acceleration, at: timestamp) != nil
    }
}

extension OrientationClassifier: PerSampleMachine {
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool {
        update(acceleration, at: timestamp) != nil
    }
}

extension StepDetector: PerSampleMachine {
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool {
        update(acceleration, at: timestamp) > 0
    }
}

extension ActivityClassifier: PerSampleMachine {
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool {
        update(acceleration, at: timestamp) != nil
    }
}

/// The loop's own cost: the input's load, the timestamp and the event count around one vector addition.
struct LoopFloor<Scalar: MotionScalar>: PerSampleMachine {
    var sum = SIMD3<Scalar>.zero
    mutating func take(_ acceleration: SIMD3<Scalar>, at timestamp: Double) -> Bool {
        sum += acceleration
        return sum.x > 1e30
    }
}

func eventBenchmark<Machine: PerSampleMachine>(
    _ name: String, input: [SIMD3<Machine.Scalar>]? = nil, make: @escaping () -> Machine
) {
    let input = input ?? makeEventInput(Machine.Scalar.self)
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
            if machine.take(input[i & 4095], at: Double(i) * 0.01) { events += 1 }
        }
        benchmark.stopMeasurement()
        blackHole(events)
        blackHole(machine)
    }
}

let benchmarks: @Sendable () -> Void = {
    eventBenchmark("Loop floor Double", input: makeGaitInput(Double.self)) { LoopFloor<Double>() }
    eventBenchmark("ShakeDetector Double") { ShakeDetector<Double>() }
    eventBenchmark("ShakeDetector Float") { ShakeDetector<Float>() }
    eventBenchmark("OrientationClassifier Double") { OrientationClassifier<Double>() }
    eventBenchmark("OrientationClassifier Float") { OrientationClassifier<Float>() }
    // The pedometer and the activity classifier on a walk (issue 26: ≤ 20 ns and 0 allocations per sample).
    eventBenchmark("StepDetector Double", input: makeGaitInput(Double.self)) { StepDetector<Double>() }
    eventBenchmark("StepDetector Float", input: makeGaitInput(Float.self)) { StepDetector<Float>() }
    eventBenchmark("ActivityClassifier Double", input: makeGaitInput(Double.self)) { ActivityClassifier<Double>() }
}
