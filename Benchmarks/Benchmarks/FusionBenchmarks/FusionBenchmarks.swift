import Benchmark
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif
import MotionAlgorithms
import MotionCore
import MotionTesting
import MotionTrace

/// Per-sample cost of attitude fusion. Each benchmark updates the estimator `benchmark.scaledIterations` times
/// (scaling factor mega), so throughput reads in millions of samples per second; `mallocCountTotal` must be 0.
/// Input: 4096 samples of a simulated random scenario at 100 Hz with noise and gyroscope bias, replayed with
/// increasing timestamps.
/// Every benchmark here: millions of updates per run (throughput in M/s), wall clock, mallocs and instructions.
var perSample: Benchmark.Configuration {
    .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal, .instructions],
        scalingFactor: .mega, maxDuration: .seconds(3), maxIterations: 10)
}

struct Input<Scalar: MotionScalar> {
    var gyroscope: [SIMD3<Scalar>] = []
    var accelerometer: [SIMD3<Scalar>] = []
    var magnetometer: [SIMD3<Scalar>] = []

    init() {
        let options = SimulationOptions(rate: 100, sensors: .all, seed: 1, gyroscopeBias: SIMD3(0.004, -0.002, 0.003))
        let simulation = try! Simulation(scenario: .random(seed: 7), options: options)
        for sample in simulation.prefix(4096) {
            gyroscope.append(SIMD3<Scalar>(sample.rotationRate!.vector))
            accelerometer.append(SIMD3<Scalar>(sample.acceleration!.vector))
            magnetometer.append(SIMD3<Scalar>(sample.magneticField!.vector))
        }
    }
}

func fusionBenchmark<Scalar: MotionScalar>(_ name: String, _: Scalar.Type, magnetometer: Bool) {
    let input = Input<Scalar>()
    Benchmark(
        name,
        configuration: perSample
    ) { benchmark in
        var estimator = AttitudeEstimator<Scalar>()
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            let k = i & 4095
            estimator.update(
                rotationRate: input.gyroscope[k], acceleration: input.accelerometer[k],
                magneticField: magnetometer ? input.magnetometer[k] : nil, at: Double(i) * 0.01)
        }
        benchmark.stopMeasurement()
        blackHole(magnetometer ? estimator.quaternion9D : estimator.quaternion6D)
    }
}

/// 4096 samples (41 s at 100 Hz, all sensors, noise, gyroscope bias (0.004, −0.002, 0.003) rad/s) of
/// `Scenario.tumbling()`: turning through 42 orientations over all directions, one a second, with a hard-iron offset
/// of (35, −22, 48) µT: input on which the magnetometer calibration fits (`high` at 9 s) and keeps checking its fit.
/// Replayed with increasing timestamps, so the fits go on with the same readings.
func tumblingSamples() -> [MotionSample] {
    // The same samples, to 9 digits, as a trace (for VQF's timing, Scripts/measure-vqf-speed.py):
    // motionctl simulate --scenario tumbling --sensors accel,gyro,mag --seed 1 --gyro-bias 0.004,-0.002,0.003
    //   --mag-offset 35,-22,48
    let scenario = Scenario.tumbling()
    let options = SimulationOptions(
        rate: 100, sensors: .all, seed: 1, gyroscopeBias: SIMD3(0.004, -0.002, 0.003),
        magnetometerOffset: SIMD3(35, -22, 48))
    return Array(try! Simulation(scenario: scenario, options: options).prefix(4096))
}

/// A real recording: the trace file named by the environment variable `SWIFT_MOTION_BENCHMARK_TRACE` (a path, e.g.
/// a broad-dev trial), else the shipped `Recordings/broad-slow-rotation-excerpt.csv` (BROAD trial 02, the first
/// 60 s at 2000/7 Hz: 17 143 samples, about 26 s at rest, then slow turns by hand; CC-BY-4.0, see
/// Recordings/README.md). Returns its samples and the interval between the first two, in s.
func recordedSamples() -> (samples: [MotionSample], interval: Double) {
    // This file is Benchmarks/Benchmarks/FusionBenchmarks/FusionBenchmarks.swift: the package is four levels up.
    let root = String(#filePath).split(separator: "/", omittingEmptySubsequences: false).dropLast(4)
        .joined(separator: "/")
    let path = getenv("SWIFT_MOTION_BENCHMARK_TRACE").map { String(cString: $0) }
        ?? root + "/Recordings/broad-slow-rotation-excerpt.csv"
    let reader = try! TraceReader(path: path)
    var samples: [MotionSample] = []
    while let sample = try! reader.next() { samples.append(sample) }
    precondition(samples.count >= 2, "\(path): fewer than two samples")
    return (samples, samples[1].timestamp - samples[0].timestamp)
}

/// Per-sample cost of `DeviceMotionFilter`, what `MotionManager` and `motionctl attitude` run: the estimator, the
/// magnetometer calibration in the frames that use the magnetometer, and the `DeviceMotion` value (attitude, gravity,
/// user acceleration) for every sample. Input: `samples` replayed with timestamps `interval` apart and increasing
/// (the arbitrary frame ignores the magnetometer). `Scalar`: the estimator's precision (`DeviceMotionFilterOf<Float>`
/// or `DeviceMotionFilter`). The loop reads the attitude quaternion (VQF's `updateBatch`, timed for comparison by
/// Scripts/measure-vqf-speed.py, stores its quaternions for every sample); `update(_:)` wraps `update(_:into:)`,
/// which is never inlined: every stored field of the value is computed and stored. `readsHeading`: the loop reads
/// `heading` as well, which is computed when read (an arctangent). `calibrates`: the input must bring the
/// calibration to `high` (checked after the run).
func deviceMotionBenchmark<Scalar: MotionScalar>(
    _ name: String, _: Scalar.Type, frame: AttitudeReferenceFrame, samples: [MotionSample] = tumblingSamples(),
    interval: Double = 0.01, calibrates: Bool = true, readsHeading: Bool = false
) {
    Benchmark(
        name,
        configuration: perSample
    ) { benchmark in
        var filter = DeviceMotionFilterOf<Scalar>(referenceFrame: frame)
        var sum = 0.0
        var k = 0
        // Each sample gets its timestamp in place: a copy of the 89-byte sample, made field by field with overlapping
        // 16-byte stores, made the filter's first loads wait for those stores to complete (about 8 ns a sample).
        var input = samples
        // One loop per reading, so that the measured loop has no test of `readsHeading` in it.
        @inline(__always) func replay(reading read: (DeviceMotion) -> Double) {
            for i in benchmark.scaledIterations {
                input[k].timestamp = Double(i) * interval
                if let motion = filter.update(input[k]) { sum += read(motion) }
                k = k + 1 == input.count ? 0 : k + 1
            }
        }
        benchmark.startMeasurement()
        if readsHeading {
            replay { $0.attitude.quaternion.w + $0.heading }
        } else {
            replay { $0.attitude.quaternion.w }
        }
        benchmark.stopMeasurement()
        precondition(
            frame == .xArbitraryZVertical || !calibrates || filter.calibrator.accuracy == .high,
            "the input must calibrate")
        blackHole(sum)
    }
}

/// Per-sample cost of the magnetometer calibration (hard-iron sphere fit). `random`: the input above, which turns
/// too little to calibrate (readings are only kept 10 µT apart); otherwise 4096 samples turning through 42
/// orientations over all directions with a hard-iron offset, calibrated within seconds.
func calibrationBenchmark(random: Bool) {
    var magnetometer = Input<Double>().magnetometer
    if !random {
        let options = SimulationOptions(rate: 100, sensors: .all, seed: 1, magnetometerOffset: SIMD3(35, -22, 48))
        magnetometer = try! Simulation(scenario: .tumbling(), options: options).prefix(4096)
            .map { $0.magneticField!.vector }
    }
    let input = magnetometer
    Benchmark(
        random ? "Magnetometer calibration, random" : "Magnetometer calibration, tumbling",
        configuration: perSample
    ) { benchmark in
        var calibrator = MagnetometerCalibrator()
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            calibrator.update(input[i & 4095], at: Double(i) * 0.01)
        }
        benchmark.stopMeasurement()
        blackHole(calibrator.bias)
    }
}

let benchmarks: @Sendable () -> Void = {
    fusionBenchmark("Attitude 6D Double", Double.self, magnetometer: false)
    fusionBenchmark("Attitude 6D Float", Float.self, magnetometer: false)
    fusionBenchmark("Attitude 9D Double", Double.self, magnetometer: true)
    fusionBenchmark("Attitude 9D Float", Float.self, magnetometer: true)
    for (scalar, suffix) in [(Double.self as any MotionScalar.Type, ""), (Float.self, " Float")] {
        func add<Scalar: MotionScalar>(_ type: Scalar.Type) {
            deviceMotionBenchmark(
                "Device motion\(suffix), arbitrary frame (6D), tumbling", type, frame: .xArbitraryZVertical)
            deviceMotionBenchmark(
                "Device motion\(suffix), arbitrary corrected (9D), tumbling", type,
                frame: .xArbitraryCorrectedZVertical)
            deviceMotionBenchmark(
                "Device motion\(suffix), magnetic north (9D), tumbling", type, frame: .xMagneticNorthZVertical)
            deviceMotionBenchmark(
                "Device motion\(suffix), true north (9D), tumbling", type, frame: .xTrueNorthZVertical)
            deviceMotionBenchmark(
                "Device motion\(suffix), magnetic north (9D), tumbling, heading read", type,
                frame: .xMagneticNorthZVertical, readsHeading: true)
        }
        add(scalar)
    }
    let recorded = recordedSamples()
    deviceMotionBenchmark(
        "Device motion, arbitrary frame (6D), recording", Double.self, frame: .xArbitraryZVertical,
        samples: recorded.samples, interval: recorded.interval)
    deviceMotionBenchmark(
        "Device motion, magnetic north (9D), recording", Double.self, frame: .xMagneticNorthZVertical,
        samples: recorded.samples, interval: recorded.interval, calibrates: false)
    calibrationBenchmark(random: true)
    calibrationBenchmark(random: false)
}
