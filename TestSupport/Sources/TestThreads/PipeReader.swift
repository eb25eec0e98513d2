public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a pipe delivers, collected as it comes by a thread of its own (``BlockingCall/start(_:)``) that reads it
/// to its end: a child process's output while the test goes on.
///
/// It replaces `FileHandle.readabilityHandler`, whose reads run on libdispatch's threads (the ones Swift's tasks
/// need) and whose source is torn down on them when the handler is cleared.
public final class PipeReader: @unchecked Sendable {
    /// `NSLock` guards `bytes` and `ended`: hence `@unchecked`.
    private let lock = NSLock()
    private var bytes = Data()
    private var ended = false
    /// Kept open while the thread reads it.
    private let handle: FileHandle

    /// Starts reading `handle` (the read end of a pipe) until its end: every write end is closed.
    public init(_ handle: FileHandle) {
        self.handle = handle
        let descriptor = handle.fileDescriptor
        BlockingCall.start { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    lock.withLock { bytes.append(contentsOf: buffer[..<count]) }
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break  // the end, or an error that ends the pipe for us
                }
            }
            lock.withLock { ended = true }
        }
    }

    /// The bytes read so far.
    public var data: Data { lock.withLock { bytes } }

    /// The text read so far (UTF-8, invalid bytes replaced).
    public var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

    /// Whether the pipe has ended, so that ``data`` is all it will ever deliver.
    public var isAtEnd: Bool { lock.withLock { ended } }

    /// Waits up to `timeout` seconds for the pipe's end; whether it came.
    public func waitForEnd(timeout: Double) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(timeout))
        while !isAtEnd && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        return isAtEnd
    }
}
