import MotionCore
import MotionTesting
import Testing
import TestThreads

@Suite("Simulation: streaming, determinism, timestamps, options", .computeBound)
struct SimulationTests {
    static let options = SimulationOptions(sensors: .all, seed: 5, gyroscopeBias: SIMD3(0.01, -0.02, 0.005))

    @Test("The same seed gives identical samples; a different seed changes them")
    func determinism() throws {
        let scenario = Scenario.shakeSequence(seed: 3)
        let a = Array(try simulate(scenario, Self.options))
        let b = Array(try simulate(scenario, Self.options))
        #expect(a == b)
        var other = Self.options
        other.seed = 6
        let c = Array(try simulate(scenario, other))
        #expect(a.count == c.count)
        #expect(a != c)
        #expect(zip(a, c).allSatisfy { $0.timestamp == $1.timestamp })
        // Different noise, same underlying motion: outside the vibration (whose broadband part is random too),
        // the readings differ by sensor noise only.
        let vibrating = try #require(scenario.segments.first { $0.kind == "vibration" })
        let worst =
            zip(a, c).filter { !vibrating.contains($0.0.timestamp) }
            .map { maxDifference($0.acceleration!.vector, $1.acceleration!.vector) }.max() ?? 0
        #expect(worst > 0 && worst < 0.05)
        // Library scenarios themselves are deterministic in their seed.
        #expect(Scenario.shakeSequence(seed: 3) == scenario)
        #expect(Scenario.shakeSequence(seed: 4) != scenario)
        #expect(Scenario.random(seed: 9) == Scenario.random(seed: 9))
        #expect(Scenario.random(seed: 9) != Scenario.random(seed: 10))
    }

    @Test("Each sensor has its own noise stream: dropping the magnetometer leaves the others unchanged")
    func independentStreams() throws {
        let scenario = Scenario.walking(duration: 3)
        var accelOnly = Self.options
        accelOnly.sensors = [.accelerometer]
        let all = Array(try simulate(scenario, Self.options))
        let some = Array(try simulate(scenario, accelOnly))
        #expect(all.map(\.acceleration) == some.map(\.acceleration))
        #expect(some.allSatisfy { $0.sensors == [.accelerometer] })
        #expect(all.allSatisfy { $0.sensors == .all })
    }

    @Test("Gyroscope bias and noise are what the options say")
    func gyroscopeBiasAndNoise() throws {
        var scenario = Scenario(name: "still", start: .landscapeRight)
        scenario.append(.hold(20))
        let bias = SIMD3<Double>(0.01, -0.02, 0.005)
        let options = SimulationOptions(seed: 3, gyroscopeNoise: 0.004, gyroscopeBias: bias)
        let rates = try simulate(scenario, options).map { $0.rotationRate!.vector }
        #expect(rates.count == 2000)
        let m = mean(rates)
        // The mean of 2000 readings with σ = 0.004 rad/s has σ ≈ 0.00009 rad/s.
        #expect(maxDifference(m, bias) < 0.0005)
        let variance = rates.map { ($0 - m) * ($0 - m) }.reduce(SIMD3<Double>.zero, +) / Double(rates.count)
        for axis in 0..<3 { #expect(abs(variance[axis].squareRoot() - 0.004) < 0.0003) }
    }

    @Test("Timestamps are i / rate from 0, strictly increasing, covering [0, duration)", arguments: [50.0, 100, 400])
    func timestamps(rate: Double) throws {
        var scenario = Scenario(name: "t", start: .faceUp)
        scenario.append(.hold(1.005))
        scenario.append(.shake(axis: .x, frequency: 3, amplitude: 1, duration: 0.5))
        let simulation = try simulate(scenario, SimulationOptions(rate: rate))
        let times = simulation.map(\.timestamp)
        #expect(times.count == simulation.sampleCount)
        #expect(times.first == 0)
        for (i, t) in times.enumerated() { #expect(t == Double(i) / rate) }
        #expect(times.last! < scenario.duration)
        #expect(times.last! + 1 / rate >= scenario.duration - 1e-9)
    }

    @Test("Jittered timestamps stay strictly increasing and near the grid")
    func jitter() throws {
        let options = SimulationOptions(rate: 100, seed: 2, timestampJitter: 0.003)
        let times = try simulate(.walking(duration: 10), options).map(\.timestamp)
        #expect(times[0] == 0)
        var offGrid = 0
        for i in 1..<times.count {
            #expect(times[i] > times[i - 1])
            let offset = times[i] - Double(i) / 100
            #expect(abs(offset) <= 0.0045 + 1e-12)
            if abs(offset) > 1e-6 { offGrid += 1 }
        }
        #expect(offGrid > times.count * 9 / 10)
        let meanStep = (times.last! - times[0]) / Double(times.count - 1)
        #expect(abs(meanStep - 0.01) < 1e-5)
    }

    @Test("Out-of-range options and empty scenarios throw invalidArgument")
    func validation() {
        var scenario = Scenario(name: "x", start: .faceUp)
        scenario.append(.hold(1))
        let bad: [SimulationOptions] = [
            SimulationOptions(rate: 0), SimulationOptions(rate: -.infinity), SimulationOptions(rate: .nan),
            SimulationOptions(sensors: []), SimulationOptions(accelerometerNoise: -1),
            SimulationOptions(gyroscopeNoise: .nan), SimulationOptions(gyroscopeBias: SIMD3(.infinity, 0, 0)),
            SimulationOptions(timestampJitter: -0.1),
        ]
        for options in bad {
            #expect(throws: MotionError.self) { try Simulation(scenario: scenario, options: options) }
            do {
                _ = try Simulation(scenario: scenario, options: options)
            } catch {
                #expect(error.code == .invalidArgument)
            }
        }
        #expect(throws: MotionError.self) { try Simulation(scenario: Scenario(name: "empty", start: .faceUp)) }
    }

    @Test("Metadata describes the run for a trace header")
    func metadata() throws {
        let simulation = try simulate(.shakeSequence(seed: 12), SimulationOptions(rate: 200, sensors: .all, seed: 99))
        let entries = simulation.metadata
        let dictionary = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        #expect(entries.count == dictionary.count, "keys are unique")
        #expect(entries.first?.key == "source")
        #expect(dictionary["source"] == "simulate")
        #expect(dictionary["scenario"] == "shakeSequence")
        #expect(dictionary["scenario_seed"] == "12")
        #expect(dictionary["seed"] == "99")
        #expect(dictionary["rate_hz"] == "200.0")
        #expect(dictionary["sensors"] == "accel,gyro,mag")
        #expect(dictionary["samples"] == String(simulation.sampleCount))
        #expect(dictionary["segments"] == String(simulation.scenario.segments.count))
        #expect(dictionary["gyro_bias_rad_s"] == "0.000000 0.000000 0.000000")
        #expect(dictionary["earth_field_ut"] == "20.000 0.000 -43.000")
        let notes = try #require(dictionary["notes"])
        #expect(notes.hasPrefix("0.000-1.000 hold duration=1.000s orientation=portrait+0.0deg; "))
        #expect(notes.contains("shake axis=x"))
        #expect(notes.split(separator: ";").count == simulation.scenario.segments.count)
        #expect(entries.allSatisfy { !$0.value.contains("\n") })
        #expect(try simulate(.orientationSweep()).metadata.contains { $0.key == "scenario_seed" } == false)
    }

    @Test("Many samples stream without being stored")
    func longStream() throws {
        #if DEBUG
            let count = 200_000
        #else
            let count = 1_000_000
        #endif
        let scenario = Scenario.walking(duration: Double(count) / 100 - 2)
        let simulation = try simulate(scenario)
        #expect(simulation.sampleCount == count)
        var seen = 0
        var last = -1.0
        var sumY = 0.0
        for sample in simulation {
            seen += 1
            last = sample.timestamp
            sumY += sample.acceleration!.y
        }
        #expect(seen == count)
        #expect(last == Double(count - 1) / 100)
        #expect(abs(sumY / Double(count) + 1) < 0.01)
    }
}
