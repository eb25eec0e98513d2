public import Testing

import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs each test it applies to on threads of its own, off Swift's cooperative thread pool.
///
/// A synchronous test that computes for seconds (a simulation, an accuracy sweep) holds the pool thread it runs
/// on until it returns. The pool has one thread per core, so on a two-core machine two such tests starve every
/// other test in the process: a test that waits for real time (a producer's first sample, a device's batch) then
/// times out, although nothing is wrong with the code it tests. Under this trait a test's body runs on
/// ``ComputeThreads/shared`` instead, at idle priority, and the pool stays free for the tests that wait.
/// On a machine whose cores other programs keep busy, these tests wait for them.
///
/// Apply it to a suite (it applies to every test and test case in it) or to one test: `@Suite(.computeBound)`.
public struct ComputeBoundTrait: TestTrait, SuiteTrait, TestScoping {
    /// Applies to every test in a suite, and to the suites nested in it.
    public var isRecursive: Bool { true }

    /// Each test case gets the scope: a suite's own setup does not compute.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    /// Runs `function` with ``ComputeThreads/shared`` as its preferred executor.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ComputeThreads.shared) {
            try await function()
        }
    }
}

extension Trait where Self == ComputeBoundTrait {
    /// The test computes for a long time without waiting: run it off Swift's cooperative pool (``ComputeBoundTrait``).
    public static var computeBound: Self { ComputeBoundTrait() }
}

/// A task executor with a fixed set of threads, one per core, that run jobs in the order they arrive.
///
/// The threads live as long as the process: test processes only.
public final class ComputeThreads: TaskExecutor, @unchecked Sendable {
    /// One thread per active core (at least two), started on first use.
    public static let shared = ComputeThreads(threadCount: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// Linux's `SCHED_IDLE` policy (`<linux/sched.h>`), which Glibc declares only under `_GNU_SOURCE`.
    public static let schedIdle: Int32 = 5

    /// The start of the threads' names (`compute-bound 1`, …), which debuggers show.
    public static let threadNamePrefix = "compute-bound"

    /// Guards `jobs` and `next`; `@unchecked Sendable` rests on it.
    private let condition = NSCondition()
    // The queue: `jobs[next...]` wait; emptied when drained.
    private var jobs: [UnownedJob] = []
    private var next = 0
    /// The threads, as they started (a thread's name is no proof: libdispatch renames a thread that runs its
    /// work, such as a `DispatchQueue.sync` from a test).
    private var threads: [pthread_t] = []

    private init(threadCount: Int) {
        for index in 0..<threadCount {
            let thread = Thread {
                Thread.current.name = "\(Self.threadNamePrefix) \(index + 1)"  // set before start, it is lost on Linux
                self.condition.lock()
                self.threads.append(pthread_self())
                self.condition.unlock()
                Self.lowerPriority()
                self.runJobs()
            }
            thread.start()
        }
    }

    /// Puts the calling thread in Linux's `SCHED_IDLE` class (sched(7)): it runs only when no other thread of
    /// the machine wants the CPU, so these threads take only the time the tests that wait for real time leave.
    /// Any thread may lower its own class; if it fails, the thread keeps its normal priority.
    private static func lowerPriority() {
        #if os(Linux)
        var parameters = sched_param(sched_priority: 0)
        _ = pthread_setschedparam(pthread_self(), schedIdle, &parameters)
        #endif
    }

    /// Whether the calling thread is one of these.
    public func isCurrentThread() -> Bool {
        let current = pthread_self()
        condition.lock()
        defer { condition.unlock() }
        return threads.contains { pthread_equal($0, current) != 0 }
    }

    /// Queues `job` for the first thread that is free.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while next == jobs.count { condition.wait() }
            let job = jobs[next]
            next += 1
            if next == jobs.count {  // drained: start the queue over
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
