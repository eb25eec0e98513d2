#if canImport(Glibc)
import Glibc
#endif

/// A value protected by a `pthread_mutex_t`: the shared state of swift-motion's runtime objects
/// (`final class …: Sendable` holding one of these).
///
/// Why not `Synchronization.Mutex`: on Linux a contended `Mutex` is taken inside the kernel (`FUTEX_LOCK_PI`),
/// which ThreadSanitizer cannot see, so `swift test --sanitize=thread` reports every contended critical section
/// as a data race and real races drown in the noise. ThreadSanitizer intercepts `pthread_mutex_lock`, so with
/// this lock its reports are real. The cost is one heap block per lock; locking costs the same.
///
/// Rules as for `Mutex`: keep critical sections short, never call user code or resume continuations inside
/// ``withLock(_:)``, never lock again from inside (the mutex is not recursive).
package final class LockedState<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    /// Creates a lock protecting `state`.
    package init(_ state: sending State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    package func withLock<Result, E: Error>(_ body: (inout State) throws(E) -> Result) throws(E) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
