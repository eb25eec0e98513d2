import Foundation
import MotionCore
import TestFiles

/// `count` samples at `rate` Hz from t = 0, accelerometer and gyroscope, with the index in the x acceleration so
/// each sample can be recognised.
func indexedSamples(count: Int, rate: Double = 100, magnetometer: Bool = false) -> [MotionSample] {
    (0..<count).map { index in
        MotionSample(
            timestamp: Double(index) / rate,
            acceleration: Acceleration(x: Double(index) * 1e-6, y: 0, z: -1),
            rotationRate: RotationRate(x: 0, y: 0, z: 0.1),
            magneticField: magnetometer ? MagneticField(x: 20, y: 0, z: -43) : nil)
    }
}

/// The index stored by `indexedSamples` in a reading.
func sampleIndex(_ acceleration: Acceleration) -> Int { Int((acceleration.x * 1e6).rounded()) }

/// Writes `text` to a new temporary file and returns its path.
func temporaryTrace(_ text: String, name: String = "trace") throws -> String {
    let path = ScratchFolder.path(name, suffix: ".csv")
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// A thread-safe list that handlers append to. (`LockedState`, not `Mutex`: the thread sanitizer cannot see a
/// contended `Mutex` on Linux and would report the list itself as a race.)
final class Recorder<Element: Sendable>: Sendable {
    private let items = LockedState<[Element]>([])
    func append(_ element: Element) { items.withLock { $0.append(element) } }
    var all: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}

/// Suspends until `condition` holds: checked after each of the task's first 1000 yields, then every millisecond
/// (sleeping frees the thread for the work awaited, however busy the test process is). Gives up after `limit`
/// seconds, a hang guard rather than a speed check, so a broken test fails instead of hanging.
func eventually(limit: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(limit)
    var checks = 0
    while ContinuousClock.now < deadline {
        if condition() { return true }
        checks += 1
        if checks < 1000 { await Task.yield() } else { try? await Task.sleep(for: .milliseconds(1)) }
    }
    return condition()
}
