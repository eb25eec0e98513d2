internal import CSystemd
package import MotionCore
import MotionSystem

#if canImport(Glibc)
import Glibc
#endif

/// A thread that runs an sd-event loop: the one thread on which a ``DBusConnection`` and everything bound to it
/// (``LoopBound``) is used, since sd-bus objects are not thread-safe.
///
/// Other threads hand it work with ``execute(_:)`` (a queue and an `eventfd` that wakes the loop). Signals
/// given to ``handleSignals(_:_:)`` are taken on this thread (`sd_event_add_signal`), so a service can stop
/// cleanly on `SIGTERM`; block them in every thread first with ``blockSignals(_:)``.
package final class DBusEventLoop: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var running = true
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// What only the loop thread touches.
    final class Context: @unchecked Sendable {
        var event: OpaquePointer?
    }

    private let state = LockedState(State())
    private let wake: Int32
    private let threadID: LockedState<pthread_t?> = LockedState(nil)
    let context = Context()

    /// Starts the loop's thread. Throws `ioFailure` when the thread, the `eventfd` or the sd-event loop cannot be created.
    package init() throws(MotionError) {
        wake = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        guard wake >= 0 else {
            throw MotionError(.ioFailure, "cannot create the event loop's eventfd", underlying: SystemErrno.current())
        }
        let ready = LockedState<Int32?>(nil)
        let started = OneShotSignal()
        let box = Unmanaged.passRetained(StartBox(loop: self, ready: ready, started: started))
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            let box = Unmanaged<StartBox>.fromOpaque(argument!).takeRetainedValue()
            box.loop.run(box)
            return nil
        }, box.toOpaque())
        guard created == 0 else {
            box.release()
            close(wake)
            throw MotionError(.ioFailure, "cannot start the event loop's thread", underlying: SystemErrno(created))
        }
        pthread_detach(thread)
        started.wait()
        if let failure = ready.withLock({ $0 }), failure < 0 {
            throw MotionError(.ioFailure, "cannot create the sd-event loop", underlying: SystemErrno(-failure))
        }
    }

    /// `true` on the loop's thread.
    package var inEventLoop: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    /// Traps unless called on the loop's thread.
    package func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must run on the D-Bus event loop's thread", file: file, line: line)
    }

    /// Runs `body` on the loop's thread, after the work queued before it (work queued before the loop ends
    /// still runs). Returns `false`, and drops `body`, once the loop has ended.
    @discardableResult
    package func execute(_ body: @escaping @Sendable () -> Void) -> Bool {
        let queued = state.withLock { state -> Bool in
            guard state.running else { return false }
            state.jobs.append(body)
            return true
        }
        if queued {
            var one: UInt64 = 1
            _ = write(wake, &one, 8)
        }
        return queued
    }

    /// Runs `body` on the loop's thread and returns its result. Throws `cancelled` when the loop has ended.
    package func submit<Result: Sendable>(
        _ body: @escaping @Sendable () throws(MotionError) -> Result
    ) async throws(MotionError) -> Result {
        let outcome: Swift.Result<Result, MotionError> = await withCheckedContinuation { continuation in
            let queued = execute {
                do throws(MotionError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
            if !queued {
                continuation.resume(returning: .failure(MotionError(.cancelled, "the D-Bus event loop has ended")))
            }
        }
        return try outcome.get()
    }

    /// Runs `body` on the loop's thread and waits for its result, blocking the calling thread (not the loop's).
    /// Throws `cancelled` when the loop has ended.
    package func submitAndWait<Result: Sendable>(
        _ body: @escaping @Sendable () throws(MotionError) -> Result
    ) throws(MotionError) -> Result {
        precondition(!inEventLoop, "submitAndWait would wait for itself on the loop's thread")
        let outcome = LockedState<Swift.Result<Result, MotionError>?>(nil)
        let done = OneShotSignal()
        let queued = execute {
            do throws(MotionError) {
                let value = try body()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        guard queued else { throw MotionError(.cancelled, "the D-Bus event loop has ended") }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }

    /// Ends the loop after the current work; ``wait()`` then returns.
    package func stop() {
        execute { [context] in
            if let event = context.event { sd_event_exit(event, 0) }
        }
    }

    /// Suspends until the loop has ended (``stop()``, a handled signal's handler that stops it, or a bus that
    /// exits on disconnection).
    package func wait() async {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Bool in
                guard state.running else { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// Blocks `signals` in the calling thread and in the threads it creates afterwards: call it first thing in
    /// `main`, before any thread exists, so that only ``handleSignals(_:_:)`` receives them.
    package static func blockSignals(_ signals: [Int32]) {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals { sigaddset(&mask, signal) }
        pthread_sigmask(SIG_BLOCK, &mask, nil)
    }

    /// Runs `handler` on the loop's thread when one of `signals` arrives (they must be blocked in every thread:
    /// ``blockSignals(_:)``). Throws `ioFailure` when sd-event refuses a signal.
    package func handleSignals(_ signals: [Int32], _ handler: @escaping @Sendable (Int32) -> Void) throws(MotionError) {
        precondition(!inEventLoop, "handleSignals waits for the loop: call it from another thread")
        let result = LockedState<Int32>(0)
        let done = OneShotSignal()
        let queued = execute { [context] in
            defer { done.signal() }
            Self.blockSignals(signals)
            let box = Unmanaged.passRetained(SignalBox(handler)).toOpaque()
            for signal in signals {
                let status = sd_event_add_signal(context.event, nil, signal, { _, info, userdata in
                    let box = Unmanaged<SignalBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.handler(Int32(bitPattern: info?.pointee.ssi_signo ?? 0))
                    return 0
                }, box)
                if status < 0 {
                    result.withLock { $0 = status }
                    return
                }
            }
        }
        guard queued else { throw MotionError(.cancelled, "the D-Bus event loop has ended") }
        done.wait()
        let status = result.withLock { $0 }
        if status < 0 {
            throw MotionError(
                .ioFailure, "cannot handle signals \(signals) on the event loop", underlying: SystemErrno(-status))
        }
    }

    // MARK: The thread

    private final class StartBox {
        let loop: DBusEventLoop
        let ready: LockedState<Int32?>
        let started: OneShotSignal
        init(loop: DBusEventLoop, ready: LockedState<Int32?>, started: OneShotSignal) {
            self.loop = loop
            self.ready = ready
            self.started = started
        }
    }

    private final class SignalBox {
        let handler: @Sendable (Int32) -> Void
        init(_ handler: @escaping @Sendable (Int32) -> Void) { self.handler = handler }
    }

    private func run(_ start: StartBox) {
        threadID.withLock { $0 = pthread_self() }
        var event: OpaquePointer?
        var status = sd_event_new(&event)
        if status >= 0 {
            status = sd_event_add_io(event, nil, wake, EPOLLIN.rawValue, { _, _, _, userdata in
                let loop = Unmanaged<DBusEventLoop>.fromOpaque(userdata!).takeUnretainedValue()
                loop.drain()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        context.event = event
        start.ready.withLock { $0 = status }
        start.started.signal()
        if status >= 0 { _ = sd_event_loop(event) }
        // Work queued before the end still runs (a `submit` is always answered); later work is refused.
        let (leftover, waiters) = state.withLock { state in
            state.running = false
            defer {
                state.jobs.removeAll()
                state.endWaiters.removeAll()
            }
            return (state.jobs, state.endWaiters)
        }
        for job in leftover { job() }
        context.event = nil
        sd_event_unref(event)
        close(wake)
        for waiter in waiters { waiter.resume() }
    }

    private func drain() {
        var count: UInt64 = 0
        _ = read(wake, &count, 8)
        let jobs = state.withLock { state -> [@Sendable () -> Void] in
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        for job in jobs { job() }
    }
}

/// A value used only on one ``DBusEventLoop``'s thread, passed across threads as `Sendable` (as swift-nio's
/// `NIOLoopBound`): every access checks the thread.
package final class LoopBound<Value>: @unchecked Sendable {
    private var stored: Value
    /// The loop the value belongs to.
    package let loop: DBusEventLoop

    /// Wraps `value`; call on the loop's thread.
    package init(_ value: Value, loop: DBusEventLoop) {
        loop.preconditionInEventLoop()
        self.stored = value
        self.loop = loop
    }

    /// The value; read and written only on the loop's thread.
    package var value: Value {
        get {
            loop.preconditionInEventLoop()
            return stored
        }
        _modify {
            loop.preconditionInEventLoop()
            yield &stored
        }
    }
}

/// A wait for one event from another thread (a `sem_t`), without Dispatch.
final class OneShotSignal: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    init() { sem_init(semaphore, 0, 0) }
    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }
    func signal() { sem_post(semaphore) }
    func wait() { while sem_wait(semaphore) != 0 && errno == EINTR {} }
}
