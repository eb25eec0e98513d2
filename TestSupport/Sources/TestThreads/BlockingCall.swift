public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Blocking calls in tests (waiting for a child process, reading its pipes to the end, building a locale), each
/// on a thread of its own.
///
/// On Linux, Swift's tasks and `DispatchQueue.global()` share libdispatch's one pool of worker threads, and the
/// pool adds threads only slowly when its threads block. A test that blocks a task's thread, or queues blocking
/// work on a global queue, so holds a thread every other test's tasks need: in a full `swift test` with a dozen
/// `motionctl` children read to their end on global-queue threads, no task ran for 26 s, and tests waiting for
/// real time (a producer's next sample) timed out although nothing was wrong with the code they test.
///
/// At most ``concurrentRuns`` calls of `run` run at once (``Limit``); the others wait without holding a
/// thread. Hundreds of children started together only slow each other on a small machine, and every descriptor
/// they hold lengthens `/proc/self/fd`, which Foundation's `Process.run()` reads with a buffer over-read before
/// swift-corelibs-foundation#5472 (a crash seen here with 270 children at once).
public enum BlockingCall {
    /// The name of the threads, which debuggers show.
    public static let threadName = "blocking call"

    /// How many `run` calls run at once: four times the cores, at least 8.
    public static let concurrentRuns = max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)

    /// The limit every `run` shares.
    public static let shared = Limit(concurrentRuns)

    /// No limit: for a call that must start at once, such as a command reading a device a test feeds in real
    /// time while it holds the testbed (queued behind the other tests' commands, it would start too late).
    public static let unbounded = Limit(Int.max)

    /// Runs `body` on a new thread while the calling task is suspended, and returns what it returns.
    public static func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await shared.run(body)
    }

    /// Runs `body` on a new thread while the calling task is suspended, and returns what it returns or throws.
    public static func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await shared.run(body)
    }

    /// At most `count` bodies running at once; the others wait their turn, in order, without holding a thread.
    public final class Limit: @unchecked Sendable {
        /// `NSLock` guards `free` and `waiters`: hence `@unchecked`.
        private let lock = NSLock()
        private var free: Int
        private var waiters: [CheckedContinuation<Void, Never>] = []

        /// A limit of `count` (at least 1) bodies at once.
        public init(_ count: Int) {
            precondition(count >= 1, "A limit of \(count) bodies would run none.")
            free = count
        }

        /// Runs `body` on a new thread once a turn is free, and returns what it returns.
        public func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
            await acquire()
            defer { release() }
            return await withCheckedContinuation { continuation in
                BlockingCall.start { continuation.resume(returning: body()) }
            }
        }

        /// Runs `body` on a new thread once a turn is free, and returns what it returns or throws.
        public func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
            await acquire()
            defer { release() }
            return try await withCheckedThrowingContinuation { continuation in
                BlockingCall.start { continuation.resume(with: Swift.Result { try body() }) }
            }
        }

        private func acquire() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let acquired = lock.withLock {
                    guard free > 0 else {
                        waiters.append(continuation)
                        return false
                    }
                    free -= 1
                    return true
                }
                if acquired { continuation.resume() }
            }
        }

        private func release() {
            let next = lock.withLock {
                if waiters.isEmpty {
                    free += 1
                    return nil as CheckedContinuation<Void, Never>?
                }
                return waiters.removeFirst()  // the turn passes to the next waiter
            }
            next?.resume()
        }
    }

    /// Starts `body` on a new thread at once, for work done beside a blocking call on the calling thread (one pipe
    /// read while another is): ``Started/join()`` waits for it.
    ///
    /// The thread blocks the asynchronous signals, as libdispatch's threads do, so that none interrupts its reads
    /// (`FileHandle.readDataToEndOfFile()` traps on `EINTR`).
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Started {
        let started = Started()
        let thread = Thread {
            Thread.current.name = threadName  // set before start, it is lost on Linux
            var signals = sigset_t()
            sigfillset(&signals)
            for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT] { sigdelset(&signals, fault) }
            pthread_sigmask(SIG_SETMASK, &signals, nil)  // the creating thread's mask is inherited: set it whole
            body()
            started.done.signal()
        }
        thread.start()
        return started
    }

    /// A thread started by ``BlockingCall/start(_:)``.
    public final class Started: Sendable {
        fileprivate let done = DispatchSemaphore(value: 0)

        /// Blocks until the thread's work has returned. Call it once, from a thread of its own (never from a task).
        public func join() {
            done.wait()
        }
    }
}

extension Process {
    /// Waits for the process to exit, on a thread of its own (``BlockingCall``): `waitUntilExit()` without holding
    /// a thread Swift's tasks need.
    public func waitForExit() async {
        await BlockingCall.run { self.waitUntilExit() }
    }

    /// Runs `executable arguments` to its end, with an empty stdin, on a thread of its own (``BlockingCall``), and
    /// returns its exit status and its stdout (and its stderr too, interleaved, with `mergingStandardError`;
    /// otherwise stderr is the test process's).
    public static func output(
        of executable: String, _ arguments: [String], in directory: URL? = nil, mergingStandardError: Bool
    ) async throws -> (status: Int32, output: String) {
        try await BlockingCall.run {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let directory { process.currentDirectoryURL = directory }
            let pipe = Pipe()
            process.standardOutput = pipe
            if mergingStandardError { process.standardError = pipe }
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: output, as: UTF8.self))
        }
    }
}
