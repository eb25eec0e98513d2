import Foundation
import Motion
import MotionCore
import MotionTrace
import Testing

/// A trace's blocking reads run on a thread of the trace's own, never on Swift concurrency's cooperative pool
/// (which has one thread per core: two here).
@Suite struct TraceThreadTests {
    /// Four replays wait on idle pipes (more than the pool has threads); other tasks still run, and each replay
    /// goes on when its pipe delivers.
    @Test func idlePipesDoNotHoldThePool() async throws {
        let count = max(4, ProcessInfo.processInfo.activeProcessorCount * 2)
        var writers: [FileHandle] = []
        var managers: [MotionManager] = []
        for index in 0..<count {
            let path = try temporaryTrace("", name: "idle-\(index)")
            try FileManager.default.removeItem(atPath: path)
            #expect(mkfifo(path, 0o600) == 0)
            // Read-write, so this open does not wait for a reader; the header arrives before the manager reads it.
            let writer = try #require(FileHandle(forUpdatingAtPath: path))
            try writer.write(contentsOf: Data("t,ax,ay,az\n0,0,0,-1\n".utf8))
            writers.append(writer)
            managers.append(try MotionManager(source: .trace(path, pacing: .asFastAsConsumed)))
        }
        let received = Counter()
        let consumers = managers.map { manager in
            Task {
                for try await _ in manager.accelerometerUpdates(interval: 0) { received.add() }
            }
        }
        // Each producer has read the first row and now waits in read(2) on its idle pipe.
        #expect(await eventually { received.value == count })
        // Work on the cooperative pool still runs: a child task on every pool thread, each finishing.
        let finished = await withTaskGroup(of: Int.self) { group in
            for index in 0..<8 { group.addTask { index } }
            return await group.reduce(0) { $0 + $1 }
        }
        #expect(finished == 28)
        for writer in writers {
            try writer.write(contentsOf: Data("0.01,0,0,-1\n".utf8))
            try writer.close()  // the last writer: the replay reads end of file and ends
        }
        for consumer in consumers { try await consumer.value }
        #expect(received.value == 2 * count)
    }
}

/// A thread-safe counter (`LockedState`, which the thread sanitizer understands).
final class Counter: Sendable {
    private let count = LockedState(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// The one pacing rule of replays (`MotionManager`'s and `motionctl`'s).
@Suite struct ReplayScheduleTests {
    @Test func offsetsFromTheFirstSampleDividedByTheFactor() {
        var schedule = ReplaySchedule(factor: 4)
        #expect(schedule.offset(of: 10) == nil)  // the first sample: due at once, anchors the schedule
        #expect(schedule.offset(of: 10) == 0)
        #expect(schedule.offset(of: 12) == 0.5)
        #expect(schedule.offset(of: 9) == 0)  // never before the first
        var realTime = ReplaySchedule(factor: 1)
        _ = realTime.offset(of: -3)
        #expect(realTime.offset(of: 7) == 10)
    }
}
