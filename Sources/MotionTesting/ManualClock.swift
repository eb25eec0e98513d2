import MotionCore


/// A clock that moves only when a test tells it to, for replaying recordings deterministically (pass it to
/// `MotionManager(source:configuration:clock:)`).
///
/// Sleepers wake, in deadline order, when ``advance(by:)`` or ``advance(to:)`` reaches their deadline; a
/// cancelled sleeper wakes at once with `CancellationError`. ``sleepers(atLeast:)`` waits until the code under
/// test is blocked on the clock, so a test can advance it without racing.
public final class ManualClock: Clock, Sendable {
    /// An instant: the time since the clock was created.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// The time since the clock's start.
        public var offset: Duration

        /// Creates an instant `offset` after the clock's start.
        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: Int
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID = 0
        var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = LockedState(State())

    /// Creates a clock at offset zero.
    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// The number of tasks sleeping on the clock now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (resumeNow, waiters) = state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                    if deadline <= state.now || Task.isCancelled { return (true, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return (false, Self.satisfiedWaiters(&state))
                }
                waiters.forEach { $0.resume() }
                if resumeNow {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline is reached.
    public func advance(by duration: Duration) {
        precondition(duration >= .zero, "A clock only moves forward, got \(duration).")
        let target = state.withLock { $0.now.advanced(by: duration) }
        advance(to: target)
    }

    /// Moves the clock to `instant` (if it is later than now), waking every sleeper whose deadline is reached.
    public func advance(to instant: Instant) {
        let due = state.withLock { state -> [Sleeper] in
            if instant > state.now { state.now = instant }
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        due.forEach { $0.continuation.resume() }
    }

    /// Suspends until at least `count` tasks are sleeping on the clock.
    public func sleepers(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepers.count >= count { return true }
                state.countWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func satisfiedWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = state.sleepers.count
        let ready = state.countWaiters.filter { $0.count <= count }.map(\.continuation)
        state.countWaiters.removeAll { $0.count <= count }
        return ready
    }
}
