import Foundation
import MotionCore
import TestThreads
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import MotionStore

/// A store that is damaged, cut short or planted: every sample of the frames the damage does not touch is read,
/// the damage is reported with its place, and nothing crashes.
///
/// Compute-bound: the first two tests read a store back thousands of times. They rewrite the segment with
/// ``overwrite(_:with:)``, unsynced: `Data.write(to:)` syncs each write to disk, 10–30 s in all, which on the
/// cooperative pool held both of its threads on a 2-core machine and starved every other test's tasks
/// (`HandlerDeliveryTests.serialInOrder` once timed out), and on the compute threads kept the disk busy for the
/// whole run (`PublishCommandTests`' spool then exceeded its time limit).
@Suite(.computeBound) struct StoreDamageTests {
    /// A store of 40 frames of 10 samples (about 700 bytes each) in segments of at most 4 096 bytes.
    static func writeStore(_ directory: String) throws -> [MotionSample] {
        let store = try MotionStore(
            directory: directory, configuration: .init(segmentBytes: 4096, flushInterval: 60))
        let written = (0..<400).map { sample($0) }
        for chunk in stride(from: 0, to: written.count, by: 10) {
            store.append(contentsOf: written[chunk..<(chunk + 10)])
            try store.synchronize()
        }
        try store.close()
        return written
    }

    @Test func aFlippedByteCostsOnlyItsFrameWhereverItIs() throws {
        try withStoreDirectory { directory in
            let written = try Self.writeStore(directory)
            let paths = try segmentPaths(directory)
            #expect(paths.count >= 3)
            let path = paths[1]
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            for offset in 0..<original.count {
                var damaged = original
                damaged[offset] ^= 0x5A
                try overwrite(path, with: damaged)
                var reader = try StoreReader(directory: directory)
                let read = try reader.readAll()
                // At most the frame holding the byte is lost (a damaged length may cost the frame after too when it
                // points past it: never more than 2 frames of 10 samples).
                #expect(read.count >= written.count - 20, "offset \(offset): \(read.count) samples read")
                #expect(Set(read).isSubset(of: Set(written)))
                #expect(read == read.sorted { $0.timestamp < $1.timestamp })
                let damage = reader.damage
                #expect(damage.count == 1 && damage[0].file == path, "offset \(offset): \(damage)")
                #expect(damage.first.map { $0.bytes.contains(offset) || $0.bytes.isEmpty } ?? false, "offset \(offset): \(damage)")
            }
        }
    }

    @Test func aSegmentCutShortKeepsItsWholeFrames() throws {
        try withStoreDirectory { directory in
            let written = try Self.writeStore(directory)
            let paths = try segmentPaths(directory)
            let original = try Data(contentsOf: URL(fileURLWithPath: paths[0]))
            try Data().write(to: URL(fileURLWithPath: paths[0]))
            let later = written.count - (try readStore(directory).count)  // samples in segment 0
            var previous = 0
            for length in 0...original.count {
                try overwrite(paths[0], with: original.prefix(length))
                var reader = try StoreReader(directory: directory)
                let read = try reader.readAll()
                // The whole frames before the cut (10 samples each), then every later segment.
                let kept = read.count - (written.count - later)
                #expect(kept >= previous && kept <= later && kept % 10 == 0, "length \(length): \(kept) kept")
                #expect(read == Array(written.prefix(kept) + written.suffix(written.count - later)), "length \(length)")
                previous = kept
                #expect(reader.damage.allSatisfy { $0.reason == FrameScan.cutShort && $0.file == paths[0] })
                #expect(reader.damage.count <= 1, "length \(length): \(reader.damage)")
            }
            #expect(previous == later)
        }
    }

    @Test func theNewestSegmentCutShortIsAWriteInProgress() throws {
        try withStoreDirectory { directory in
            _ = try Self.writeStore(directory)
            let newest = try segmentPaths(directory).last!
            let original = try Data(contentsOf: URL(fileURLWithPath: newest))
            try original.prefix(original.count - 5).write(to: URL(fileURLWithPath: newest))
            var reader = try StoreReader(directory: directory)
            _ = try reader.readAll()
            #expect(reader.damage.isEmpty, "\(reader.damage)")
        }
    }

    @Test func plantedFilesAreReportedOrIgnored() throws {
        try withStoreDirectory { directory in
            let written = try Self.writeStore(directory)
            let paths = try segmentPaths(directory)
            // A symbolic link named as a segment is not followed; a file of another name is ignored; garbage
            // named as a segment is damage.
            try FileManager.default.createSymbolicLink(
                atPath: directory + "/segment-000000000050.msr", withDestinationPath: "/etc/passwd")
            try Data("hello".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
            try Data((0..<5000).map { UInt8($0 % 251) }).write(to: URL(fileURLWithPath: directory + "/segment-000000000040.msr"))
            var reader = try StoreReader(directory: directory)
            #expect(try reader.readAll() == written)
            #expect(reader.damage.map(\.file) == [directory + "/segment-000000000040.msr"], "\(reader.damage)")
            #expect(paths.count >= 3)
        }
    }

    @Test func hostileFramesWithValidChecksumsAreRefused() throws {
        // Frames a writer never makes, each with a checksum that matches: the reader's own checks refuse them.
        func samplesPayload(offset: Double, count: UInt32, records: [UInt8]) -> [UInt8] {
            var payload: [UInt8] = [StoreFormat.Kind.samples.rawValue]
            payload.appendLittleEndian(offset.bitPattern)
            payload.appendLittleEndian(count)
            return payload + records
        }
        func record(_ time: Double, sensors: UInt8, values: [Double]) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.appendLittleEndian(time.bitPattern)
            bytes.append(sensors)
            for value in values { bytes.appendLittleEndian(value.bitPattern) }
            return bytes
        }
        let cases: [(String, [UInt8])] = [
            ("a huge count", samplesPayload(offset: 0, count: .max, records: record(1, sensors: 1, values: [0, 0, 1]))),
            ("a NaN offset", samplesPayload(offset: .nan, count: 1, records: record(1, sensors: 1, values: [0, 0, 1]))),
            ("unknown sensors", samplesPayload(offset: 0, count: 1, records: record(1, sensors: 8, values: [0, 0, 1]))),
            ("no sensors", samplesPayload(offset: 0, count: 1, records: record(1, sensors: 0, values: []))),
            ("an infinite value", samplesPayload(offset: 0, count: 1, records: record(1, sensors: 1, values: [0, .infinity, 1]))),
            ("time going back", samplesPayload(offset: 0, count: 2, records: record(2, sensors: 1, values: [0, 0, 1]) + record(1, sensors: 1, values: [0, 0, 1]))),
            ("bytes left over", samplesPayload(offset: 0, count: 1, records: record(1, sensors: 1, values: [0, 0, 1]) + [0])),
            ("a record cut short", samplesPayload(offset: 0, count: 1, records: Array(record(1, sensors: 3, values: [0, 0, 1, 0, 0, 0]).dropLast(8)))),
        ]
        for (name, payload) in cases {
            let result = payload.withUnsafeBytes { FrameScan.samples($0) }
            guard case .failure = result else {
                Issue.record("\(name): accepted")
                continue
            }
        }
        // And through a file: the frame is reported, the reader goes on.
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, configuration: .init(flushInterval: 60))
            store.append(sample(1))
            try store.close()
            let path = try segmentPaths(directory)[0]
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seekToEnd()
            try handle.write(contentsOf: StoreFormat.frame(cases[0].1))
            try handle.close()
            let next = try MotionStore(directory: directory, configuration: .init(flushInterval: 60))
            next.append(sample(2))
            try next.close()
            var reader = try StoreReader(directory: directory)
            #expect(try reader.readAll() == [sample(1), sample(2)])
            #expect(reader.damage.count == 1 && reader.damage[0].reason.contains("records in"), "\(reader.damage)")
        }
    }
}

/// Replaces the file at `path` with `data` without syncing it to disk (the reader sees the page cache): the damage
/// tests rewrite a segment thousands of times. The bytes go through the store's own whole write.
private func overwrite(_ path: String, with data: some DataProtocol) throws {
    let descriptor = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(descriptor) }
    if let failure = Array(data).withUnsafeBytes({ WriterState.writeAll($0, to: descriptor) }) {
        throw POSIXError(POSIXErrorCode(rawValue: failure.rawValue) ?? .EIO)
    }
}
