import Foundation
import MotionCore
import MotionTesting

/// Shorthand for a simulation that the test knows is valid.
func simulate(_ scenario: Scenario, _ options: SimulationOptions = SimulationOptions()) throws -> Simulation {
    try Simulation(scenario: scenario, options: options)
}

/// The frames of a simulation, collected (tests keep scenarios short).
func frames(_ scenario: Scenario, _ options: SimulationOptions = SimulationOptions()) throws -> [SimulatedFrame] {
    Array(try simulate(scenario, options).frames)
}

func length(_ v: SIMD3<Double>) -> Double { (v * v).sum().squareRoot() }

func dot(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double { (a * b).sum() }

/// The angle between two non-zero vectors, in radians.
func angleBetween(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
    let c = SIMD3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
    return atan2(length(c), dot(a, b))
}

func mean(_ vectors: [SIMD3<Double>]) -> SIMD3<Double> {
    vectors.reduce(SIMD3<Double>.zero, +) / Double(max(vectors.count, 1))
}

/// The largest component-wise difference between two vectors.
func maxDifference(_ a: SIMD3<Double>, _ b: SIMD3<Double>) -> Double {
    let d = a - b
    return max(abs(d.x), abs(d.y), abs(d.z))
}

/// Times (linearly interpolated) where `values` crosses zero, from samples at `times`.
func zeroCrossings(_ values: [Double], times: [Double]) -> [Double] {
    var crossings: [Double] = []
    for i in 1..<values.count where (values[i - 1] < 0) != (values[i] < 0) {
        let fraction = values[i - 1] / (values[i - 1] - values[i])
        crossings.append(times[i - 1] + fraction * (times[i] - times[i - 1]))
    }
    return crossings
}

/// Times where `values` rises through `+threshold` after having been below `-threshold` (a Schmitt trigger).
func risingEdges(_ values: [Double], times: [Double], threshold: Double) -> [Double] {
    var edges: [Double] = []
    var armed = false
    for (value, time) in zip(values, times) {
        if value < -threshold { armed = true }
        if armed && value > threshold {
            edges.append(time)
            armed = false
        }
    }
    return edges
}

/// Integrates body rotation rates over consecutive samples: `q ← q ⊗ exp(ω · Δt)`.
func integrate(
    from start: Quaternion<Double>,
    rates: [SIMD3<Double>],
    times: [Double],
    until end: Double
) -> Quaternion<Double> {
    var q = start
    for i in rates.indices {
        let next = i + 1 < times.count ? times[i + 1] : end
        q = (q * Quaternion(rotationVector: rates[i] * (next - times[i]))).normalized
    }
    return q
}
