// A program that uses MotionManager on a trace and imports no device or service backend: it links neither
// libiio, libudev nor libsystemd (`Tests/MotionTests/LinkageTests.swift` checks the built binary).
//
//     swift run motion-trace-only Recordings/broad-slow-rotation-excerpt.csv
import Motion
import MotionTrace

#if canImport(Glibc)
import Glibc
#endif

let path = CommandLine.arguments.dropFirst().first ?? "Recordings/broad-slow-rotation-excerpt.csv"
do {
    let manager = try MotionManager(source: .trace(path, pacing: .asFastAsConsumed))
    var updates = 0
    var last: AccelerometerData?
    for try await data in manager.accelerometerUpdates(interval: 0) {  // every reading
        updates += 1
        last = data
    }
    print("\(updates) accelerometer updates; the last at t = \(last.map { "\($0.timestamp)" } ?? "-") s")
} catch {
    print("motion-trace-only: \(error)")
    exit(1)
}
