import Foundation
import IIOTestbed
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `motiond --publish-broker`: the device's samples at 50 Hz to a real mosquitto, through a spool, across a broker
/// outage and a SIGKILL of the service.
@Suite("motiond --publish-broker", .serialized, .requires(.umockdevPreload, .dbusClients, .mosquitto, .root))
struct PublishServiceTests {
    /// The `seq` of every batch the subscriber printed, by stream, and the samples' times (device milliseconds), each once
    /// (QoS 1 may deliver a message twice).
    static func received(_ subscriber: ChildProcess) -> (streams: [String: [Int]], times: Set<Int>) {
        var streams: [String: [Int]] = [:]
        var times: Set<Int> = []
        for line in subscriber.text.split(separator: "\n") {
            if let start = line.range(of: "{\"type\":\"batch\",\"stream\":\"") {
                let rest = line[start.upperBound...]
                guard let quote = rest.firstIndex(of: "\""), let seq = rest.range(of: "\"seq\":") else { continue }
                streams[String(rest[..<quote]), default: []].append(Int(rest[seq.upperBound...].prefix(while: \.isNumber)) ?? -1)
            } else if line.hasPrefix("{\"type\":\"sample\",\"t\":"), let t = Double(line.dropFirst(21).prefix(while: { $0 != "," })) {
                times.insert(Int((t * 1000).rounded()))
            }
        }
        return (streams, times)
    }

    @Test("Every sample arrives, through a broker outage and a SIGKILL of the service")
    func everySampleArrives() async throws {
        try await Testbed.run { testbed in
            let fixture = try await ServiceFixture.makeBuffered(testbed)
            defer { fixture.stop() }
            let broker = try MosquittoBroker()
            try await broker.start()
            let id = "sub-\(UUID().uuidString.prefix(8))"
            var subscriber = try broker.subscribe("test/#", id: id)
            let (parent, _) = try HistoryTests.historyFolder()
            defer { try? FileManager.default.removeItem(atPath: parent) }
            let arguments = [
                "--publish-broker", "mqtt://127.0.0.1:\(broker.port)", "--publish-topic", "test",
                "--publish-spool", parent + "/spool",
            ]
            let first = try await fixture.startService(arguments)
            defer { first.stop() }
            #expect(first.text.contains("publish: accel every 0.02 s to 127.0.0.1"), "\(first.text)")
            try await HistoryTests.feed(fixture, batches: 30)  // 3 s at 100 Hz: 150 samples at 50 Hz
            #expect(try await subscriber.wait(timeout: 20) { _ in Self.received(subscriber).times.count >= 150 }, "\(first.text)")
            #expect(Self.received(subscriber).times == Set(stride(from: 0, to: 300, by: 2).map { 1000 + 10 * $0 }))

            // The broker goes away; 3 s more are fed; the service is killed 1.5 s later (all of it spooled).
            try await broker.stop()
            try await HistoryTests.feed(fixture, from: 300, batches: 30)
            try await Task.sleep(for: .milliseconds(1500))
            first.send(SIGKILL)
            _ = try await first.waitForExit(timeout: 10)

            // The broker is back; the service starts again on the same spool and sends what the killed one spooled.
            try await broker.start()
            subscriber.stop()
            subscriber = try broker.subscribe("test/#", id: id)
            defer { subscriber.stop() }
            let second = try await fixture.startService(arguments)
            defer { second.stop() }
            let outage = Set(stride(from: 300, to: 600, by: 2).map { 1000 + 10 * $0 })
            #expect(try await subscriber.wait(timeout: 30) { _ in Self.received(subscriber).times.isSuperset(of: outage) }, "\(second.text)")
            let (streams, times) = Self.received(subscriber)
            // Every sample of the outage (and perhaps again a message from before it, as QoS 1 allows).
            #expect(times.isSuperset(of: outage), "missing: \(outage.subtracting(times).sorted().prefix(5)); \(second.text)")
            // The killed service's stream continues without a hole.
            for (stream, seqs) in streams {
                let unique = Array(Set(seqs)).sorted()
                #expect(unique == Array((unique.first ?? 0)...(unique.last ?? 0)), "\(stream): \(unique)")
            }
            second.send(SIGTERM)
            #expect(try await second.waitForExit(timeout: 20) == 0, "\(second.text)")
            try await broker.stop()
        }
    }
}
