import MotionAlgorithms
import MotionCore

/// One user's grid of sample times at the rate they may read without the high-rate right (25 Hz): each of their
/// raw and device-motion streams keeps only the samples on it, so all of them together never carry more than
/// 25 Hz of motion, however many streams they open and however their grids would fall (`Docs/Service.md`, "Rate
/// rights").
///
/// Every stream asks about the same device samples, each in time order but at its own pace: a sample time is
/// decided once, by an ``UpdateIntervalGate`` at 0.04 s, when the first stream asks, and the times kept are
/// remembered (the last ``memory`` of them) for the streams that ask later. A stream that asks about a sample
/// older than the memory gets `false`: nothing is ever admitted twice in different ways.
final class SharedRateGrid: Sendable {
    /// Kept sample times remembered for slower streams: 10 s at 25 Hz.
    static let memory = 256

    private struct State {
        var gate: UpdateIntervalGate
        /// The sample times kept, oldest first, at most ``memory``.
        var kept: [Double] = []
        var start = 0
        var latestDecided = -Double.infinity
    }

    private let state: LockedState<State>

    /// A grid at `interval` seconds (the high-rate interval, 0.04 s).
    init(interval: Double) {
        state = LockedState(State(gate: UpdateIntervalGate(interval: interval)))
    }

    /// Whether the sample at `timestamp` (seconds) is on the grid.
    func admits(_ timestamp: Double) -> Bool {
        state.withLock { state in
            if timestamp > state.latestDecided {
                state.latestDecided = timestamp
                guard state.gate.admit(at: timestamp) else { return false }
                if state.kept.count < Self.memory {
                    state.kept.append(timestamp)
                } else {
                    state.kept[state.start] = timestamp
                    state.start = (state.start + 1) % Self.memory
                }
                return true
            }
            // Decided already: kept or not. The ring is in time order from `start`.
            let count = state.kept.count
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                if state.kept[(state.start + middle) % count] < timestamp { low = middle + 1 } else { high = middle }
            }
            return low < count && state.kept[(state.start + low) % count] == timestamp
        }
    }
}
