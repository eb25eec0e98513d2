internal import CMotionSystem
import MotionCore

#if canImport(Glibc)
import Glibc
#endif

/// Suspends tasks until file descriptors become readable (or writable) or a deadline passes, with one `epoll`
/// thread for the whole process.
///
/// This is how capture waits on an IIO buffer's poll fd (and a udev monitor's socket) inside the async runtime:
/// the waiting task is suspended, no thread is blocked on its behalf, and nothing polls or sleeps in a loop.
/// The thread blocks in `epoll_wait` and wakes only when a registered descriptor is ready, a deadline passes,
/// or a new wait is registered.
///
/// A descriptor is registered once, edge-triggered (`EPOLLET`), at its first wait, and stays registered until
/// ``forget(_:)``, which its owner must call before closing it. An edge seen while nobody waits on the
/// descriptor is remembered, so the next wait returns at once. Because edges only come with new data, a reader
/// must read until `EAGAIN` or a short read, or call ``markReadable(_:)`` when it stops early. (Registering it at
/// every wait makes the kernel poll it each time, and a pty with no input waits there for the tty's worker
/// thread: a second wake-up in about 1 batch of 10 at 100 Hz, `Docs/Performance.md`.)
///
/// A descriptor that epoll cannot watch (a regular file, `EPERM`) counts as readable at once, as `poll(2)`
/// would say. A descriptor may be in only one wait at a time.
///
/// The reactor is also a `TaskExecutor`: a task that prefers it (``IIOCapture/executor``) runs its jobs on the
/// reactor thread, so when data arrives that one thread wakes, resumes the task and runs it until its next
/// wait, with no hand-off to another thread: one wake-up per batch.
package final class Reactor: TaskExecutor, Sendable {
    package static let shared = Reactor()

    private struct Waiter {
        var fds: [Int32]
        var deadline: UInt64?
        var continuation: CheckedContinuation<[Int32], any Error>
        var ready: [Int32] = []
    }

    /// A registered descriptor: who waits on it, and whether an edge came while nobody did.
    private struct Registration {
        var waiter: UInt64?
        var pendingEdge = false
    }

    private struct State {
        var nextToken: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        var registered: [Int32: Registration] = [:]
        var cancelledEarly: Set<UInt64> = []
        var jobs: [UnownedJob] = []
        var thread: pthread_t?
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = LockedState(State())

    private init() {
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        precondition(epollFD >= 0 && wakeFD >= 0, "epoll or eventfd failed: errno \(errno)")
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0  // token 0: the wake-up eventfd
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, &event) == 0, "epoll_ctl failed: errno \(errno)")
        let thread = ReactorThread(reactor: self)
        thread.start()
    }

    /// Suspends until at least one of `fds` is readable (or hung up, or in error), or until `deadline`
    /// (nanoseconds on `CLOCK_MONOTONIC`) passes.
    ///
    /// - Returns: The descriptors that are ready; empty when the deadline passed first.
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    package func wait(readable fds: [Int32], until deadline: UInt64? = nil) async throws -> [Int32] {
        try await wait(fds, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue, until: deadline)
    }

    /// Suspends until `fd` can be written again (or is hung up, or in error): for a non-blocking socket whose send
    /// gave `EAGAIN`. The waiting task costs nothing until the peer reads.
    ///
    /// A descriptor is registered for the direction of its first wait: one that is only written waits this way.
    /// An edge can also come from a hang-up: write again, and wait again on `EAGAIN`.
    /// - Throws: `CancellationError` when the task is cancelled while waiting.
    package func wait(writable fd: Int32) async throws {
        _ = try await wait([fd], events: EPOLLOUT.rawValue, until: nil)
    }

    private func wait(_ fds: [Int32], events: UInt32, until deadline: UInt64?) async throws -> [Int32] {
        let token = state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int32], any Error>) in
                register(token: token, fds: fds, events: events, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            cancel(token: token)
        }
    }

    private func register(
        token: UInt64, fds: [Int32], events: UInt32, deadline: UInt64?,
        continuation: CheckedContinuation<[Int32], any Error>
    ) {
        enum Outcome {
            case waiting
            case waitingWithDeadline
            case ready([Int32])
            case cancelled
            case failed(Int32)
        }
        let outcome: Outcome = state.withLock { state in
            if state.cancelledEarly.remove(token) != nil { return .cancelled }
            var immediatelyReady: [Int32] = []
            var watched: [Int32] = []
            for fd in fds {
                if state.registered[fd] == nil {
                    var event = epoll_event()
                    event.events = events | EPOLLET.rawValue
                    event.data.u64 = UInt64(UInt32(bitPattern: fd)) + 1  // 0 is the wake-up eventfd
                    if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 {
                        state.registered[fd] = Registration()
                    } else if errno == EPERM {
                        immediatelyReady.append(fd)  // a regular file: always readable
                        continue
                    } else {
                        return .failed(errno)
                    }
                }
                if state.registered[fd]!.pendingEdge {
                    state.registered[fd]!.pendingEdge = false
                    immediatelyReady.append(fd)
                } else {
                    watched.append(fd)
                }
            }
            if !immediatelyReady.isEmpty || (deadline.map { $0 <= monotonicNanoseconds() } ?? false) {
                return .ready(immediatelyReady)
            }
            for fd in watched { state.registered[fd]!.waiter = token }
            state.waiters[token] = Waiter(fds: watched, deadline: deadline, continuation: continuation)
            // From the reactor thread itself, the loop recomputes its timeout before blocking again.
            let onReactorThread = state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
            return deadline != nil && !onReactorThread ? .waitingWithDeadline : .waiting
        }
        switch outcome {
        case .waiting:
            break
        case .waitingWithDeadline:
            wakeThread()  // the thread recomputes its timeout
        case .ready(let fds):
            continuation.resume(returning: fds)
        case .cancelled:
            continuation.resume(throwing: CancellationError())
        case .failed(let code):
            continuation.resume(throwing: ReactorError(errno: code))
        }
    }

    private func cancel(token: UInt64) {
        let waiter: Waiter? = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: token) else {
                state.cancelledEarly.insert(token)
                return nil
            }
            for fd in waiter.fds where state.registered[fd]?.waiter == token { state.registered[fd]!.waiter = nil }
            return waiter
        }
        waiter?.continuation.resume(throwing: CancellationError())
    }

    /// Stops watching `fd`; call it before closing the descriptor (its number may be reused).
    package func forget(_ fd: Int32) {
        state.withLock { state in
            guard state.registered.removeValue(forKey: fd) != nil else { return }
            epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        }
    }

    /// Makes the next wait on `fd` return at once: for a reader that stopped before `EAGAIN` (no new edge would
    /// come for the data it left).
    package func markReadable(_ fd: Int32) {
        state.withLock { state in
            if state.registered[fd] != nil { state.registered[fd]!.pendingEdge = true }
        }
    }

    /// Runs `job` on the reactor thread (TaskExecutor). From the reactor thread itself (a task resumed by it)
    /// the job runs before the next `epoll_wait`, without waking anything.
    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let fromOtherThread = state.withLock { state in
            state.jobs.append(unowned)
            return state.thread.map { pthread_equal($0, pthread_self()) == 0 } ?? true
        }
        if fromOtherThread { wakeThread() }
    }

    private func runJobs() {
        while let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func wakeThread() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// The thread's loop: block in `epoll_wait` until something is ready or the nearest deadline.
    fileprivate func run() {
        let capacity = 32
        let events = UnsafeMutablePointer<epoll_event>.allocate(capacity: capacity)
        defer { events.deallocate() }
        state.withLock { $0.thread = pthread_self() }
        while true {
            runJobs()
            let timeout: Int32 = state.withLock { state in
                guard state.jobs.isEmpty else { return 0 }
                guard let nearest = state.waiters.values.compactMap(\.deadline).min() else { return -1 }
                let now = monotonicNanoseconds()
                guard nearest > now else { return 0 }
                return Int32(clamping: (nearest - now + 999_999) / 1_000_000)  // round up to whole ms
            }
            // A failed wait (none is expected) counts as no events: the deadlines are still checked below.
            let count = (try? SystemErrno.retryingInterrupts { epoll_wait(epollFD, events, Int32(capacity), timeout) }
                .get()) ?? 0
            var finished: [(CheckedContinuation<[Int32], any Error>, [Int32])] = []
            state.withLock { state in
                for i in 0..<max(Int(count), 0) {
                    let data = events[i].data.u64
                    if data == 0 {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                        continue
                    }
                    let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: data - 1))
                    guard let registration = state.registered[fd] else { continue }
                    if let token = registration.waiter, state.waiters[token] != nil {
                        state.waiters[token]!.ready.append(fd)
                    } else {
                        state.registered[fd]!.pendingEdge = true  // nobody waits: remembered for the next wait
                    }
                }
                let now = monotonicNanoseconds()
                for (token, waiter) in state.waiters where !waiter.ready.isEmpty || (waiter.deadline ?? .max) <= now {
                    state.waiters[token] = nil
                    for fd in waiter.fds where state.registered[fd]?.waiter == token { state.registered[fd]!.waiter = nil }
                    finished.append((waiter.continuation, waiter.ready))
                }
            }
            for (continuation, ready) in finished { continuation.resume(returning: ready) }
        }
    }
}

/// The reactor's thread (a plain pthread: it blocks in `epoll_wait` and must not take a cooperative thread).
private final class ReactorThread: @unchecked Sendable {
    let reactor: Reactor

    init(reactor: Reactor) {
        self.reactor = reactor
    }

    func start() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(
            &thread, nil,
            { context in
                let owner = Unmanaged<ReactorThread>.fromOpaque(context!).takeRetainedValue()
                owner.reactor.run()
                return nil
            }, context)
        precondition(result == 0, "pthread_create failed: \(result)")
        pthread_detach(thread)
    }
}

/// An `epoll_ctl` failure other than `EPERM`.
struct ReactorError: Error {
    let errno: Int32
}
