import Foundation
import MotionCore
import Testing

@testable import MotionStore

@Suite struct MessageSpoolTests {
    static func message(_ i: Int) -> [UInt8] { Array("{\"seq\":\(i),\"padding\":\"\(String(repeating: "x", count: i % 97))\"}".utf8) }

    @Test func messagesComeOutInOrderAcrossSegmentsAndAcknowledgedOnesGo() throws {
        try withStoreDirectory { directory in
            var spool: MessageSpool? = try MessageSpool(directory: directory, maximumBytes: 1 << 20, segmentBytes: 4096)
            for i in 0..<300 { #expect(try spool!.append(topic: "motion/host/accel", bytes: Self.message(i))) }
            var skipped = 0
            let all = try spool!.messages(limit: 10_000, skipped: &skipped)
            #expect(all.map(\.bytes) == (0..<300).map(Self.message))
            #expect(all.allSatisfy { $0.topic == "motion/host/accel" } && skipped == 0)
            let segments = try segmentPaths(directory).count
            #expect(segments >= 5)
            // Reading in pieces gives the same, each piece starting where the last ended.
            var pieces: [MessageSpool.Message] = []
            var position: MessageSpool.Position? = nil
            while true {
                let piece = try spool!.messages(from: position, limit: 7, skipped: &skipped)
                guard let last = piece.last else { break }
                pieces += piece
                position = last.next
            }
            #expect(pieces.map(\.bytes) == all.map(\.bytes))

            // Acknowledging the first 150: the cursor moves, earlier segments go, and a restart starts there.
            spool!.acknowledge(upTo: all[150].position, every: 0)
            #expect(try segmentPaths(directory).count < segments)
            spool!.close()
            spool = nil
            let reopened = try MessageSpool(directory: directory, maximumBytes: 1 << 20, segmentBytes: 4096)
            #expect(reopened.cursor == all[150].position)
            #expect(try reopened.messages(limit: 10_000, skipped: &skipped).map(\.bytes) == (150..<300).map(Self.message))
            // New messages go after them, in a new segment.
            try reopened.append(topic: "t", bytes: [1, 2, 3])
            let rest = try reopened.messages(limit: 10_000, skipped: &skipped)
            #expect(rest.count == 151 && rest.last?.bytes == [1, 2, 3])
            reopened.acknowledge(upTo: rest.last!.next, every: 0)
            #expect(reopened.isDrained)
        }
    }

    @Test func aFullSpoolRefusesNewMessagesUntilOldOnesAreAcknowledged() throws {
        try withStoreDirectory { directory in
            let spool = try MessageSpool(directory: directory, maximumBytes: 8192, segmentBytes: 4096)
            let fixed = [UInt8](repeating: 7, count: 100)
            var accepted = 0
            while try spool.append(topic: "t", bytes: fixed) { accepted += 1 }
            #expect(spool.refusedCount == 1 && accepted > 50)
            #expect(try spool.append(topic: "t", bytes: fixed) == false)
            #expect(spool.refusedCount == 2)
            var skipped = 0
            let waiting = try spool.messages(limit: 10_000, skipped: &skipped)
            #expect(waiting.count == accepted)
            spool.acknowledge(upTo: waiting.last!.next, every: 0)
            #expect(try spool.append(topic: "t", bytes: [0]))
        }
    }

    @Test func aDamagedMessageIsSkippedAndAPlantedCursorIgnored() throws {
        try withStoreDirectory { directory in
            do {
                let spool = try MessageSpool(directory: directory, maximumBytes: 2 << 20, segmentBytes: 1 << 20)
                for i in 0..<10 { try spool.append(topic: "t", bytes: Self.message(i)) }
                spool.close()
            }
            let segment = try segmentPaths(directory)[0]
            var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
            bytes[bytes.count / 2] ^= 0xFF
            try bytes.write(to: URL(fileURLWithPath: segment))
            try Data("999999999999999999999999 x\n".utf8).write(to: URL(fileURLWithPath: directory + "/cursor"))
            let spool = try MessageSpool(directory: directory, maximumBytes: 2 << 20, segmentBytes: 1 << 20)
            var skipped = 0
            let read = try spool.messages(limit: 100, skipped: &skipped)
            #expect(skipped == 1 && read.count == 9, "\(read.count) read, \(skipped) skipped")
            #expect(Set(read.map(\.bytes)).isSubset(of: Set((0..<10).map(Self.message))))
        }
    }

    /// The cursor is a checksummed record rewritten in place: a record that does not check (a cut write, a planted
    /// file) is ignored, which only sends messages again; a planted link is replaced, never followed.
    @Test func aCursorThatDoesNotCheckSendsAgainAndAPlantedLinkIsReplaced() throws {
        try withStoreDirectory { directory in
            var positions: [MessageSpool.Position] = []
            do {
                let spool = try MessageSpool(directory: directory, maximumBytes: 2 << 20, segmentBytes: 1 << 20)
                for i in 0..<10 { try spool.append(topic: "t", bytes: Self.message(i)) }
                var skipped = 0
                positions = try spool.messages(limit: 100, skipped: &skipped).map(\.position)
                spool.acknowledge(upTo: positions[6], every: 0)
            }
            let path = directory + "/cursor"
            let record = try String(contentsOfFile: path, encoding: .utf8)
            #expect(record.utf8.count == MessageSpool.cursorRecordSize)
            func cursorAfterReopening() throws -> MessageSpool.Position {
                try MessageSpool(directory: directory, maximumBytes: 2 << 20, segmentBytes: 1 << 20).cursor
            }
            #expect(try cursorAfterReopening() == positions[6])
            // The offset changed (as a cut write would leave it) without its checksum: from the start again.
            let parts = record.split(separator: " ", omittingEmptySubsequences: true)
            let forged = "\(parts[0]) \(Int(parts[1])! + 1) \(parts[2])"
            try forged.write(toFile: path, atomically: false, encoding: .utf8)
            #expect(try cursorAfterReopening() == positions[0])
            // The older two-number record still counts.
            try "\(positions[3].segment) \(positions[3].offset)\n".write(toFile: path, atomically: false, encoding: .utf8)
            #expect(try cursorAfterReopening() == positions[3])
            // A link planted in its place is replaced by a file; what it pointed to is untouched.
            let target = directory + "/../planted-\(UUID().uuidString)"
            try "untouched".write(toFile: target, atomically: false, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: target) }
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
            do {
                let spool = try MessageSpool(directory: directory, maximumBytes: 2 << 20, segmentBytes: 1 << 20)
                #expect(spool.cursor == positions[0])
                spool.acknowledge(upTo: positions[2], every: 0)
            }
            #expect(try String(contentsOfFile: target, encoding: .utf8) == "untouched")
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType == .typeRegular)
            #expect(try cursorAfterReopening() == positions[2])
        }
    }

    /// A segment replaced by a FIFO (or a link) is skipped as damage: reading it would block for ever, or follow the
    /// link; the messages of the other segments still come.
    @Test(.timeLimit(.minutes(1))) func aPlantedFIFOSegmentIsSkippedNotWaitedOn() throws {
        try withStoreDirectory { directory in
            let spool = try MessageSpool(directory: directory, maximumBytes: 1 << 20, segmentBytes: 4096)
            for i in 0..<100 { try spool.append(topic: "t", bytes: Self.message(i)) }
            var skipped = 0
            let before = try spool.messages(limit: 1000, skipped: &skipped)
            let segments = try segmentPaths(directory)
            #expect(segments.count >= 3)
            let planted = segments[1]
            let lost = before.filter { directory + "/" + StoreDirectory.segmentName($0.position.segment) == planted }
            try FileManager.default.removeItem(atPath: planted)
            #expect(mkfifo(planted, 0o600) == 0)
            let after = try spool.messages(limit: 1000, skipped: &skipped)
            #expect(skipped == 1)
            #expect(!lost.isEmpty && after.count == before.count - lost.count)
        }
    }
}
