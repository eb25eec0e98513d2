import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionStore
import MotionTesting
import TestFiles
import Testing

/// `MotionHistory.pedometerData(from:to:)` and `activities(from:to:)`: Core Motion's pedometer and activity queries,
/// answered from a recorded walk.
@Suite struct HistoryPedometerTests {
    /// Unix time of the recording's t = 0.
    static let origin = 1_700_000_000.0

    /// The simulator's walk (1 s still, 20 s at 1.9 steps/s, 1 s still; 100 Hz) recorded as `motiond --history`
    /// would: the accelerometer every 0.02 s (50 Hz), into a new store; returns its directory.
    static func recordedWalk() async throws -> String {
        let directory = ScratchFolder.path("history-steps")
        let samples = Array(try Simulation(scenario: .walking(), options: SimulationOptions(rate: 100, seed: 3)))
        let manager = try MotionManager(source: .samples(samples, pacing: .asFastAsConsumed))
        let store = try MotionStore(directory: directory, clock: .offset(origin))
        let count = try await manager.record(into: store)
        try store.close()
        #expect(count > 1_000)
        return directory
    }

    /// The steps a pedometer counts on the recorded accelerometer read back whole, with their lengths.
    static func stepsReadBack(_ history: MotionHistory) async throws -> [(t: Double, length: Double)] {
        var pedometer = Pedometer<Double>()
        var steps: [(t: Double, length: Double)] = []
        for try await batch in history.accelerometerData(from: -.infinity, to: .infinity) {
            for reading in batch where pedometer.update(reading.acceleration.vector, at: reading.timestamp) > 0 {
                for i in 0..<pedometer.detector.newSteps {
                    steps.append((pedometer.detector.newStepTime(i), pedometer.newStepLength))
                }
            }
        }
        return steps
    }

    @Test func aQueryCountsTheStepsInItsRangeAsAPedometerRunningAllAlong() async throws {
        let directory = try await Self.recordedWalk()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = MotionHistory(directory: directory)
        let all = try await Self.stepsReadBack(history)
        // 20 s at 1.9 steps/s, recorded at 50 Hz.
        #expect(abs(all.count - 38) <= 2, "\(all.count) steps")

        let whole = try await history.pedometerData(from: Self.origin, to: Self.origin + 30)
        #expect(whole.numberOfSteps == all.count)
        #expect(abs(whole.distance - all.reduce(0) { $0 + $1.length }) < 1e-9)
        #expect(whole.startTime == all.first?.t && whole.endTime == all.last?.t)

        // Seconds 8 to 15 of the walk: the steps there, also those a confirmation after 15 s would add (none: the
        // walk is confirmed by then), and none from before 8 s, which the lead has counted.
        let (start, end) = (Self.origin + 8, Self.origin + 15)
        let window = try await history.pedometerData(from: start, to: end)
        let expected = all.filter { $0.t >= start && $0.t <= end }
        #expect(window.numberOfSteps == expected.count)
        #expect(abs(window.numberOfSteps - 13) <= 1, "7 s at 1.9 steps/s: \(window.numberOfSteps)")
        #expect(abs(window.distance - expected.reduce(0) { $0 + $1.length }) < 1e-9)
        #expect(window.startTime.map { $0 >= start } == true && window.endTime.map { $0 <= end } == true)
        // Stepping at 15 s: the cadence then.
        #expect(
            window.currentCadence.map { abs($0 - 1.9) < 0.1 } == true, "\(String(describing: window.currentCadence))")

        // The walk's last 4 s: fewer steps than a confirmation needs, counted because the walk was confirmed in the
        // lead before the range.
        let tail = try await history.pedometerData(from: Self.origin + 17, to: Self.origin + 30)
        let tailSteps = all.filter { $0.t >= Self.origin + 17 }
        #expect(tail.numberOfSteps == tailSteps.count)
        #expect((5...9).contains(tail.numberOfSteps), "4 s at 1.9 steps/s: \(tail.numberOfSteps)")

        // After the walk (it ends at 21 s, the recording at 22 s): no steps, and no cadence at 30 s.
        let after = try await history.pedometerData(from: Self.origin + 25, to: Self.origin + 30)
        #expect(after.numberOfSteps == 0 && after.currentCadence == nil && after.currentPace == nil, "\(after)")
        #expect(tail.currentCadence == nil, "the range ends 9 s after the walk: \(tail)")

        // Before the walk: nothing.
        let still = try await history.pedometerData(from: Self.origin, to: Self.origin + 0.9)
        #expect(still.numberOfSteps == 0 && still.distance == 0 && still.startTime == nil)
    }

    @Test func aQueryGivesTheActivityInForceAtItsStartThenItsChanges() async throws {
        let directory = try await Self.recordedWalk()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = MotionHistory(directory: directory)
        // Seconds 14 to 18: walking since before 14 s, no change.
        let walking = try await history.activities(from: Self.origin + 14, to: Self.origin + 18)
        #expect(walking.map(\.kind) == [.walking], "\(walking)")
        #expect(walking.first.map { $0.timestamp < Self.origin + 14 } == true)
        // The whole recording: walking is reported once the walk is confirmed.
        let all = try await history.activities(from: Self.origin, to: Self.origin + 30)
        #expect(all.contains { $0.kind == .walking }, "\(all)")
        #expect(all.allSatisfy { $0.timestamp >= Self.origin - MotionHistory.queryLead })
    }

    /// The activities the engine reports on the recorded accelerometer read back whole, with `configuration`.
    static func activitiesReadBack(_ history: MotionHistory, _ configuration: MotionConfiguration) async throws
        -> [MotionActivity]
    {
        var processor = MotionProcessor(configuration: configuration, request: .init(activity: true))
        var changes: [MotionActivity] = []
        for try await batch in history.accelerometerData(from: -.infinity, to: .infinity) {
            for reading in batch {
                processor.process(MotionSample(timestamp: reading.timestamp, acceleration: reading.acceleration))
                if let change = processor.outputs.activity { changes.append(change) }
            }
        }
        return changes
    }

    /// The query answers as the engine does with the same configuration: its step settings too, which the
    /// classifier's walking rests on (a walk confirmed after 16 steps instead of 10 is reported later).
    @Test func aQueryUsesTheConfigurationAsTheEngineDoes() async throws {
        let directory = try await Self.recordedWalk()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = MotionHistory(directory: directory)
        var slow = MotionConfiguration()
        slow.steps = .init(confirmationSteps: 16)
        let (start, end) = (Self.origin, Self.origin + 30)
        let queried = try await history.activities(from: start, to: end, configuration: slow)
        let engine = try await Self.activitiesReadBack(history, slow).filter { $0.timestamp <= end }
        #expect(queried == engine, "\(queried) against \(engine)")
        let walking = { (activities: [MotionActivity]) in activities.first { $0.kind == .walking }?.timestamp }
        let byDefault = try await history.activities(from: start, to: end)
        let (late, early) = (String(describing: walking(queried)), String(describing: walking(byDefault)))
        #expect(
            walking(queried).flatMap { late in walking(byDefault).map { late > $0 + 2 } } == true,
            "walking at \(late) with 16 steps, \(early) with 10")
    }

    @Test func aCancelledQueryStopsWithCancelled() async throws {
        let directory = try await Self.recordedWalk()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let history = MotionHistory(directory: directory)
        let codes = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            var codes: [MotionError.Code?] = []
            do throws(MotionError) {
                _ = try await history.pedometerData(from: Self.origin, to: Self.origin + 30)
                codes.append(nil)
            } catch { codes.append(error.code) }
            do throws(MotionError) {
                _ = try await history.activities(from: Self.origin, to: Self.origin + 30)
                codes.append(nil)
            } catch { codes.append(error.code) }
            return codes
        }.value
        #expect(codes == [MotionError.Code.cancelled, .cancelled])
    }

    @Test func aBadRangeIsAnInvalidArgument() async throws {
        let history = MotionHistory(directory: ScratchFolder.path("no-history"))
        for (start, end) in [(2.0, 1.0), (.nan, 1.0), (0.0, .infinity)] {
            await #expect(throws: MotionError.self) { try await history.pedometerData(from: start, to: end) }
            do {
                _ = try await history.activities(from: start, to: end)
                Issue.record("\(start) to \(end) was accepted")
            } catch {
                #expect(error.code == .invalidArgument, "\(error)")
            }
        }
        // A store that does not exist is the store's error, not an empty answer.
        await #expect(throws: MotionError.self) { try await history.pedometerData(from: 0, to: 1) }
    }
}
