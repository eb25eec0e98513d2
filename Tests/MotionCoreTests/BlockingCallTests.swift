import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestThreads

/// `BlockingCall` (TestSupport/): the tests' blocking calls run on threads of their own, a bounded number at once,
/// with the asynchronous signals blocked.
@Suite struct BlockingCallTests {
    struct Failure: Error, Equatable {}

    @Test func runReturnsWhatTheBodyReturnsOrThrows() async throws {
        #expect(await BlockingCall.run { 6 * 7 } == 42)
        await #expect(throws: Failure()) { try await BlockingCall.run { () throws -> Int in throw Failure() } }
    }

    @Test func theBodyRunsWithTheAsynchronousSignalsBlocked() async {
        let (blocked, faultsOpen) = await BlockingCall.run { () -> (Bool, Bool) in
            var mask = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &mask)
            let blocked = [SIGCHLD, SIGINT, SIGTERM, SIGPIPE, SIGALRM].allSatisfy { sigismember(&mask, $0) == 1 }
            let faultsOpen = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT].allSatisfy { sigismember(&mask, $0) == 0 }
            return (blocked, faultsOpen)
        }
        #expect(blocked, "an asynchronous signal could interrupt a read with EINTR")
        #expect(faultsOpen, "a crash must still be reported")
    }

    /// Twice the limit of bodies that block until released: exactly the limit run, the others wait (holding no
    /// thread), and every one runs once the first are released. A limit of its own: the shared one is also taken
    /// by the other tests running meanwhile.
    /// What the blocked bodies of `atMostTheLimitRunAtOnceAndTheOthersWaitTheirTurn` count.
    final class Counters: Sendable {
        let running = Atomic<Int>(0)
        let mostAtOnce = Atomic<Int>(0)
        let started = Atomic<Int>(0)
        let release = DispatchSemaphore(value: 0)
    }

    @Test func atMostTheLimitRunAtOnceAndTheOthersWaitTheirTurn() async {
        let limit = 3
        let calls = BlockingCall.Limit(limit)
        let counters = Counters()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<(2 * limit) {
                group.addTask {
                    await calls.run {
                        let now = counters.running.add(1, ordering: .sequentiallyConsistent).newValue
                        _ = counters.mostAtOnce.max(now, ordering: .sequentiallyConsistent)
                        counters.started.add(1, ordering: .sequentiallyConsistent)
                        counters.release.wait()
                        counters.running.subtract(1, ordering: .sequentiallyConsistent)
                    }
                }
            }
            // Wait (at most 30 s, a hang guard) until `limit` have started, then give the others their chance to
            // start too, which they must not take.
            let deadline = ContinuousClock.now + .seconds(30)
            while counters.started.load(ordering: .sequentiallyConsistent) < limit && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            try? await Task.sleep(for: .milliseconds(100))
            #expect(counters.started.load(ordering: .sequentiallyConsistent) == limit)
            for _ in 0..<(2 * limit) { counters.release.signal() }
        }
        #expect(counters.started.load(ordering: .sequentiallyConsistent) == 2 * limit)
        #expect(counters.mostAtOnce.load(ordering: .sequentiallyConsistent) == limit)
    }

    @Test func startedWorkIsJoined() async {
        let counters = Counters()
        let done = await BlockingCall.run { () -> Bool in
            let started = BlockingCall.start { counters.started.add(1, ordering: .sequentiallyConsistent) }
            started.join()
            return counters.started.load(ordering: .sequentiallyConsistent) == 1
        }
        #expect(done)
    }

    @Test func waitForExitWaitsForTheProcess() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 3"]
        try process.run()
        await process.waitForExit()
        #expect(!process.isRunning)
        #expect(process.terminationStatus == 3)
    }
}
