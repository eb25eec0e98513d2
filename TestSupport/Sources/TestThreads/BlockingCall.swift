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
/// At most ``concurrentRuns`` calls of `run` run at once; the others wait without holding a
/// thread. Hundreds of children started together only slow each other on a small machine, and every descriptor
/// they hold lengthens `/proc/self/fd`, which Foundation's `Process.run()` reads with a buffer over-read before
/// swift-corelibs-foundation#5472 (a crash seen here with 270 children at once).
public enum BlockingCall {
    /// The name of the threads, which debuggers show.
    public static let threadName = "blocking call"

    /// How many `run` calls run at once: twice the cores, at least 4.
    public static let concurrentRuns = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)

    private static let slots = AsyncSlots(count: concurrentRuns)

    /// Runs `body` on a new thread while the calling task is suspended, and returns what it returns.
    public static func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await slots.acquire()
        defer { slots.release() }
        return await withCheckedContinuation { continuation in
            start { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on a new thread while the calling task is suspended, and returns what it returns or throws.
    public static func run<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        await slots.acquire()
        defer { slots.release() }
        return try await withCheckedThrowingContinuation { continuation in
            start { continuation.resume(with: Swift.Result { try body() }) }
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
}

/// `count` slots taken and given back in order, waited for without holding a thread.
private final class AsyncSlots: @unchecked Sendable {
    /// `NSLock` guards `free` and `waiters`: hence `@unchecked`.
    private let lock = NSLock()
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        free = count
    }

    func acquire() async {
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

    func release() {
        let next = lock.withLock {
            if waiters.isEmpty {
                free += 1
                return nil as CheckedContinuation<Void, Never>?
            }
            return waiters.removeFirst()  // the slot passes to the next waiter
        }
        next?.resume()
    }
}
