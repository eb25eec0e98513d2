internal import CLibIIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Suspends tasks until file descriptors become readable or a deadline passes, with one `epoll` thread for the
/// whole process.
///
/// This is how capture waits on an IIO buffer's poll fd (and a udev monitor's socket) inside the async runtime:
/// the waiting task is suspended, no thread is blocked on its behalf, and nothing polls or sleeps in a loop.
/// The thread blocks in `epoll_wait` and wakes only when a registered descriptor is ready, a deadline passes,
/// or a new wait is registered.
///
/// Each wait registers its descriptors with `EPOLLONESHOT` and removes them when it ends. A descriptor that
/// epoll cannot watch (a regular file, `EPERM`) counts as readable at once, as `poll(2)` would say.
/// A descriptor may be in only one wait at a time.
///
/// The reactor is also a `TaskExecutor`: a task that prefers it (``IIOCapture/executor``) runs its jobs on the
/// reactor thread, so when data arrives that one thread wakes, resumes the task and runs it until its next
/// wait, with no hand-off to another thread: one wake-up per batch.
final class Reactor: TaskExecutor, Sendable {
    static let shared = Reactor()

    private struct Waiter {
        var fds: [Int32]
        var deadline: UInt64?
        var continuation: CheckedContinuation<[Int32], any Error>
        var ready: [Int32] = []
    }

    private struct State {
        var nextToken: UInt64 = 1
        var waiters: [UInt64: Waiter] = [:]
        var cancelledEarly: Set<UInt64> = []
        var jobs: [UnownedJob] = []
        var thread: pthread_t?
    }

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = Mutex(State())

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
    func wait(readable fds: [Int32], until deadline: UInt64? = nil) async throws -> [Int32] {
        let token = state.withLock { state in
            defer { state.nextToken += 1 }
            return state.nextToken
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int32], any Error>) in
                register(token: token, fds: fds, deadline: deadline, continuation: continuation)
            }
        } onCancel: {
            cancel(token: token)
        }
    }

    private func register(
        token: UInt64, fds: [Int32], deadline: UInt64?, continuation: CheckedContinuation<[Int32], any Error>
    ) {
        enum Outcome {
            case waiting
            case ready([Int32])
            case cancelled
            case failed(Int32)
        }
        let outcome: Outcome = state.withLock { state in
            if state.cancelledEarly.remove(token) != nil { return .cancelled }
            var immediatelyReady: [Int32] = []
            var registered: [Int32] = []
            for fd in fds {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLONESHOT.rawValue
                event.data.u64 = token << 32 | UInt64(UInt32(bitPattern: fd))
                if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 {
                    registered.append(fd)
                } else if errno == EPERM {
                    immediatelyReady.append(fd)  // a regular file: always readable
                } else {
                    let code = errno
                    for fd in registered { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
                    return .failed(code)
                }
            }
            if !immediatelyReady.isEmpty || (deadline.map { $0 <= monotonicNanoseconds() } ?? false) {
                for fd in registered { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
                return .ready(immediatelyReady)
            }
            state.waiters[token] = Waiter(fds: registered, deadline: deadline, continuation: continuation)
            return .waiting
        }
        switch outcome {
        case .waiting:
            if deadline != nil { wakeThread() }  // the thread recomputes its timeout
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
            for fd in waiter.fds { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
            return waiter
        }
        waiter?.continuation.resume(throwing: CancellationError())
    }

    /// Runs `job` on the reactor thread (TaskExecutor). From the reactor thread itself (a task resumed by it)
    /// the job runs before the next `epoll_wait`, without waking anything.
    func enqueue(_ job: consuming ExecutorJob) {
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
            let count = epoll_wait(epollFD, events, Int32(capacity), timeout)
            if count < 0 && errno != EINTR { continue }
            var finished: [(CheckedContinuation<[Int32], any Error>, [Int32])] = []
            state.withLock { state in
                for i in 0..<max(Int(count), 0) {
                    let data = events[i].data.u64
                    let token = data >> 32
                    if token == 0 {
                        var value: UInt64 = 0
                        _ = read(wakeFD, &value, 8)
                        continue
                    }
                    state.waiters[token]?.ready.append(Int32(bitPattern: UInt32(truncatingIfNeeded: data)))
                }
                let now = monotonicNanoseconds()
                for (token, waiter) in state.waiters where !waiter.ready.isEmpty || (waiter.deadline ?? .max) <= now {
                    state.waiters[token] = nil
                    for fd in waiter.fds { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
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

/// Nanoseconds on `CLOCK_MONOTONIC`.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// Seconds on `CLOCK_BOOTTIME`: the clock of live samples (see `Docs/Conventions.md`).
func boottimeSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_BOOTTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}
