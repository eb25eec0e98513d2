/// `value` with exactly `decimals` digits after the point, rounded half away from zero, such as `fixed(1.5, 3)`
/// → `1.500`. Same text on every platform (no C `printf`, no Foundation).
package func fixed(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return value.description }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9e15 else { return value.description }
    let units = UInt64(scaled)
    let divisor = UInt64(scale)
    let whole = units / divisor
    var text = (value < 0 && units != 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let fraction = String(units % divisor)
        text += "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
    return text
}

/// An angle in radians as whole-ish degrees with one decimal, such as `30.0deg`.
func degrees(_ radians: Double) -> String {
    fixed(radians * 180 / .pi, 1) + "deg"
}

/// A vector as space-separated components with `decimals` digits, such as `0.000 -1.000 0.000`.
func fixed(_ vector: SIMD3<Double>, _ decimals: Int) -> String {
    "\(fixed(vector.x, decimals)) \(fixed(vector.y, decimals)) \(fixed(vector.z, decimals))"
}
