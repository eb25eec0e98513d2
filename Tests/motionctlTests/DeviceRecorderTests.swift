import Foundation
import IIOTestbed
import Motion
import MotionAlgorithms
import MotionCore
import MotionIIO
import MotionTrace
import Synchronization
import Testing

@testable import motionctl
import TestFiles

/// `stream --device` and `record`'s recorder (`DeviceRecorder`) on an emulated device (umockdev).
@Suite(.serialized, .requires(.umockdevPreload))
struct DeviceRecorderTests {
    @Test("DeviceRecorder writes a device's samples, filtered and thinned, with its metadata, until cancelled")
    func deviceRecorder() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let file = ScratchFolder.path("recorder", suffix: ".csv")
            let recorder = DeviceRecorder(
                selector: "auto", sensors: .accelerometer,
                configuration: DeviceSourceConfiguration(capture: CaptureConfiguration(rate: 100)),
                filter: .lowPass(.factor(1)), interval: 0.02,
                output: .init(path: file, source: "test", metadata: [("filter", "none")]))
            let reports = Recorder<String>()
            let recording = Task { try await recorder.run { reports.append($0) } }
            #expect(await eventually { testbed.attribute(path, "buffer/enable") == "1" })
            try testbed.feed("/dev/iio:device0", scans(0..<40))
            // Every other scan (0.02 s at 100 Hz): 20 rows, the last at t = 1.38 s.
            #expect(await eventually {
                let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
                return text.split(separator: "\n").filter { $0.first == "1" }.count == 20
            })
            recording.cancel()
            try await recording.value
            #expect(testbed.attribute(path, "buffer/enable") == "0")
            let reader = try TraceReader(path: file)
            var samples: [MotionSample] = []
            while let sample = try reader.next() { samples.append(sample) }
            #expect(samples.count == 20)
            #expect(samples.map(\.timestamp).enumerated().allSatisfy { abs($1 - (1 + Double($0) * 0.02)) < 1e-9 })
            #expect(reader.sensors == .accelerometer)
            #expect(reader.metadata["source"] == "test" && reader.metadata["filter"] == "none")
            #expect(reader.metadata["device"] == "lis3dh (iio:device0)")
            #expect(reader.metadata["mount_matrix_accel"] != nil && reader.metadata["capture_iio_device0"] != nil)
            #expect(reports.all.isEmpty, "\(reports.all)")
        }
    }
}

/// The recorder's reports, appended from its task.
private final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ element: Element) { items.withLock { $0.append(element) } }
    var all: [Element] { items.withLock { $0 } }
}

/// Suspends until `condition` holds, checking every millisecond; gives up after `limit` seconds (a hang guard,
/// not a speed check).
private func eventually(limit: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(limit)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}
