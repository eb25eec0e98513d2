import Foundation
import MotionCore
import Testing

@testable import MotionStore
import TestFiles

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory for one test's store, removed at the end.
func withStoreDirectory<Result>(_ body: (String) throws -> Result) throws -> Result {
    let directory = try ScratchFolder.folder("motion-store")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return try body(directory + "/store")
}

/// Sample `i` at 100 Hz from `start`: accelerometer always, gyroscope every second sample, magnetometer every
/// fifth, values that use every bit of a Double.
func sample(_ i: Int, start: Double = 1000) -> MotionSample {
    let x = Double(i)
    return MotionSample(
        timestamp: start + x / 100,
        acceleration: Acceleration(x: x.squareRoot(), y: -1 / (x + 3), z: .pi * x),
        rotationRate: i % 2 == 0 ? RotationRate(x: 1e-300 * x, y: -x, z: 0.1) : nil,
        magneticField: i % 5 == 0 ? MagneticField(x: 40 + x, y: -x / 7, z: 1e300) : nil)
}

/// Every sample of the store in `directory` in the range.
func readStore(_ directory: String, from start: Double = -.infinity, through end: Double = .infinity) throws -> [MotionSample] {
    var reader = try StoreReader(directory: directory, from: start, through: end)
    return try reader.readAll()
}

func segmentPaths(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("segment-") }.sorted()
        .map { directory + "/" + $0 }
}

@Suite struct MotionStoreTests {
    @Test func crc32cMatchesItsCheckValue() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8]()) == 0)
    }

    @Test func samplesComeBackBitForBitOldestFirst() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
            let written = (0..<2_500).map { sample($0) }
            store.append(contentsOf: written)
            try store.close()
            var reader = try StoreReader(directory: directory)
            var batches = 0
            var read: [MotionSample] = []
            while let batch = try reader.next() {
                batches += 1
                #expect(batch.clockOffset == 1_700_000_000)
                read += batch.samples
            }
            #expect(read == written)
            #expect(batches >= 1)
            #expect(reader.damage.isEmpty)
        }
    }

    @Test func aQueryReturnsItsRangeInUnixTime() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000))
            store.append(contentsOf: (0..<1_000).map { sample($0) })  // Unix 1 700 001 000 to 1 700 001 009.99
            try store.close()
            var reader = try StoreReader(directory: directory, from: 1_700_001_002, through: 1_700_001_003)
            let read = try reader.readAll()
            #expect(read == (200...300).map { sample($0) })
            #expect(try readStore(directory, from: 1_800_000_000).isEmpty)
        }
    }

    @Test func unusableSamplesAreNotKept() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory)
            store.append(sample(10))
            store.append(MotionSample(timestamp: 2000))  // no reading
            store.append(MotionSample(timestamp: .nan, acceleration: Acceleration(x: 0, y: 0, z: 1)))
            store.append(MotionSample(timestamp: 2001, acceleration: Acceleration(x: .infinity, y: 0, z: 1)))
            store.append(sample(5))  // older than the last kept
            store.append(sample(11))
            #expect(store.rejectedSamples == 4)
            try store.close()
            #expect(try readStore(directory) == [sample(10), sample(11)])
        }
    }

    @Test func writtenFramesAreReadableWhileTheWriterRuns() throws {
        try withStoreDirectory { directory in
            // A writer that is never closed, as one killed with SIGKILL: what it flushed is there, whole.
            let store = try MotionStore(
                directory: directory, configuration: .init(flushInterval: 60, syncInterval: 60))
            store.append(contentsOf: (0..<300).map { sample($0) })
            #expect(try readStore(directory).isEmpty, "flushed before its interval")
            try store.synchronize()
            store.append(contentsOf: (300..<400).map { sample($0) })
            var reader = try StoreReader(directory: directory)
            #expect(try reader.readAll() == (0..<300).map { sample($0) })
            #expect(reader.damage.isEmpty)
            withExtendedLifetime(store) {}
        }
    }

    @Test func aSecondWriterIsRefusedAndTheNextOneStartsANewSegment() throws {
        try withStoreDirectory { directory in
            let first = try MotionStore(directory: directory)
            #expect {
                _ = try MotionStore(directory: directory)
            } throws: { error in
                (error as? MotionError)?.code == .outputExists
            }
            first.append(contentsOf: (0..<10).map { sample($0) })
            try first.close()
            let second = try MotionStore(directory: directory)
            second.append(contentsOf: (10..<20).map { sample($0) })
            try second.close()
            #expect(try segmentPaths(directory).map { ($0 as NSString).lastPathComponent } == [
                "segment-000000000001.msr", "segment-000000000002.msr",
            ])
            #expect(try readStore(directory) == (0..<20).map { sample($0) })
        }
    }

    @Test func theSizeLimitRemovesTheOldestSegments() throws {
        try withStoreDirectory { directory in
            let configuration = MotionStore.Configuration(maximumBytes: 3 * 8192, segmentBytes: 8192, flushInterval: 60)
            let store = try MotionStore(directory: directory, configuration: configuration)
            let written = (0..<5_000).map { sample($0) }
            for chunk in stride(from: 0, to: written.count, by: 50) {
                store.append(contentsOf: written[chunk..<(chunk + 50)])
                try store.synchronize()  // a frame of 50 samples
            }
            try store.close()
            let sizes = try segmentPaths(directory).map {
                try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int
            }
            #expect(sizes.reduce(0, +) <= configuration.maximumBytes)
            #expect(sizes.count >= 2)
            let read = try readStore(directory)
            // What is left is the newest samples, without a hole.
            #expect(!read.isEmpty && read.count < written.count)
            #expect(read == Array(written.suffix(read.count)))
        }
    }

    @Test func theAgeLimitRemovesSegmentsLastWrittenBeforeIt() throws {
        try withStoreDirectory { directory in
            for range in [0..<10, 10..<20, 20..<30] {
                let store = try MotionStore(directory: directory)
                store.append(contentsOf: range.map { sample($0) })
                try store.close()
            }
            let paths = try segmentPaths(directory)
            // The first two were last written 4 days ago.
            for path in paths.prefix(2) {
                var times = [timespec(tv_sec: time(nil) - 4 * 86_400, tv_nsec: 0)]
                times.append(times[0])
                #expect(utimensat(AT_FDCWD, path, times, 0) == 0)
            }
            let store = try MotionStore(directory: directory)  // default maximum age: 3 days
            try store.close()
            #expect(try segmentPaths(directory) == [paths[2]])
            #expect(try readStore(directory) == (20..<30).map { sample($0) })
        }
    }

    @Test func badConfigurationsAreRefusedNamingTheValue() throws {
        try withStoreDirectory { directory in
            for (configuration, words) in [
                (MotionStore.Configuration(maximumAge: .nan), "maximum age"),
                (MotionStore.Configuration(segmentBytes: 100), "segment size"),
                (MotionStore.Configuration(maximumBytes: 4096), "size limit"),
                (MotionStore.Configuration(flushInterval: 0), "flush interval"),
                (MotionStore.Configuration(syncInterval: -1), "sync interval"),
            ] {
                #expect {
                    _ = try MotionStore(directory: directory, configuration: configuration)
                } throws: { error in
                    let error = error as? MotionError
                    return error?.code == .invalidArgument && error?.message.contains(words) == true
                }
            }
        }
    }
}

@Suite struct StoreFlushTests {
    @Test func aFrameIsWrittenOnceItsFirstSampleHasWaitedTheFlushInterval() async throws {
        let directory = ScratchFolder.path("motion-store")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try MotionStore(directory: directory, configuration: .init(flushInterval: 0.05))
        store.append(sample(0))
        try await Task.sleep(for: .milliseconds(100))
        // No sample came since: the timer's call writes it (a SIGKILL now would lose nothing).
        #expect(store.flushIfDue() == nil)
        #expect(try readStore(directory) == [sample(0)])
        store.append(sample(1))
        try await Task.sleep(for: .milliseconds(100))
        store.append(sample(2))  // due: written with the sample that came late
        #expect(try readStore(directory) == [sample(0), sample(1), sample(2)])
        withExtendedLifetime(store) {}
    }
}
