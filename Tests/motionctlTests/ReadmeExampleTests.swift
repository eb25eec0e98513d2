import Foundation
import MotionAlgorithms
import MotionCore
import MotionTrace
import Testing

/// The README's library example, kept compiling and running.
@Suite struct ReadmeExampleTests {
    @Test func readmeExampleRuns() throws {
        let path = Motionctl.packageRoot.appendingPathComponent("Recordings/broad-slow-rotation-excerpt.csv").path
        var lastGravity = SIMD3<Double>.zero
        var count = 0
        // --- README example (keep in sync with README.md) ---
        let reader = try TraceReader(path: path)
        var gravity = LowPassFilter<Double>(smoothing: .cutoff(hertz: 1), start: .firstSample)
        while let sample = try reader.next() {
            guard let a = sample.acceleration else { continue }
            let g = gravity.update(a.vector, at: sample.timestamp)   // g, device frame
            // print(sample.timestamp, g)
            lastGravity = g
            count += 1
        }
        // --- end of README example ---
        #expect(count == 17143)
        // Low-passed acceleration is gravity: about 1 g long.
        let length = (lastGravity * lastGravity).sum().squareRoot()
        #expect(abs(length - 1) < 0.05)
    }
}
