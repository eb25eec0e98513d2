public import MotionCore

/// How a ``Simulation`` samples a scenario: rate, sensors, seed and sensor imperfections.
public struct SimulationOptions: Hashable, Sendable {
    /// Samples per second, in Hz.
    public var rate: Double
    /// The sensors each sample carries; the others are `nil`.
    public var sensors: SensorSet
    /// The seed of every random number the simulation draws (noise, jitter, vibration).
    public var seed: UInt64
    /// Standard deviation of the accelerometer's white noise on each axis, in g.
    public var accelerometerNoise: Double
    /// Standard deviation of the gyroscope's white noise on each axis, in rad/s.
    public var gyroscopeNoise: Double
    /// Constant gyroscope bias added to every reading, in rad/s (device frame).
    public var gyroscopeBias: SIMD3<Double>
    /// Standard deviation of the magnetometer's white noise on each axis, in µT.
    public var magnetometerNoise: Double
    /// The Earth's field in the reference frame (x north, y west, z up), in µT. The default is 20 µT
    /// horizontal towards north and 43 µT downwards (a mid-latitude northern site).
    public var earthMagneticField: SIMD3<Double>
    /// The device's own field (hard-iron offset) added to every magnetometer reading, in µT (device frame).
    public var magnetometerOffset: SIMD3<Double>
    /// Standard deviation of the timestamp jitter, in seconds; each offset is clipped to ±0.45 / ``rate`` so
    /// timestamps stay strictly increasing. The first timestamp is always 0.
    public var timestampJitter: Double

    /// Creates options; every parameter has a realistic default for a phone-class IMU.
    public init(
        rate: Double = 100,
        sensors: SensorSet = [.accelerometer, .gyroscope],
        seed: UInt64 = 0,
        accelerometerNoise: Double = 0.005,
        gyroscopeNoise: Double = 0.002,
        gyroscopeBias: SIMD3<Double> = .zero,
        magnetometerNoise: Double = 0.4,
        earthMagneticField: SIMD3<Double> = SIMD3(20, 0, -43),
        magnetometerOffset: SIMD3<Double> = .zero,
        timestampJitter: Double = 0
    ) {
        self.rate = rate
        self.sensors = sensors
        self.seed = seed
        self.accelerometerNoise = accelerometerNoise
        self.gyroscopeNoise = gyroscopeNoise
        self.gyroscopeBias = gyroscopeBias
        self.magnetometerNoise = magnetometerNoise
        self.earthMagneticField = earthMagneticField
        self.magnetometerOffset = magnetometerOffset
        self.timestampJitter = timestampJitter
    }

    /// Options with no noise, no bias and no jitter, at `rate` Hz with all three sensors: the ideal
    /// readings, for checking physics.
    public static func noiseless(rate: Double = 100, sensors: SensorSet = .all) -> SimulationOptions {
        SimulationOptions(
            rate: rate,
            sensors: sensors,
            accelerometerNoise: 0,
            gyroscopeNoise: 0,
            magnetometerNoise: 0
        )
    }

    /// Checks that every value is in range.
    ///
    /// - Throws: `MotionError` with code `invalidArgument` naming the bad option.
    public func validate() throws(MotionError) {
        func check(_ condition: Bool, _ message: String) throws(MotionError) {
            if !condition { throw MotionError(.invalidArgument, message) }
        }
        try check(
            rate > 0 && rate.isFinite && rate <= 1_000_000, "The sample rate must be between 0 and 1 MHz (got \(rate))."
        )
        try check(!sensors.isEmpty, "Choose at least one sensor to simulate.")
        try check(accelerometerNoise >= 0 && accelerometerNoise.isFinite, "The accelerometer noise must be ≥ 0 g.")
        try check(gyroscopeNoise >= 0 && gyroscopeNoise.isFinite, "The gyroscope noise must be ≥ 0 rad/s.")
        try check(magnetometerNoise >= 0 && magnetometerNoise.isFinite, "The magnetometer noise must be ≥ 0 µT.")
        try check(
            gyroscopeBias.x.isFinite && gyroscopeBias.y.isFinite && gyroscopeBias.z.isFinite,
            "The gyroscope bias must be finite."
        )
        try check(
            earthMagneticField.x.isFinite && earthMagneticField.y.isFinite && earthMagneticField.z.isFinite,
            "The Earth's magnetic field must be finite."
        )
        try check(
            magnetometerOffset.x.isFinite && magnetometerOffset.y.isFinite && magnetometerOffset.z.isFinite,
            "The magnetometer offset must be finite."
        )
        try check(timestampJitter >= 0 && timestampJitter.isFinite, "The timestamp jitter must be ≥ 0 s.")
    }
}

/// One simulated instant: the sample the sensors report and the ground truth behind it.
public struct SimulatedFrame: Hashable, Sendable {
    /// What the sensors report (with noise and bias), restricted to the simulated sensors.
    public var sample: MotionSample
    /// The device→reference attitude.
    public var attitude: Attitude
    /// The noiseless body rotation rate, in rad/s.
    public var rotationRate: RotationRate
    /// Gravity in the device frame, in g (`attitude.gravity`).
    public var gravity: Acceleration
    /// The user acceleration in the device frame, in g with Core Motion's sign (the reported acceleration is
    /// gravity + user acceleration + noise).
    public var userAcceleration: Acceleration
    /// The index of the scenario segment the frame falls in.
    public var segmentIndex: Int
}

/// A deterministic, seeded stream of simulated `MotionSample` values for a ``Scenario``.
///
/// Sample `i` is taken at `i / rate` seconds (plus optional jitter) for every instant in [0, duration). The
/// readings follow Core Motion's conventions:
/// - acceleration (g) = `attitude.gravity` + user acceleration + noise, where user acceleration is minus the
///   device's kinematic acceleration over 9.80665 m/s², so a device at rest reads gravity's direction;
/// - rotation rate (rad/s) = the body angular velocity ω in the device frame, with `q̇ = ½ q ⊗ (0, ω)` for the
///   device→reference quaternion `q`, plus bias and noise;
/// - magnetic field (µT) = `attitude.rotationMatrix · earthMagneticField` + magnetometer offset + noise.
///
/// Iterating computes each sample on demand: memory does not grow with the length, and nothing is allocated
/// per sample. Each noise source draws from its own stream of the seed, so switching a sensor off does not
/// change the others' noise. Output is identical for identical inputs on one platform; across C libraries the
/// last bits of `sin`/`log` may differ.
public struct Simulation: Sequence, Sendable {
    /// The scenario being sampled.
    public let scenario: Scenario
    /// The sampling options.
    public let options: SimulationOptions

    /// Creates a simulation.
    ///
    /// - Throws: `MotionError` with code `invalidArgument` when an option is out of range (see
    ///   ``SimulationOptions/validate()``) or the scenario is empty.
    public init(scenario: Scenario, options: SimulationOptions = SimulationOptions()) throws(MotionError) {
        try options.validate()
        guard !scenario.segments.isEmpty else {
            throw MotionError(.invalidArgument, "The scenario '\(scenario.name)' has no segments; append at least one.")
        }
        self.scenario = scenario
        self.options = options
    }

    /// The number of samples: the instants `i / rate` in [0, duration).
    public var sampleCount: Int {
        let count = (scenario.duration * options.rate - 1e-9).rounded(.up)
        return Swift.max(Int(count), 1)
    }

    /// The sample count, exactly.
    public var underestimatedCount: Int { sampleCount }

    /// Returns an iterator over the samples.
    public func makeIterator() -> Iterator { Iterator(engine: Engine(self)) }

    /// The same instants with their ground truth (attitude, true rotation rate, gravity, user acceleration,
    /// segment).
    public var frames: Frames { Frames(simulation: self) }

    /// Iterates the simulated samples.
    public struct Iterator: IteratorProtocol {
        var engine: Engine

        /// The next sample, or `nil` after the last.
        public mutating func next() -> MotionSample? { engine.next()?.sample }
    }

    /// The simulated frames with ground truth.
    public struct Frames: Sequence, Sendable {
        let simulation: Simulation

        /// The number of frames, as ``Simulation/sampleCount``.
        public var underestimatedCount: Int { simulation.sampleCount }

        /// Returns an iterator over the frames.
        public func makeIterator() -> Iterator { Iterator(engine: Engine(simulation)) }

        /// Iterates the frames.
        public struct Iterator: IteratorProtocol {
            var engine: Engine

            /// The next frame, or `nil` after the last.
            public mutating func next() -> SimulatedFrame? { engine.next() }
        }
    }

    /// Key–value pairs describing the simulation for a trace header: `source`, `scenario`, `scenario_seed`
    /// (when the scenario was randomised), `seed`, `rate_hz`, `sensors`, `duration_s`, `samples`, the noise
    /// settings, `segments` (the count) and `notes` (every segment, `; `-separated). Values are single lines.
    public var metadata: [(key: String, value: String)] {
        var entries: [(key: String, value: String)] = [
            ("source", "simulate"),
            ("scenario", scenario.name),
        ]
        if let scenarioSeed = scenario.seed { entries.append(("scenario_seed", String(scenarioSeed))) }
        entries += [
            ("seed", String(options.seed)),
            ("rate_hz", options.rate.description),
            ("sensors", options.sensors.description),
            ("duration_s", fixed(scenario.duration, 3)),
            ("samples", String(sampleCount)),
            ("accel_noise_g", options.accelerometerNoise.description),
            ("gyro_noise_rad_s", options.gyroscopeNoise.description),
            ("gyro_bias_rad_s", fixed(options.gyroscopeBias, 6)),
        ]
        if options.sensors.contains(.magnetometer) {
            entries.append(("mag_noise_ut", options.magnetometerNoise.description))
            entries.append(("earth_field_ut", fixed(options.earthMagneticField, 3)))
            if options.magnetometerOffset != .zero {
                entries.append(("mag_offset_ut", fixed(options.magnetometerOffset, 3)))
            }
        }
        if options.timestampJitter > 0 { entries.append(("timestamp_jitter_s", options.timestampJitter.description)) }
        entries.append(("segments", String(scenario.segments.count)))
        entries.append(("notes", scenario.segmentList.joined(separator: "; ")))
        return entries
    }
}

/// The per-sample state machine shared by the sample and frame iterators.
struct Engine {
    let segments: [LabelledSegment]
    let options: SimulationOptions
    let count: Int
    let jitterLimit: Double
    var index = 0
    var segmentIndex = 0
    var accelerometerRandom: SeededGenerator
    var gyroscopeRandom: SeededGenerator
    var magnetometerRandom: SeededGenerator
    var motionRandom: SeededGenerator
    var jitterRandom: SeededGenerator

    /// The half-width of the central difference that turns attitude into rotation rate, in seconds.
    static let differenceStep = 1e-5

    init(_ simulation: Simulation) {
        segments = simulation.scenario.segments
        options = simulation.options
        count = simulation.sampleCount
        jitterLimit = 0.45 / simulation.options.rate
        let seed = simulation.options.seed
        accelerometerRandom = SeededGenerator(seed: seed, stream: 1)
        gyroscopeRandom = SeededGenerator(seed: seed, stream: 2)
        magnetometerRandom = SeededGenerator(seed: seed, stream: 3)
        motionRandom = SeededGenerator(seed: seed, stream: 4)
        jitterRandom = SeededGenerator(seed: seed, stream: 5)
    }

    mutating func next() -> SimulatedFrame? {
        guard index < count else { return nil }
        var t = Double(index) / options.rate
        if options.timestampJitter > 0 && index > 0 {
            t += min(max(options.timestampJitter * jitterRandom.nextGaussian(), -jitterLimit), jitterLimit)
        }
        index += 1

        while segmentIndex + 1 < segments.count && t >= segments[segmentIndex].end {
            segmentIndex += 1
        }
        let labelled = segments[segmentIndex]
        let segment = labelled.segment
        let model = labelled.model
        let local = t - labelled.start

        let q = model.attitude(at: local, in: segment)
        let h = Engine.differenceStep
        let before = model.attitude(at: local - h, in: segment)
        let after = model.attitude(at: local + h, in: segment)
        // Where the attitude is constant (holds, and a set-down after it lands) the rate is exactly zero.
        let omega = before == after ? SIMD3<Double>.zero : rotationVector(of: before.conjugate * after) / (2 * h)

        var user = model.userAcceleration(at: local, in: segment, attitude: q)
        let broadband = model.noiseLevel(at: local, in: segment)
        if broadband > 0 { user += broadband * motionRandom.nextGaussianVector() }

        let toDevice = q.conjugate
        let gravity = toDevice.act(on: SIMD3(0, 0, -1))
        let sensors = options.sensors

        var sample = MotionSample(timestamp: t)
        if sensors.contains(.accelerometer) {
            var reading = gravity + user
            if options.accelerometerNoise > 0 {
                reading += options.accelerometerNoise * accelerometerRandom.nextGaussianVector()
            }
            sample.acceleration = Acceleration(reading)
        }
        if sensors.contains(.gyroscope) {
            var reading = omega + options.gyroscopeBias
            if options.gyroscopeNoise > 0 { reading += options.gyroscopeNoise * gyroscopeRandom.nextGaussianVector() }
            sample.rotationRate = RotationRate(reading)
        }
        if sensors.contains(.magnetometer) {
            var reading = toDevice.act(on: options.earthMagneticField) + options.magnetometerOffset
            if options.magnetometerNoise > 0 {
                reading += options.magnetometerNoise * magnetometerRandom.nextGaussianVector()
            }
            sample.magneticField = MagneticField(reading)
        }
        return SimulatedFrame(
            sample: sample,
            attitude: Attitude(quaternion: q),
            rotationRate: RotationRate(omega),
            gravity: Acceleration(gravity),
            userAcceleration: Acceleration(user),
            segmentIndex: segmentIndex
        )
    }
}
