import MotionCore
import MotionIIO
import MotionSystem
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, one mechanism for every command: the first signal asks the running command to finish its
/// current line and exit cleanly; a second one exits at once with status 128 + signal number. SIGPIPE is
/// ignored, so a closed output pipe surfaces as an EPIPE write error, which ends the command quietly.
///
/// The handler (`sigaction`, async-signal-safe) records the signal in an atomic, which synchronous loops read
/// (``isRequested``), and writes a byte to a pipe. A thread blocked on the pipe's other end runs the action set by
/// ``SignalCancellation/run(_:)``: it cancels the running task, so a command waiting for a device or a clock stops
/// at once. Nothing polls.
enum Interruption {
    private static let requested = Atomic<Int32>(0)
    private static let action = Mutex<(@Sendable () -> Void)?>(nil)
    private static let installation = Mutex(false)

    /// Installs the handlers and starts the watching thread. Call before the first sample; later calls do nothing.
    static func install() {
        let first = installation.withLock { installed in
            defer { installed = true }
            return !installed
        }
        guard first else { return }
        signal(SIGPIPE, SIG_IGN)
        _ = requested.load(ordering: .relaxed)  // initialised here, never first in the handler
        // Readable from the first signal on (never read): what a thread blocked in `poll` watches to end at once
        // (`StandardInputPump`).
        var wake: [Int32] = [-1, -1]
        if pipe(&wake) == 0 {
            for fd in wake {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, O_NONBLOCK)
            }
            (signalWakeRead, signalWakeWrite) = (wake[0], wake[1])
        }
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            signalPipeWrite = fds[1]
            startWatching(fds[0])
        }
        for sig in [SIGINT, SIGTERM] {
            var handler = sigaction()
            handler.__sigaction_handler.sa_handler = { number in
                if Interruption.requested.exchange(number, ordering: .relaxed) != 0 { _exit(128 + number) }
                var byte: UInt8 = 1
                _ = write(signalPipeWrite, &byte, 1)
                _ = write(signalWakeWrite, &byte, 1)
            }
            sigemptyset(&handler.sa_mask)
            handler.sa_flags = SA_RESTART
            sigaction(sig, &handler, nil)
        }
        // A parent may have blocked these (some test runners and service managers do); we must receive them.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// `true` once SIGINT or SIGTERM has arrived.
    static var isRequested: Bool { requested.load(ordering: .relaxed) != 0 }

    /// A descriptor that becomes readable when SIGINT or SIGTERM arrives and stays so (a pipe the handler writes
    /// to and nobody reads), for a thread that waits in `poll` to wake at once; -1 before ``install()``.
    static var wakeDescriptor: Int32 { signalWakeRead }

    /// Sets what the watching thread runs when a signal arrives (`nil`: nothing).
    fileprivate static func setAction(_ newAction: (@Sendable () -> Void)?) {
        action.withLock { $0 = newAction }
    }

    /// The watching thread: a plain pthread blocked in `read` on the pipe, never a cooperative thread.
    private static func startWatching(_ fd: Int32) {
        var thread = pthread_t()
        let context = UnsafeMutableRawPointer(bitPattern: Int(fd) + 1)
        pthread_create(
            &thread, nil,
            { context in
                let fd = Int32(Int(bitPattern: context) - 1)
                var byte: UInt8 = 0
                while case .success(let count) = SystemErrno.retryingInterrupts({ read(fd, &byte, 1) }), count > 0 {
                    let current = Interruption.action.withLock { $0 }
                    current?()
                }
                return nil
            }, context)
        pthread_detach(thread)
    }
}

/// The pipe the signal handler writes to (set once, before the handlers are installed).
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1
/// The pipe that stays readable once a signal has arrived (set once, before the handlers are installed).
nonisolated(unsafe) private var signalWakeRead: Int32 = -1
nonisolated(unsafe) private var signalWakeWrite: Int32 = -1

/// Runs an async body and cancels it when SIGINT or SIGTERM arrives (``Interruption``), so a command waiting for
/// device data stops at once (the capture then disables the device's buffer).
enum SignalCancellation {
    static func run(_ body: @escaping @Sendable () async throws -> Void) async throws(MotionError) {
        try await value(body)
    }

    /// As ``run(_:)``, returning the body's value.
    static func value<Value: Sendable>(
        _ body: @escaping @Sendable () async throws -> Value
    ) async throws(MotionError) -> Value {
        Interruption.install()
        // On the capture executor: the thread that sees the device data also writes it out (one wake-up per batch).
        let task = Task(executorPreference: Reactor.shared) { try await body() }
        Interruption.setAction { task.cancel() }
        if Interruption.isRequested { task.cancel() }
        // The caller's cancellation too (a test, a command that ends it): the body runs in a task of its own.
        let result = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
        Interruption.setAction(nil)
        switch result {
        case .success(let value): return value
        case .failure(let error): throw error as? MotionError ?? MotionError(.cancelled, "interrupted")
        }
    }
}
