import Foundation
import IIOTestbed
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Progress on stderr for long work (`record`, `--evaluate`): shown on a terminal (here a pseudo-terminal),
/// rate-limited and erased at the end; nothing at all when stderr is not a terminal.
@Suite struct ProgressTests {
    /// What `motionctl arguments` wrote with its stderr on a pseudo-terminal and its stdout on a pipe, and how long
    /// it ran (s).
    static func runOnTerminal(_ arguments: [String]) async throws -> (status: Int32, terminal: String, stdout: String, seconds: Double) {
        try await Motionctl.limit(for: arguments).run { try runOnTerminalBlocking(arguments) }
    }

    private static func runOnTerminalBlocking(_ arguments: [String]) throws -> (
        status: Int32, terminal: String, stdout: String, seconds: Double
    ) {
        // Raw mode: no newline translation, so the bytes read are the bytes written.
        let (master, slave) = try PseudoTerminal.open()
        defer { close(master) }
        let process = Process()
        process.executableURL = Motionctl.executable
        process.arguments = arguments
        process.currentDirectoryURL = Motionctl.packageRoot
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        let started = Date()
        try process.run()
        close(slave)  // the child's copy is the only one left: reading the master ends (EIO) when it exits
        nonisolated(unsafe) var outData = Data()
        let outReader = BlockingCall.start { outData = out.fileHandleForReading.readDataToEndOfFile() }
        var terminal = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(master, &buffer, buffer.count)
            if count > 0 {
                terminal.append(contentsOf: buffer[0..<count])
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        outReader.join()
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(started)
        return (
            process.terminationStatus, String(decoding: terminal, as: UTF8.self),
            String(decoding: outData, as: UTF8.self), seconds
        )
    }

    /// The progress updates on a terminal's output: the texts between a carriage return and an erase-line.
    static func updates(_ terminal: String) -> [String] {
        terminal.components(separatedBy: "\r").dropFirst().compactMap { part in
            part.hasSuffix("\u{1B}[K") ? String(part.dropLast(3)) : nil
        }
    }

    @Test(arguments: ["shake", "orientation"])
    func evaluateShowsProgressOnATerminalOnly(command: String) async throws {
        let arguments = [command, "--evaluate", "--scenario-seeds", "1000-1039"]
        let onTerminal = try await Self.runOnTerminal(arguments)
        #expect(onTerminal.status == 0)
        let updates = Self.updates(onTerminal.terminal)
        let shown = updates.filter { !$0.isEmpty }
        #expect(shown.first == "motionctl: evaluating: scenario 1 of 40 (seed 1000)")
        #expect(shown.allSatisfy { $0.hasPrefix("motionctl: evaluating: scenario ") && $0.hasSuffix(")") })
        // At most 4 updates a second (the first at once), however many scenarios.
        #expect(Double(shown.count) <= onTerminal.seconds * 4 + 1, "\(shown.count) updates in \(onTerminal.seconds) s")
        // Erased at the end: the last thing on the terminal is an empty line.
        #expect(onTerminal.terminal.hasSuffix("\r\u{1B}[K"))
        #expect(updates.last == "")
        // The report is the same, and with stderr on a pipe there is no progress at all.
        let piped = try await Motionctl.run(arguments)
        #expect(piped.status == 0)
        #expect(piped.stderr.isEmpty)
        #expect(piped.stdout == onTerminal.stdout)
        #expect(piped.stdout.contains("40 scenarios"))
    }

    /// `record` tells where it records, then after batches how far it is; not on a pipe. The device gets four batches
    /// 0.3 s apart, so at least one update after the first (4 a second at most) shows samples.
    @Test(.requires(.umockdevPreload)) func recordShowsProgressOnATerminalOnly() async throws {
        try await Testbed.run { testbed in
            let path = try testbed.add(EmulatedDevice.lis3dh().bufferOnly)
            try testbed.add(.lis3dhTrigger)
            let file = try Motionctl.temporaryPath(name: "recording.csv")
            // 0.65 s of device time: the recording ends inside the fourth batch (scans 60…79, 10 ms apart).
            async let recording = Self.runOnTerminal(
                ["record", "--device", "auto", "--rate", "100", "--output", file, "--duration", "0.65"])
            var enabled = false
            for _ in 0..<500 where !enabled {
                enabled = testbed.attribute(path, "buffer/enable") == "1"
                if !enabled { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(enabled)
            for batch in 0..<4 {
                try testbed.feed("/dev/iio:device0", scans(batch * 20..<batch * 20 + 20))
                try await Task.sleep(for: .milliseconds(300))
            }
            let onTerminal = try await recording
            #expect(onTerminal.status == 0, "\(onTerminal.terminal)")
            let shown = Self.updates(onTerminal.terminal).filter { !$0.isEmpty }
            #expect(shown.first == "motionctl: recording to \(file): waiting for samples…")
            let progress = shown.dropFirst()
            #expect(!progress.isEmpty, "\(shown)")
            #expect(progress.allSatisfy { $0.hasPrefix("motionctl: recording to \(file): ") && $0.contains(" s of 0.65 s, ") && $0.hasSuffix(" samples") }, "\(shown)")
            #expect(onTerminal.terminal.hasSuffix("\r\u{1B}[K"))
            #expect(try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").filter { $0.first?.isNumber == true }.count == 65)

            let second = try Motionctl.temporaryPath(name: "recording.csv")
            async let piped = Motionctl.run(["record", "--device", "auto", "--rate", "100", "--output", second, "--duration", "0.15"])
            for _ in 0..<500 where testbed.attribute(path, "buffer/enable") != "1" {
                try await Task.sleep(for: .milliseconds(20))
            }
            try testbed.feed("/dev/iio:device0", scans(100..<120))
            let result = try await piped
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }
    }
}
