import Foundation
import Testing

import MotionCore
@testable import MotionIIO
import TestFiles

/// `withoutLibiioHighSpeedWarning` (its body, the lock held by the capture) drops exactly libiio's high-speed line from stderr and keeps the rest.
@Suite(.serialized) struct LibiioWarningsTests {
    /// What reaches descriptor 2 while `body` runs, captured in a file. The redirection holds the lock that every
    /// redirection of stderr holds: a device test of this process opening a buffer meanwhile would otherwise restore
    /// stderr under this one, and the captured output would go to the real stderr.
    static func standardError(during body: () -> Void) throws -> String {
        let path = ScratchFolder.path("stderr")
        let file = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(file >= 0)
        standardErrorRedirection.withLock { _ in
            let saved = dup(2)
            dup2(file, 2)
            body()
            dup2(saved, 2)
            close(saved)
        }
        close(file)
        defer { unlink(path) }
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    static func writeToStandardError(_ text: String) {
        _ = text.withCString { write(2, $0, strlen($0)) }
    }

    @Test func dropsOnlyTheHighSpeedLine() throws {
        var result = (result: 0, warned: false)
        let text = try Self.standardError {
            result = withoutLibiioHighSpeedWarningHoldingLock {
                Self.writeToStandardError("before\nWARNING: High-speed mode not enabled\nWARNING: something else\n")
                return 42
            }
            Self.writeToStandardError("after\n")
        }
        #expect(result.result == 42)
        #expect(result.warned)
        // Other tests of this process may write to stderr meanwhile: ours must be there, in order, and whole.
        #expect(text.contains("before\n"))
        #expect(!text.contains("High-speed"))
        let ordered = ["before\n", "WARNING: something else\n", "after\n"].map { text.range(of: $0)?.lowerBound }
        #expect(ordered.allSatisfy { $0 != nil } && ordered == ordered.sorted { $0! < $1! })
    }

    @Test func keepsALargeOutputWhole() throws {
        let line = String(repeating: "x", count: 99) + "\n"
        var warned = true
        let text = try Self.standardError {
            warned = withoutLibiioHighSpeedWarningHoldingLock {
                for _ in 0..<2000 { Self.writeToStandardError(line) }  // 200 kB, more than a pipe holds
            }.warned
        }
        #expect(text.components(separatedBy: line).count - 1 == 2000)
        #expect(!warned)  // no high-speed line among them
    }
}
