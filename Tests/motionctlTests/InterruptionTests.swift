import Foundation
import Testing

/// SIGINT and SIGTERM on the trace commands: the first signal ends a paced replay cleanly (status 0, whole lines,
/// a shake in progress cancelled), a second one exits at once with 128 + the signal's number.
@Suite struct InterruptionTests {
    /// A paced replay (the 60 s excerpt in real time) stops at SIGINT with status 0 and whole CSV lines.
    @Test(arguments: ["stream", "attitude", "orientation"])
    func theFirstSignalEndsAPacedReplayCleanly(command: String) async throws {
        let child = try RunningMotionctl([
            command, "--trace", "Recordings/broad-slow-rotation-excerpt.csv", "--speed", "realtime",
        ] + (command == "orientation" ? ["--format", "jsonl"] : []))
        #expect(try await child.wait { catchesInterrupt($0.process.processIdentifier) })
        if command != "orientation" { #expect(try await child.wait { $0.lines.count > 30 }) }
        #expect(try await child.stop(SIGINT) == 0, "\(child.stderr)")
        #expect(child.stdout.isEmpty || child.stdout.hasSuffix("\n"))
        #expect(child.stderr.isEmpty)
        if command != "orientation" { #expect(child.lines.count < 17_000) }
    }

    /// A shake in progress when SIGTERM arrives is reported cancelled (interrupted), then the command ends with 0.
    @Test func aSignalDuringAShakeCancelsIt() async throws {
        let child = try RunningMotionctl([
            "shake", "--trace", "Recordings/simulated-shakes-with-distractors.csv", "--speed", "realtime",
            "--format", "jsonl",
        ])
        // The first shake begins at 1.18 s and ends at 2.04 s (trace time).
        #expect(try await child.wait { $0.stdout.contains("\"phase\":\"began\"") })
        #expect(try await child.stop(SIGTERM) == 0, "\(child.stderr)")
        let last = try #require(child.lines.last)
        #expect(last.contains("\"phase\":\"cancelled\"") && last.contains("\"reason\":\"interrupted\"") || last.contains("\"phase\":\"ended\""))
    }

    /// Reading an idle stdin, the first SIGINT cannot end the command (the read goes on); the second exits with 130.
    @Test func theSecondSignalExitsAtOnce() async throws {
        let process = Process()
        process.executableURL = Motionctl.executable
        process.arguments = ["stream", "--trace", "-"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try input.fileHandleForWriting.write(contentsOf: Data("t,ax,ay,az\n0,0,0,-1\n".utf8))
        let installed = Date().addingTimeInterval(10)
        while !catchesInterrupt(process.processIdentifier) && Date() < installed {
            try await Task.sleep(for: .milliseconds(20))
        }
        // A signal that comes before the replay waits on stdin ends it cleanly (status 0) at its next row: wait
        // until it reads stdin, where the kernel shows it (`/proc/<pid>/task/*/syscall`; at most 10 s).
        let reading = Date().addingTimeInterval(10)
        while !readsStandardInput(process.processIdentifier) && Date() < reading {
            try await Task.sleep(for: .milliseconds(20))
        }
        // Signals sent close together may merge into one; keep sending until the process has gone (at most 10 s).
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline {
            kill(process.processIdentifier, SIGINT)
            try await Task.sleep(for: .milliseconds(100))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try input.fileHandleForWriting.close()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 128 + SIGINT)
    }
}

/// `true` once process `pid` catches SIGINT (its handler is installed): bit SIGINT − 1 of `SigCgt` in
/// `/proc/<pid>/status`.
func catchesInterrupt(_ pid: Int32) -> Bool {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
        let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << UInt64(SIGINT - 1)) != 0
}

/// `true` while a thread of process `pid` is in `read(0, …)`: its stdin (`/proc/<pid>/task/*/syscall` starts with
/// the number of `read` and fd 0). Always `false` on an architecture not listed here (the caller then waits its
/// limit).
func readsStandardInput(_ pid: Int32) -> Bool {
    #if arch(x86_64)
    let read = "0"
    #elseif arch(arm64)
    let read = "63"
    #else
    return false
    #endif
    guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return false }
    return threads.contains { thread in
        (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/syscall", encoding: .utf8))?.hasPrefix("\(read) 0x0 ")
            == true
    }
}
