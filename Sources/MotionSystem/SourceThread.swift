#if canImport(Glibc)
import Glibc
#endif

/// A thread of its own for a source whose reads block (a trace on a pipe or a slow disk), as a `TaskExecutor`:
/// the producer task prefers it, so a read that waits holds this thread, never one of the few threads of Swift
/// concurrency's cooperative pool that every other task of the process needs.
///
/// Jobs run in the order they were enqueued. The thread sleeps on a condition variable while it has none, and
/// ends after ``stop()`` once the jobs enqueued before are done.
package final class SourceThread: TaskExecutor, @unchecked Sendable {
    // The mutex guards `jobs` and `stopped` (hence `@unchecked Sendable`).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var jobs: [UnownedJob] = []
    private var stopped = false

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
        var thread = pthread_t()
        // The thread holds the executor until it ends.
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<SourceThread>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(status == 0, "pthread_create failed with \(status)")
        pthread_detach(thread)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Lets the thread end once its jobs are done.
    package func stop() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    private func run() {
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !stopped { pthread_cond_wait(condition, mutex) }
            if jobs.isEmpty {
                pthread_mutex_unlock(mutex)
                return
            }
            let job = jobs.removeFirst()
            pthread_mutex_unlock(mutex)
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
