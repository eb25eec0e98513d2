import Foundation
import IIOTestbed
import MotionCore
import Testing

@testable import MotionStore

#if canImport(Glibc)
import Glibc
#endif

/// A store on a real, small file system (a 64 KiB tmpfs mounted for the test): a full disk pauses recording with a
/// message, keeps what was written, and resumes once there is space, reporting what it could not keep.
@Suite(.serialized, .requires(.root))
struct StoreFullDiskTests {
    @Test func aFullDiskPausesRecordingAndSpaceResumesIt() throws {
        try withStoreDirectory { store in
            let mountPoint = (store as NSString).deletingLastPathComponent + "/disk"
            try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
            try #require(
                mount("tmpfs", mountPoint, "tmpfs", 0, "size=64k,mode=0700") == 0,
                "cannot mount a tmpfs: \(String(cString: strerror(errno)))")
            defer { umount2(mountPoint, Int32(MNT_DETACH)) }
            // Half the disk taken by another file, freed later.
            let filler = mountPoint + "/filler"
            try Data(count: 32 * 1024).write(to: URL(fileURLWithPath: filler))
            let directory = mountPoint + "/store"
            let writer = try MotionStore(
                directory: directory,
                configuration: .init(
                    maximumBytes: 1 << 20, segmentBytes: 8192, flushInterval: 1e-9, retryInterval: 1e-9,
                    maximumPendingSamples: 100))
            var written: [MotionSample] = []
            var paused: MotionError?
            var index = 0
            while paused == nil && index < 100_000 {
                written.append(sample(index))
                if case .paused(let error) = writer.append(written.last!) { paused = error }
                index += 1
            }
            let error = try #require(paused, "100 000 samples written to a 64 KiB disk without a pause")
            #expect(error.code == .ioFailure)
            #expect(error.message.contains("free space"), "\(error)")
            #expect(writer.pausedBy != nil)
            // Samples keep coming while the disk is full: 100 wait in memory, the rest are counted and dropped.
            for _ in 0..<300 {
                written.append(sample(index))
                #expect(writer.append(written.last!) == nil)
                index += 1
            }
            // What was written before the pause is readable, whole, meanwhile.
            var reader = try StoreReader(directory: directory)
            let before = try reader.readAll()
            #expect(!before.isEmpty && before == Array(written.prefix(before.count)))
            #expect(reader.damage.isEmpty, "\(reader.damage)")
            try FileManager.default.removeItem(atPath: filler)
            let event = writer.flushIfDue()
            guard case .resumed(let dropped) = event else {
                Issue.record("no resume once space was freed: \(String(describing: event))")
                return
            }
            #expect(dropped > 0)
            #expect(writer.pausedBy == nil)
            try writer.close()
            reader = try StoreReader(directory: directory)
            let read = try reader.readAll()
            #expect(reader.damage.isEmpty, "\(reader.damage)")
            // Every sample but the `dropped` newest ones of the pause, in order.
            #expect(read.count == written.count - dropped)
            let kept = read.count
            #expect(read == Array(written.prefix(kept)))
        }
    }
}
