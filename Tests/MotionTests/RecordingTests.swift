import Foundation
import Motion
import MotionAlgorithms
import MotionCore
import MotionTesting
import MotionTrace
import TestFiles
import Testing

/// `MotionManager.record(to:…)`: any source written as a canonical trace, never destroying a file.
@Suite struct RecordingTests {
    static func read(_ path: String) throws -> (TraceReader, [MotionSample]) {
        let reader = try TraceReader(path: path)
        var samples: [MotionSample] = []
        while let sample = try reader.next() { samples.append(sample) }
        return (reader, samples)
    }

    static func outputPath(_ name: String) -> String {
        ScratchFolder.path("record-\(name)", suffix: ".csv")
    }

    @Test func aTraceIsRecordedValueForValue() async throws {
        let samples = indexedSamples(count: 500, magnetometer: true)
        let input = Self.outputPath("input")
        let writer = try TraceOutputFile(path: input, existing: .refuse)
        let trace = try TraceWriter(
            fileDescriptor: writer.fileDescriptor, name: input, format: .csv, sensors: .all)
        for sample in samples { try trace.write(sample) }
        try trace.flush()
        try writer.commit()
        writer.close()

        let manager = try MotionManager(source: .trace(input, pacing: .asFastAsConsumed))
        let output = Self.outputPath("copy")
        var metadata = TraceMetadata()
        metadata["source"] = "test"
        let count = try await manager.record(to: output, metadata: metadata)
        #expect(count == 500)
        let (reader, recorded) = try Self.read(output)
        #expect(recorded == samples)
        #expect(reader.sensors == .all)
        #expect(reader.metadata["source"] == "test")
    }

    @Test func chosenSensorsAndTheFilter() async throws {
        let samples = indexedSamples(count: 200)
        let manager = try MotionManager(
            source: .samples(samples, pacing: .asFastAsConsumed),
            configuration: MotionConfiguration(sensorFilter: .lowPass(.factor(0.5))))
        let output = Self.outputPath("accel")
        #expect(try await manager.record(to: output, sensors: .accelerometer) == 200)
        let (reader, recorded) = try Self.read(output)
        #expect(reader.sensors == .accelerometer)
        #expect(recorded.allSatisfy { $0.rotationRate == nil })
        // y = 0.5·x + 0.5·y_prev from zero: the first z is −0.5, then −0.75, …
        #expect(recorded.prefix(3).map { $0.acceleration!.z } == [-0.5, -0.75, -0.875])
    }

    @Test func anExistingFileIsKeptUnlessReplacing() async throws {
        let output = Self.outputPath("existing")
        try "keep me\n".write(toFile: output, atomically: true, encoding: .utf8)
        let manager = try MotionManager(source: .samples(indexedSamples(count: 10), pacing: .asFastAsConsumed))
        await #expect(throws: MotionError.self) { try await manager.record(to: output) }
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "keep me\n")
        let other = try MotionManager(source: .samples(indexedSamples(count: 10), pacing: .asFastAsConsumed))
        #expect(try await other.record(to: output, existing: .replace) == 10)
        #expect(try Self.read(output).1.count == 10)
        let folder = (output as NSString).deletingLastPathComponent
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".partial") && $0.contains("existing") }
        #expect(leftovers.isEmpty)
    }

    /// A live source records until the task is cancelled; what was written is at the path.
    @Test func aLiveSourceRecordsUntilCancelled() async throws {
        let (stream, continuation) = AsyncStream<MotionSample>.makeStream()
        let manager = try MotionManager(source: .stream(stream))
        let output = Self.outputPath("live")
        let recording = Task { try await manager.record(to: output, sensors: [.accelerometer, .gyroscope]) }
        for sample in indexedSamples(count: 50) { continuation.yield(sample) }
        #expect(await eventually { ((try? Self.read(output).1.count) ?? 0) == 50 })
        recording.cancel()
        #expect(try await recording.value == 50)
        #expect(try Self.read(output).1 == indexedSamples(count: 50))
        continuation.finish()
    }

    /// A source that fails after some samples: they are kept, and the error is thrown.
    @Test func aFailingSourceKeepsWhatWasWritten() async throws {
        let (stream, continuation) = AsyncThrowingStream<MotionSample, any Error>.makeStream()
        let manager = try MotionManager(source: .stream(stream))
        let output = Self.outputPath("failing")
        for sample in indexedSamples(count: 20) { continuation.yield(sample) }
        continuation.finish(throwing: MotionError(.disconnected, "unplugged"))
        await #expect(throws: MotionError.self) {
            try await manager.record(to: output, sensors: [.accelerometer, .gyroscope])
        }
        #expect(try Self.read(output).1 == indexedSamples(count: 20))
    }
}

/// `MotionSource.sequence`: a simulation (or any sequence) replayed as a trace, iterated as the replay goes.
@Suite struct SequenceSourceTests {
    @Test func aSimulationIsReplayedSampleForSample() async throws {
        let simulation = try Simulation(
            scenario: .shakeSequence(seed: 2), options: SimulationOptions(rate: 100, sensors: .all, seed: 5))
        let expected = Array(simulation)
        let manager = try MotionManager(source: .sequence(simulation, pacing: .asFastAsConsumed))
        #expect(manager.isGyroAvailable && manager.isMagnetometerAvailable)
        var delivered: [MotionSample] = []
        for try await sample in manager.sampleUpdates() { delivered.append(sample) }
        #expect(delivered.count == expected.count)
        #expect(delivered == expected)
        // The recording of it reads back the same.
        let again = try MotionManager(source: .sequence(simulation, pacing: .asFastAsConsumed))
        let path = RecordingTests.outputPath("simulation")
        #expect(try await again.record(to: path) == expected.count)
        #expect(try RecordingTests.read(path).1 == expected)
    }
}
