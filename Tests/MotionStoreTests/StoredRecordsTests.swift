import Foundation
import MotionCore
import MotionTrace
import Testing

@testable import MotionStore

/// Device motion and events kept in a store beside the samples: read back exactly, in their own frames, by time
/// range; frames a writer never makes refused with a reason.
@Suite struct StoredRecordsTests {
    /// Device motion `i` at 50 Hz from `start`: a turning attitude, values that use every bit of a Double, a
    /// calibrated field every third record.
    static func motion(_ i: Int, start: Double = 1000) -> DeviceMotion {
        let angle = 0.013 * Double(i) + 0.1
        let attitude = Attitude(roll: angle, pitch: -angle / 3, yaw: angle * 2)
        let field = i % 3 == 0 ? CalibratedMagneticField(field: MagneticField(x: 20.1 + Double(i), y: -1.7, z: -43.3), accuracy: .medium) : nil
        return DeviceMotion(
            timestamp: start + Double(i) * 0.02, attitude: attitude,
            referenceFrame: i % 2 == 0 ? .xMagneticNorthZVertical : .xArbitraryZVertical,
            rotationRate: RotationRate(x: 0.1 / Double(i + 3), y: -0.2, z: .pi / Double(i + 1)),
            gravity: attitude.gravity, userAcceleration: Acceleration(x: 0.001 * Double(i), y: 1e-9, z: -0.3),
            magneticField: field, heading: i % 2 == 0 ? Double(i % 360) + 0.25 : -1)
    }

    static func event(_ i: Int, start: Double = 1000) -> StoredEvent {
        i % 2 == 0
            ? StoredEvent(
                type: "shake", timestamp: start + Double(i),
                fields: [("phase", "ended"), ("axis", "x"), ("start", .number(start + Double(i) - 0.4)), ("strokes", 4), ("peak", 2.25)])
            : StoredEvent(type: "orientation", timestamp: start + Double(i), fields: [("orientation", "portrait"), ("previous", "face-up"), ("upright", true)])
    }

    /// The stored values as bits, for exact comparison (DeviceMotion is not Equatable).
    static func bits(_ motion: DeviceMotion) -> [UInt64] {
        let q = motion.attitude.quaternion
        var values = [motion.timestamp, q.w, q.x, q.y, q.z, motion.rotationRate.x, motion.rotationRate.y, motion.rotationRate.z]
        values += [motion.gravity.x, motion.gravity.y, motion.gravity.z, motion.userAcceleration.x, motion.userAcceleration.y]
        values += [motion.userAcceleration.z, motion.heading]
        if let field = motion.magneticField { values += [field.field.x, field.field.y, field.field.z, Double(field.accuracy.rawValue)] }
        return values.map(\.bitPattern) + [UInt64(StoreFormat.code(of: motion.referenceFrame))]
    }

    static func describe(_ event: StoredEvent) -> String {
        "\(event.type) \(event.timestamp) " + event.fields.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    @Test func deviceMotionAndEventsComeBackExactlyBesideTheSamples() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, clock: .offset(1_700_000_000), configuration: .init(segmentBytes: 8192, flushInterval: 60))
            for i in 0..<300 {
                store.append(sample(i, start: 1000))
                if i % 2 == 0 { store.append(Self.motion(i / 2)) }
                if i % 50 == 0 { store.appendEvent(type: Self.event(i / 50).type, timestamp: Self.event(i / 50).timestamp, fields: Self.event(i / 50).fields) }
                if i % 40 == 39 { store.flush() }
            }
            try store.close()
            #expect(try segmentPaths(directory).count > 1)
            var reader = try StoreReader(directory: directory)
            var samples: [MotionSample] = []
            var motion: [DeviceMotion] = []
            var events: [StoredEvent] = []
            while let batch = try reader.next() {
                #expect(batch.clockOffset == 1_700_000_000)
                #expect([batch.samples.isEmpty, batch.deviceMotion.isEmpty, batch.events.isEmpty].filter { !$0 }.count == 1)
                samples += batch.samples
                motion += batch.deviceMotion
                events += batch.events
            }
            #expect(reader.damage.isEmpty, "\(reader.damage)")
            #expect(samples == (0..<300).map { sample($0, start: 1000) })
            #expect(motion.map(Self.bits) == (0..<150).map { Self.bits(Self.motion($0)) })
            #expect(events.map(Self.describe) == (0..<6).map { Self.describe(Self.event($0)) })
            // A range in Unix time: the device motion and events of its 2 seconds only.
            var range = try StoreReader(directory: directory, from: 1_700_001_001, through: 1_700_001_003)
            var inRange: [DeviceMotion] = []
            var eventsInRange: [StoredEvent] = []
            while let batch = try range.next() {
                inRange += batch.deviceMotion
                eventsInRange += batch.events
            }
            #expect(inRange.count == 100 && inRange.allSatisfy { $0.timestamp >= 1001 && $0.timestamp <= 1003 })
            #expect(eventsInRange.map(\.timestamp) == [1001, 1002, 1003])
        }
    }

    /// `append(contentsOf:)` reads an array or a slice through its buffer, and any other sequence sample by sample:
    /// both keep the same samples, in order.
    @Test func appendingAnySequenceKeepsTheSamples() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, clock: .offset(0))
            let all = (0..<300).map { sample($0) }
            store.append(contentsOf: all[0..<100])  // a slice
            store.append(contentsOf: (100..<200).lazy.map { sample($0) })  // not contiguous
            store.append(contentsOf: Array(all[200...]))  // an array
            try store.close()
            #expect(try readStore(directory) == all)
        }
    }

    @Test func malformedRecordsAreNotKept() throws {
        try withStoreDirectory { directory in
            let store = try MotionStore(directory: directory, clock: .offset(0))
            var bad = Self.motion(1)
            bad.userAcceleration = Acceleration(x: .nan, y: 0, z: 0)
            store.append(Self.motion(2))
            store.append(bad)
            store.append(Self.motion(1))  // goes back in time
            store.appendEvent(type: "", timestamp: 1, fields: [])
            store.appendEvent(type: "shake", timestamp: .infinity, fields: [])
            store.appendEvent(type: "shake", timestamp: 1, fields: [("", 1)])
            store.appendEvent(type: String(repeating: "x", count: 256), timestamp: 1, fields: [])
            store.appendEvent(type: "shake", timestamp: 1, fields: (0..<256).map { ("k\($0)", .number(1)) })
            store.appendEvent(type: "shake", timestamp: 2, fields: [])
            store.appendEvent(type: "shake", timestamp: 1, fields: [])  // goes back in time
            #expect(store.rejectedSamples == 8)
            try store.close()
            var reader = try StoreReader(directory: directory)
            var kept = 0
            while let batch = try reader.next() { kept += batch.deviceMotion.count + batch.events.count }
            #expect(kept == 2)
        }
    }

    @Test func hostileRecordFramesWithValidChecksumsAreRefused() throws {
        func payload(_ kind: StoreFormat.Kind, count: UInt32, _ records: [UInt8]) -> [UInt8] {
            var bytes: [UInt8] = [kind.rawValue]
            bytes.appendLittleEndian(Double(0).bitPattern)
            bytes.appendLittleEndian(count)
            return bytes + records
        }
        func motionRecord(_ tweak: (inout [Double], inout [UInt8]) -> Void) -> [UInt8] {
            var builder = RecordFrameBuilder(.deviceMotion)
            builder.append(Self.motion(3))  // with a calibrated field
            var record = Array(builder.bytes[StoreFormat.recordsStart...])
            var values = (0..<17).map { index in
                Double(bitPattern: record.withUnsafeBytes { $0.loadLittleEndian(UInt64.self, at: 10 + (index < 14 ? index * 8 : 112 + (index - 14) * 8)) })
            }
            var flags = [record[8], record[9], record[146]]
            tweak(&values, &flags)
            (record[8], record[9], record[146]) = (flags[0], flags[1], flags[2])
            for (index, value) in values.enumerated() {
                record.storeLittleEndian(value.bitPattern, at: 10 + (index < 14 ? index * 8 : 112 + (index - 14) * 8))
            }
            return record
        }
        func eventRecord(type: [UInt8], fields: [[UInt8]]) -> [UInt8] {
            var bytes: [UInt8] = []
            bytes.appendLittleEndian(Double(1).bitPattern)
            bytes += [UInt8(type.count)] + type + [UInt8(fields.count)]
            return bytes + fields.flatMap { $0 }
        }
        let good = motionRecord { _, _ in }
        #expect(payload(.deviceMotion, count: 1, good).withUnsafeBytes { FrameScan.deviceMotion($0) }.isSuccess)
        let motionCases: [(String, [UInt8])] = [
            ("a huge count", payload(.deviceMotion, count: .max, good)),
            ("a NaN quaternion", payload(.deviceMotion, count: 1, motionRecord { values, _ in values[0] = .nan })),
            ("not a rotation", payload(.deviceMotion, count: 1, motionRecord { values, _ in values[0] = 2 })),
            ("an infinite rate", payload(.deviceMotion, count: 1, motionRecord { values, _ in values[5] = .infinity })),
            ("a heading of 400°", payload(.deviceMotion, count: 1, motionRecord { values, _ in values[13] = 400 })),
            ("frame code 9", payload(.deviceMotion, count: 1, motionRecord { _, flags in flags[0] = 9 })),
            ("field flag 2", payload(.deviceMotion, count: 1, motionRecord { _, flags in flags[1] = 2 })),
            ("accuracy 7", payload(.deviceMotion, count: 1, motionRecord { _, flags in flags[2] = 7 })),
            ("cut short", payload(.deviceMotion, count: 1, Array(good.dropLast(9)))),
            ("bytes left over", payload(.deviceMotion, count: 1, good + [0])),
        ]
        for (name, bytes) in motionCases {
            #expect(!bytes.withUnsafeBytes { FrameScan.deviceMotion($0) }.isSuccess, "\(name): accepted")
        }
        let number: [UInt8] = [1, UInt8(ascii: "k"), 0] + [UInt8](repeating: 0, count: 8)
        #expect(payload(.events, count: 1, eventRecord(type: Array("shake".utf8), fields: [number])).withUnsafeBytes { FrameScan.events($0) }.isSuccess)
        let eventCases: [(String, [UInt8])] = [
            ("a huge count", payload(.events, count: .max, eventRecord(type: [0x61], fields: []))),
            ("an empty type", payload(.events, count: 1, eventRecord(type: [], fields: []))),
            ("a type that is not UTF-8", payload(.events, count: 1, eventRecord(type: [0xFF, 0xFE], fields: []))),
            ("an unknown tag", payload(.events, count: 1, eventRecord(type: [0x61], fields: [[1, 0x6B, 7, 0]]))),
            ("a Boolean of 2", payload(.events, count: 1, eventRecord(type: [0x61], fields: [[1, 0x6B, 2, 2]]))),
            ("a string longer than the frame", payload(.events, count: 1, eventRecord(type: [0x61], fields: [[1, 0x6B, 1, 0xFF, 0xFF, 0x61]]))),
            ("more fields than bytes", payload(.events, count: 1, eventRecord(type: [0x61], fields: []).dropLast() + [200])),
            ("bytes left over", payload(.events, count: 1, eventRecord(type: [0x61], fields: []) + [0])),
        ]
        for (name, bytes) in eventCases {
            #expect(!bytes.withUnsafeBytes { FrameScan.events($0) }.isSuccess, "\(name): accepted")
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
