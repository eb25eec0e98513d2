import Foundation

#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestThreads

/// `.computeBound` (TestSupport/): the tests it marks run off Swift's cooperative pool, on ComputeThreads.
@Suite struct ComputeBoundTraitTests {
    /// Whether the caller runs on one of ComputeThreads' threads.
    static func onAComputeThread() -> Bool { ComputeThreads.shared.isCurrentThread() }

    @Test(.computeBound) func aMarkedTestRunsOnAComputeThread() {
        #expect(Self.onAComputeThread(), "ran on \(Thread.current.name ?? "an unnamed thread")")
    }

    @Test(.computeBound) func aMarkedTestRunsOnlyWhenTheCPUIsIdle() {
        var policy: Int32 = -1
        var parameters = sched_param()
        #expect(pthread_getschedparam(pthread_self(), &policy, &parameters) == 0)
        #expect(policy == ComputeThreads.schedIdle)
    }

    @Test(.computeBound, arguments: 0..<4) func eachCaseOfAMarkedTestRunsOnAComputeThread(_ index: Int) {
        #expect(Self.onAComputeThread(), "case \(index)")
    }

    @Test(.computeBound) func anAsyncMarkedTestResumesOnAComputeThread() async throws {
        try await Task.sleep(for: .milliseconds(1))
        #expect(Self.onAComputeThread())
    }

    @Test func anUnmarkedTestRunsOnThePool() {
        #expect(!Self.onAComputeThread())
    }

    /// On a suite, the trait applies to every test in it.
    @Suite(.computeBound) struct MarkedSuite {
        @Test func aTestOfAMarkedSuiteRunsOnAComputeThread() {
            #expect(ComputeBoundTraitTests.onAComputeThread())
        }
    }
}
