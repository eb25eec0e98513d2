import Foundation
import IIOTestbed
import TestFiles
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `motionctl publish` against a real mosquitto and a persistent subscriber: every sample arrives, through an
/// outage and a SIGKILL, with no hole in the messages' sequence.
@Suite(.serialized, .requires(.mosquitto))
struct PublishCommandTests {
    static let excerpt = "Recordings/broad-slow-rotation-excerpt.csv"

    static func folder() throws -> String { try ScratchFolder.folder("publish") }

    /// The messages the subscriber printed (`topic` then the payload's lines): each batch's (stream, seq) and its
    /// sample lines.
    static func batches(_ subscriber: ChildProcess) -> [(stream: String, seq: Int, samples: [String])] {
        var result: [(String, Int, [String])] = []
        for line in subscriber.text.split(separator: "\n") {
            if let start = line.range(of: "{\"type\":\"batch\",\"stream\":\"") {
                let rest = line[start.upperBound...]
                guard let quote = rest.firstIndex(of: "\""), let seqRange = rest.range(of: "\"seq\":") else { continue }
                let seq = Int(rest[seqRange.upperBound...].prefix(while: \.isNumber)) ?? -1
                result.append((String(rest[..<quote]), seq, []))
            } else if line.hasPrefix("{\"type\":\"sample\""), !result.isEmpty {
                result[result.count - 1].2.append(String(line))
            }
        }
        return result
    }

    /// Publishes the excerpt at 10 Hz (600 samples) to a fresh broker that a subscriber listens to (`motionctl publish
    /// arguments…`, through `launcher`), waits at most 10 s for the 600 samples to arrive, then hands the command's
    /// result and the subscriber to `check`.
    static func publishExcerpt(
        _ arguments: [String] = [], launcher: [String] = [], check: (CommandResult, ChildProcess) throws -> Void
    ) async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        let subscriber = try broker.subscribe("test/#", id: "sub-\(UUID().uuidString.prefix(8))")
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(500))
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await Motionctl.run(
            [
                "publish", "--trace", Self.excerpt, "--speed", "max", "--interval", "0.1",
                "--broker", "mqtt://127.0.0.1:\(broker.port)", "--topic", "test", "--spool", folder + "/spool",
            ] + arguments, launcher: launcher)
        #expect(try await subscriber.wait(timeout: 10) { _ in Self.batches(subscriber).flatMap(\.samples).count >= 600 })
        try check(result, subscriber)
        try await broker.stop()
    }

    @Test func aTraceArrivesWholeAndTheSpoolEmpties() async throws {
        try await Self.publishExcerpt { result, subscriber in
            #expect(result.status == 0, "\(result.stderr)")
            let batches = Self.batches(subscriber)
            #expect(batches.flatMap(\.samples).count == 600, "60 s at 10 Hz")
            #expect(batches.map(\.seq) == Array(0..<batches.count))
            #expect(Set(batches.map(\.stream)).count == 1)
            #expect(subscriber.text.contains("/status online"))
        }
    }

    /// libmosquitto's own loop (`mosquitto_loop`) uses `select`, which refuses descriptors from 1024 on: a publisher
    /// in a process with many files open (motiond with many clients, a fleet simulated in one process) never
    /// connected. With 1,100 descriptors open before it starts, its socket above 1024, everything still arrives.
    @Test func aSocketAbove1024Works() async throws {
        let opener = """
            ulimit -n 4096 || { echo 'cannot raise the open-files limit to 4096' >&2; exit 99; }
            for i in $(seq 1100); do exec {fd}</dev/null; done
            [ "$fd" -gt 1100 ] || { echo "descriptor $fd: not above 1100" >&2; exit 99; }
            exec "$@"
            """
        try await Self.publishExcerpt(["--drain-timeout", "20"], launcher: ["/bin/bash", "-c", opener, "bash"]) {
            result, subscriber in
            #expect(result.status == 0, "\(result.stderr)")
            #expect(Self.batches(subscriber).flatMap(\.samples).count == 600)
        }
    }

    /// No broker and no time to wait: the command ends at once with the data in the spool (it once waited for ever,
    /// its drain undoing the stop).
    @Test(.timeLimit(.minutes(1))) func aZeroDrainTimeoutEndsAtOnce() async throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let result = try await Motionctl.run([
            "publish", "--trace", Self.excerpt, "--speed", "max", "--interval", "1", "--drain-timeout", "0",
            "--broker", "mqtt://127.0.0.1:\(MosquittoBroker.freePort())", "--topic", "test", "--spool", folder + "/spool",
        ])
        #expect(result.status == 74, "\(result.stderr)")
        #expect(result.stderr.contains("within 0.0 s") && result.stderr.contains("bytes wait in"), "\(result.stderr)")
    }

    @Test func anOutageAndASIGKILLLoseNothing() async throws {
        let broker = try MosquittoBroker()
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spool = folder + "/spool"
        let target = ["--broker", "mqtt://127.0.0.1:\(broker.port)", "--topic", "test", "--spool", spool]
        // No broker: the whole excerpt goes into the spool; the acknowledgements do not come in 1 s: a failure that says where the data waits.
        let spooled = try await Motionctl.run(
            ["publish", "--trace", Self.excerpt, "--speed", "max", "--interval", "0.1", "--drain-timeout", "1"] + target)
        #expect(spooled.status != 0, "\(spooled.stderr)")
        #expect(spooled.stderr.contains("bytes wait in \(spool)"), "\(spooled.stderr)")
        // A second run, killed with SIGKILL while it spools in real time (still no broker).
        let killed = try RunningMotionctl(
            ["publish", "--trace", Self.excerpt, "--speed", "realtime", "--interval", "0.1"] + target)
        try await Task.sleep(for: .seconds(3))
        kill(killed.process.processIdentifier, SIGKILL)
        _ = try await killed.exitStatus(timeout: 10)

        // The broker and a subscriber come; draining sends both runs' messages.
        try await broker.start()
        let subscriber = try broker.subscribe("test/#", id: "sub-\(UUID().uuidString.prefix(8))")
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(500))
        let drained = try await Motionctl.run(["publish"] + target)
        #expect(drained.status == 0, "\(drained.stderr)")
        #expect(try await subscriber.wait(timeout: 10) { _ in Self.batches(subscriber).flatMap(\.samples).count >= 600 })
        let batches = Self.batches(subscriber)
        let streams = Dictionary(grouping: batches, by: \.stream)
        #expect(streams.count == 2, "\(streams.keys)")
        // Each run's messages are all there, in order, without a hole: the first run's 600 samples, and the killed
        // run's samples up to its last spooled message.
        for (_, messages) in streams {
            #expect(messages.map(\.seq) == Array(0..<messages.count))
        }
        let counts = streams.values.map { $0.flatMap(\.samples).count }.sorted()
        #expect(counts.last == 600 && (counts.first ?? 0) > 0 && (counts.first ?? 0) < 600, "\(counts)")
        try await broker.stop()
    }
}

/// A broker that wants a password: a wrong one is refused with the broker's reason and the data stays spooled;
/// the right one (from a file) sends it all.
@Suite(.serialized, .requires(.mosquitto))
struct PublishCredentialsTests {
    @Test func aWrongPasswordKeepsSpoolingAndTheRightOneSendsIt() async throws {
        let broker = try MosquittoBroker()
        try await broker.requirePassword(user: "robot", password: "s3cret")
        try await broker.start()
        let folder = try PublishCommandTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "wrong\n".write(toFile: folder + "/wrong", atomically: true, encoding: .utf8)
        try "s3cret\n".write(toFile: folder + "/right", atomically: true, encoding: .utf8)
        let target = [
            "--broker", "mqtt://127.0.0.1:\(broker.port)", "--topic", "test", "--spool", folder + "/spool",
            "--username", "robot",
        ]
        let refused = try await Motionctl.run(
            ["publish", "--trace", PublishCommandTests.excerpt, "--speed", "max", "--interval", "1", "--drain-timeout", "2",
             "--password-file", folder + "/wrong"] + target)
        #expect(refused.status == 74, "\(refused.stderr)")
        #expect(refused.stderr.contains("the broker refused the connection"), "\(refused.stderr)")
        #expect(refused.stderr.contains("bytes wait in"), "\(refused.stderr)")
        // The password never appears in what the command prints.
        #expect(!refused.stderr.contains("wrong") && !refused.stderr.contains("s3cret"))

        let subscriber = try ChildProcess(
            "/usr/bin/mosquitto_sub",
            ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "test/#", "-q", "1", "-u", "robot", "-P", "s3cret", "-v"],
            environment: [:])
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(500))
        let sent = try await Motionctl.run(["publish", "--password-file", folder + "/right"] + target)
        #expect(sent.status == 0, "\(sent.stderr)")
        #expect(try await subscriber.wait(timeout: 10) { _ in PublishCommandTests.batches(subscriber).flatMap(\.samples).count >= 60 })
        #expect(PublishCommandTests.batches(subscriber).flatMap(\.samples).count == 60, "60 s at 1 Hz")
        try await broker.stop()
    }
}

/// `mqtts://` against a broker with a certificate from a test CA: verified with `--ca-file`, refused without it.
@Suite(.serialized, .requires(.mosquitto))
struct PublishTLSTests {
    @Test func theBrokerIsVerifiedWithTheGivenCA() async throws {
        let broker = try MosquittoBroker()
        let ca = try await broker.requireTLS()
        try await broker.start()
        let folder = try PublishCommandTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = ["--broker", "mqtts://127.0.0.1:\(broker.port)", "--topic", "test", "--spool", folder + "/spool"]
        // Without the CA (the system's CAs do not know it): no connection, the data kept.
        let unverified = try await Motionctl.run(
            ["publish", "--trace", PublishCommandTests.excerpt, "--speed", "max", "--interval", "1", "--drain-timeout", "2"]
                + target)
        #expect(unverified.status == 74, "\(unverified.stderr)")
        #expect(unverified.stderr.contains("bytes wait in"), "\(unverified.stderr)")
        #expect(unverified.stderr.contains("TLS error"), "the reason is named: \(unverified.stderr)")

        let subscriber = try ChildProcess(
            "/usr/bin/mosquitto_sub",
            ["-h", "127.0.0.1", "-p", "\(broker.port)", "-t", "test/#", "-q", "1", "--cafile", ca, "-v"], environment: [:])
        defer { subscriber.stop() }
        try await Task.sleep(for: .milliseconds(500))
        let verified = try await Motionctl.run(["publish", "--ca-file", ca] + target)
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(try await subscriber.wait(timeout: 10) { _ in PublishCommandTests.batches(subscriber).flatMap(\.samples).count >= 60 })
        #expect(PublishCommandTests.batches(subscriber).flatMap(\.samples).count == 60, "\(subscriber.text.prefix(300))")
        try await broker.stop()
    }
}
