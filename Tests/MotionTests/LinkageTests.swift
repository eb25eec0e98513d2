import Foundation
import MotionCore
import MotionTrace
import TestThreads
import Testing

/// A program that uses `MotionManager` on a trace links only what it imports: the backends are providers in
/// their own modules (`Docs/Architecture.md`), so `Examples/TraceOnly` needs neither libiio, libudev nor
/// libsystemd.
@Suite("Linkage of a trace-only program")
struct LinkageTests {
    /// The folder of the built products (this test binary's, or the one above its `.xctest` bundle).
    static let products: URL = {
        var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        if directory.pathExtension == "xctest" { directory = directory.deletingLastPathComponent() }
        return directory
    }()

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The shared libraries `ldd` says `binary` loads (their names: `libiio.so.0`, …).
    static func sharedLibraries(of binary: URL) async throws -> [String] {
        let output = try await run("/usr/bin/ldd", [binary.path])
        return output.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
            .map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// Runs `executable arguments` in the package's folder, expects it to exit 0, and returns its stdout.
    static func run(_ executable: String, _ arguments: [String]) async throws -> String {
        let (status, output) = try await Process.output(
            of: executable, arguments, in: packageRoot, mergingStandardError: false)
        #expect(status == 0, "\(executable) \(arguments) exited \(status)")
        return output
    }

    static let backends = ["libiio", "libudev", "libsystemd"]

    @Test("The trace-only example links none of libiio, libudev, libsystemd; motionctl, which reads devices, links them")
    func traceOnlyLinksNoBackend() async throws {
        let example = Self.products.appendingPathComponent("motion-trace-only")
        let libraries = try await Self.sharedLibraries(of: example)
        #expect(libraries.contains { $0.hasPrefix("libswiftCore") || $0.hasPrefix("libc.so") }, "\(libraries)")
        for backend in Self.backends {
            #expect(!libraries.contains { $0.hasPrefix(backend) }, "\(example.lastPathComponent) loads \(backend)")
        }
        // The same check sees them where they are.
        let motionctl = try await Self.sharedLibraries(of: Self.products.appendingPathComponent("motionctl"))
        for backend in Self.backends {
            #expect(motionctl.contains { $0.hasPrefix(backend) }, "motionctl should load \(backend): \(motionctl)")
        }
    }

    @Test("The trace-only example replays the shipped recording through MotionManager: one update per accelerometer row")
    func traceOnlyRuns() async throws {
        let recording = "Recordings/broad-slow-rotation-excerpt.csv"
        let reader = try TraceReader(path: Self.packageRoot.appendingPathComponent(recording).path)
        var rows = 0
        var last = 0.0
        while let sample = try reader.next() {
            guard sample.acceleration != nil else { continue }
            rows += 1
            last = sample.timestamp
        }
        let output = try await Self.run(Self.products.appendingPathComponent("motion-trace-only").path, [recording])
        #expect(output == "\(rows) accelerometer updates; the last at t = \(last) s\n")
    }
}
