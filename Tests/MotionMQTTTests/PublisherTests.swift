import Foundation
import IIOTestbed
import MotionCore
import MotionStore
import Testing

@testable import MotionMQTT
import TestFiles

/// `MQTTPublisher` against a real mosquitto and a real subscriber: every spooled message arrives, in order,
/// through a broker stop and restart, and the spool empties only as the broker acknowledges.
@Suite(.serialized, .requires(.mosquitto))
struct PublisherTests {
    static func folder() throws -> String { try ScratchFolder.folder("spool") }

    static func message(_ i: Int) -> [UInt8] { Array("{\"seq\":\(i)}".utf8) }

    /// The `seq` of each line `topic {"seq":N}` the subscriber printed on `topic`.
    static func received(_ subscriber: ChildProcess, topic: String) -> [Int] {
        subscriber.text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(topic + " {\"seq\":") else { return nil }
            return Int(line.dropFirst(topic.count + 8).dropLast())
        }
    }

    @Test func everySpooledMessageArrivesInOrderAndTheSpoolEmpties() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let subscriber = try broker.subscribe("test/#", id: "subscriber-\(UUID().uuidString.prefix(8))")
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(500))  // subscribed
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spool = try MessageSpool(directory: folder + "/spool", segmentBytes: 4096)
        for i in 0..<500 { try spool.append(topic: "test/device/samples", bytes: Self.message(i)) }
        let logged = Log()
        let publisher = try MQTTPublisher(
            spool: spool, options: MQTTOptions(host: "127.0.0.1", port: broker.port, clientID: "publisher-1"),
            statusTopic: "test/status", log: { logged.add($0) })
        try publisher.start()
        await publisher.stop(drain: true)
        #expect(publisher.acknowledgedCount == 500, "\(logged.lines)")
        #expect(spool.isDrained)
        #expect(try await subscriber.wait(timeout: 10) { _ in Self.received(subscriber, topic: "test/device/samples").count >= 500 })
        #expect(Self.received(subscriber, topic: "test/device/samples") == Array(0..<500))
        #expect(subscriber.text.contains("test/status online"))
        try await broker.stop()
    }

    @Test func aBrokerStopLosesNothingAndTheWaitBacksOff() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let id = "subscriber-\(UUID().uuidString.prefix(8))"
        var subscriber = try broker.subscribe("test/#", id: id)
        try await Task.sleep(for: .milliseconds(500))
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spool = try MessageSpool(directory: folder + "/spool", segmentBytes: 4096)
        let logged = Log()
        let publisher = try MQTTPublisher(
            spool: spool, options: MQTTOptions(host: "127.0.0.1", port: broker.port, clientID: "publisher-2"),
            statusTopic: nil, log: { logged.add($0) })
        try publisher.start()
        for i in 0..<200 { try spool.append(topic: "test/a", bytes: Self.message(i)) }
        #expect(try await subscriber.wait(timeout: 10) { _ in Self.received(subscriber, topic: "test/a").count >= 200 })
        // The broker goes away: the messages wait in the spool, the publisher tries again, backing off.
        try await broker.stop()
        for i in 200..<600 { try spool.append(topic: "test/a", bytes: Self.message(i)) }
        try await Task.sleep(for: .seconds(2))
        #expect(!publisher.isConnected && publisher.lastProblem != nil)
        #expect(spool.pendingBytes > 0)
        // Back: the persistent subscriber gets what was queued for it, and the publisher sends the rest.
        try await broker.start()
        subscriber.stop()
        subscriber = try broker.subscribe("test/#", id: id)
        defer { subscriber.stop() }
        await publisher.stop(drain: true)
        #expect(spool.isDrained)
        #expect(try await subscriber.wait(timeout: 15) { _ in Set(Self.received(subscriber, topic: "test/a")).count >= 400 })
        let firstRun = Set(0..<200)
        let after = Set(Self.received(subscriber, topic: "test/a"))
        // Every message of the outage arrived (some of the first 200 again, as QoS 1 allows).
        #expect(Set(200..<600).isSubset(of: after), "missing: \(Set(200..<600).subtracting(after).sorted().prefix(10)); \(logged.lines)")
        #expect(after.isSubset(of: firstRun.union(200..<600)))
        #expect(logged.lines.contains { $0.contains("trying again in") }, "\(logged.lines)")
        try await broker.stop()
    }
}

/// Log lines collected from the publisher's thread.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [String] = []
    func add(_ line: String) { lock.withLock { collected.append(line) } }
    var lines: [String] { lock.withLock { collected } }
}
