import Foundation
import TestFiles
import TestThreads

/// Runs the built `motionctl` binary (next to the test bundle) and captures its output.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

enum Motionctl {
    /// The folder the build products are in: the test binary's own folder.
    static let productsDirectory: URL = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var dir = exe.deletingLastPathComponent()
        // The test binary may sit inside `<name>.xctest/` on some layouts.
        if dir.pathExtension == "xctest" { dir = dir.deletingLastPathComponent() }
        return dir
    }()

    static let executable = productsDirectory.appendingPathComponent("motionctl")

    /// The package's root folder.
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `motionctl arguments`, feeding `stdin` (if any), with `environment` added to this process's, and
    /// waits for it on threads of its own (``BlockingCall``): a test waiting for a child never holds a thread the
    /// other tests' tasks (MotionManager's producers) need. With a `launcher` (a program and its arguments), runs
    /// `launcher… motionctl arguments…`.
    static func run(
        _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:], launcher: [String] = []
    ) async throws -> CommandResult {
        try await limit(for: arguments).run {
            try runBlocking(arguments, stdin: stdin, environment: environment, launcher: launcher)
        }
    }

    /// The limit a command runs under: none for one that reads a live (emulated) device or the service, which its
    /// test feeds in real time while holding the testbed; the shared one for the others.
    static func limit(for arguments: [String]) -> BlockingCall.Limit {
        arguments.contains { $0 == "--device" || $0 == "--service" } ? BlockingCall.unbounded : BlockingCall.shared
    }

    private static func runBlocking(
        _ arguments: [String], stdin: Data?, environment: [String: String], launcher: [String]
    ) throws -> CommandResult {
        let process = Process()
        if let program = launcher.first {
            process.executableURL = URL(fileURLWithPath: program)
            process.arguments = launcher.dropFirst() + [executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = packageRoot
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        _ = ignoringBrokenPipes
        try process.run()
        // Read both pipes to the end before waiting, so a large output cannot block the child.
        // On its own thread, so a child that writes much before reading all its input cannot block; a child that
        // stops reading early (`stream --count`) ends the write with EPIPE, which is not an error here.
        let writer = stdin.map { stdin in
            BlockingCall.start {
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
            }
        }
        nonisolated(unsafe) var errData = Data()
        let errReader = BlockingCall.start { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        errReader.join()
        writer?.join()
        process.waitUntilExit()
        return CommandResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData, as: UTF8.self))
    }

    /// SIGPIPE ignored in the test process, once: a write to a child that has closed its input then fails with
    /// EPIPE instead of killing the tests.
    private static let ignoringBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Writes `text` to a new temporary file and returns its path.
    static func temporaryFile(_ text: String, name: String = "trace.csv") throws -> String {
        let path = try temporaryPath(name: name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A new XDG_CONFIG_HOME holding `text` as the user's settings file (`swift-motion/settings.conf`).
    static func configHome(_ text: String) throws -> String {
        let home = try ScratchFolder.folder("xdg")
        try FileManager.default.createDirectory(atPath: home + "/swift-motion", withIntermediateDirectories: false)
        try text.write(toFile: home + "/swift-motion/settings.conf", atomically: true, encoding: .utf8)
        return home
    }

    /// The path `name` in a new empty folder of the test process's (the file is not created).
    static func temporaryPath(name: String) throws -> String {
        try ScratchFolder.folder("motionctl") + "/" + name
    }
}
