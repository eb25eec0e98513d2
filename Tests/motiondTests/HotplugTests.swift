import Foundation
import IIOTestbed
import MotionCore
import MotionDBus
import Testing

/// Devices unplugged and plugged back while clients are attached.
@Suite("motiond follows devices coming and going", .serialized, .requires(.umockdevPreload, .dbusClients))
struct HotplugTests {
    @Test("Unplugged and plugged back: monitor-sensor sees the accelerometer go and return, a stream continues")
    func unplugAndReplug() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let service = try await fixture.startService()
            defer { service.stop() }
            let feeder = fixture.feedInRealTime()
            defer { feeder.cancel() }
            let client = try await BusClient(address: fixture.bus.address)
            let stream = try await client.openStream("samples", interval: 0.05, format: "csv")
            defer { stream.close() }
            let monitor = try fixture.bus.start("/usr/bin/monitor-sensor")
            defer { monitor.stop() }
            #expect(try await monitor.wait(timeout: 20) { $0.contains("=== Has accelerometer") }, "\(monitor.text)")
            #expect(await stream.read { _ in stream.csvTimestamps.count >= 20 }, "\(stream.lines.suffix(5))")

            testbed.remove(fixture.accelerometer)
            #expect(try await monitor.wait(timeout: 20) { $0.contains("--- Accelerometer disappeared") }, "\(monitor.text)")
            let before = stream.csvTimestamps.count
            try testbed.add(.lis3dh().bufferOnly)
            #expect(try await monitor.wait(timeout: 20) { $0.contains("+++ Accelerometer appeared") }, "\(monitor.text)")
            // The same stream goes on with the samples of the device plugged back, in time order.
            #expect(await stream.read { _ in stream.csvTimestamps.count >= before + 20 }, "\(stream.lines.suffix(5))")
            let times = stream.csvTimestamps
            #expect(zip(times.dropFirst(), times).allSatisfy { $0 > $1 })
            // The service logs before it signals, but its log is read by another thread: wait for it.
            #expect(await eventually { service.text.contains("the accelerometer disappeared") }, "\(service.text)")
            #expect(await eventually { service.text.contains("the accelerometer appeared") }, "\(service.text)")
            await client.close()
        }
    }
}
