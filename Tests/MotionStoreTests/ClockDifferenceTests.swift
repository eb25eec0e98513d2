import MotionSystem
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `clockDifference`, which stamps a boottime store's frames with their offset to Unix time: a thread preempted
/// between two clock reads must not shift the offset, or samples 20 ms apart come out 22.5 ms apart in Unix time
/// (seen in `motiond --history` on a loaded machine when the offset was one realtime read minus one boottime read).
@Suite struct ClockDifferenceTests {
    /// Simulated clocks: boottime starts at 5 s and advances 40 ns per read; realtime is boottime plus `offset`.
    /// Before the read numbered `preemptedBefore` (0 is the first), the thread loses the processor for 3 ms.
    static func measure(offset: Int64, preemptedBefore: Set<Int>) -> Int64 {
        var boottime: Int64 = 5_000_000_000
        var reads = 0
        return clockDifference(CLOCK_REALTIME, minus: CLOCK_BOOTTIME) { clock in
            if preemptedBefore.contains(reads) { boottime += 3_000_000 }
            reads += 1
            boottime += 40
            return clock == CLOCK_REALTIME ? boottime + offset : boottime
        }
    }

    static let unixOffset: Int64 = 1_796_237_385_168_216_700

    @Test("Exact when nothing interrupts the reads")
    func exactWithoutPreemption() {
        #expect(Self.measure(offset: Self.unixOffset, preemptedBefore: []) == Self.unixOffset)
        #expect(Self.measure(offset: -123_456_789, preemptedBefore: []) == -123_456_789)
    }

    @Test("A 3 ms preemption before any one read does not move the result", arguments: 0..<15)
    func onePreemption(read: Int) {
        #expect(Self.measure(offset: Self.unixOffset, preemptedBefore: [read]) == Self.unixOffset)
    }

    @Test("Preempted in all but the last try, the last try's bracket is used")
    func preemptedInFourTries() {
        let everyTryButTheLast: Set<Int> = [1, 4, 8, 11]  // between the first two or the last two reads of a try
        #expect(Self.measure(offset: Self.unixOffset, preemptedBefore: everyTryButTheLast) == Self.unixOffset)
    }

    @Test("Preempted in every try, the error stays below half the narrowest bracket")
    func preemptedInEveryTry() {
        let measured = Self.measure(offset: Self.unixOffset, preemptedBefore: [1, 4, 7, 10, 13])
        #expect(abs(measured - Self.unixOffset) <= 1_500_040)
    }
}
