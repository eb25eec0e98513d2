import Benchmark
import MotionAlgorithms
import MotionCore
import MotionTesting

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

/// 4096 samples (41 s at 100 Hz, all sensors, noise, gyroscope bias (0.004, −0.002, 0.003) rad/s) turning through
/// 42 orientations over all directions, one a second, with a hard-iron offset of (35, −22, 48) µT: input on which
/// the magnetometer calibration fits (`high` within 8 s) and keeps checking its fit, as a device in a hand does.
/// Replayed with increasing timestamps, so the fits go on with the same readings.
func tumblingSamples() -> [MotionSample] {
    var scenario = Scenario(name: "tumbling", start: .faceUp)
    for i in 1...42 {
        let roll = (Double(i) * 2.399963).truncatingRemainder(dividingBy: 2 * .pi) - .pi
        let pitch = (2 * (Double(i) * 0.618034).truncatingRemainder(dividingBy: 1) - 1) * 1.4
        scenario.append(.rotate(to: Attitude(roll: roll, pitch: pitch, yaw: Double(i) * 1.3), duration: 1))
    }
    let options = SimulationOptions(
        rate: 100, sensors: .all, seed: 1, gyroscopeBias: SIMD3(0.004, -0.002, 0.003),
        magnetometerOffset: SIMD3(35, -22, 48))
    return Array(try! Simulation(scenario: scenario, options: options).prefix(4096))
}

/// Per-sample cost of `DeviceMotionFilter`, what `MotionManager` and `motionctl attitude` run: the estimator, the
/// magnetometer calibration in the north frames, and the `DeviceMotion` value (attitude, gravity, user
/// acceleration, heading) for every sample. Input: `tumblingSamples()` (the arbitrary frame ignores its
/// magnetometer). `Scalar`: the estimator's precision (`DeviceMotionFilterOf<Float>` or `DeviceMotionFilter`).
/// The loop reads only the heading, but `update(_:)` wraps `update(_:into:)`, which is never inlined: every field
/// of the value is computed and stored.
func deviceMotionBenchmark<Scalar: MotionScalar>(_ name: String, _: Scalar.Type, frame: AttitudeReferenceFrame) {
    let samples = tumblingSamples()
    Benchmark(
        name,
        configuration: perSample
    ) { benchmark in
        var filter = DeviceMotionFilterOf<Scalar>(referenceFrame: frame)
        var heading = 0.0
        benchmark.startMeasurement()
        for i in benchmark.scaledIterations {
            var sample = samples[i & 4095]
            sample.timestamp = Double(i) * 0.01
            if let motion = filter.update(sample) { heading += motion.heading }
        }
        benchmark.stopMeasurement()
        precondition(frame == .xArbitraryZVertical || filter.calibrator.accuracy == .high, "the input must calibrate")
        blackHole(heading)
    }
}

/// Per-sample cost of the magnetometer calibration (hard-iron sphere fit). `random`: the input above, which turns
/// too little to calibrate (readings are only kept 10 µT apart); otherwise 4096 samples turning through 42
/// orientations over all directions with a hard-iron offset, calibrated within seconds.
func calibrationBenchmark(random: Bool) {
    var magnetometer = Input<Double>().magnetometer
    if !random {
        var scenario = Scenario(name: "tumbling", start: .faceUp)
        for i in 1...42 {
            let roll = (Double(i) * 2.399963).truncatingRemainder(dividingBy: 2 * .pi) - .pi
            let pitch = (2 * (Double(i) * 0.618034).truncatingRemainder(dividingBy: 1) - 1) * 1.4
            scenario.append(.rotate(to: Attitude(roll: roll, pitch: pitch, yaw: Double(i) * 1.3), duration: 1))
        }
        let options = SimulationOptions(rate: 100, sensors: .all, seed: 1, magnetometerOffset: SIMD3(35, -22, 48))
        magnetometer = try! Simulation(scenario: scenario, options: options).prefix(4096).map { $0.magneticField!.vector }
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
        }
        add(scalar)
    }
    calibrationBenchmark(random: true)
    calibrationBenchmark(random: false)
}
