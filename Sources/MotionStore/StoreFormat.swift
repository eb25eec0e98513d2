package import MotionCore
public import MotionTrace

/// The bytes of a store's segment files (`Docs/History.md`, "Format"). A segment is a sequence of frames, each
/// checked on its own, so that damage costs only the frames it touches:
///
/// ```text
/// frame   := magic "MSR1" | payload length (UInt32) | CRC-32C of the payload (UInt32) | payload
/// payload := kind (UInt8) | …
///   kind 0, segment header: version (UInt8) | created (Float64, Unix seconds) | label length (UInt16) | label (UTF-8)
///   kind 1, samples:        clock offset (Float64, s) | count (UInt32) | count × record
///   kind 2, message:        topic length (UInt16) | topic (UTF-8) | bytes (a spool's, ``MessageSpool``)
///   kind 3, device motion:  clock offset (Float64, s) | count (UInt32) | count × motion
///   kind 4, events:         clock offset (Float64, s) | count (UInt32) | count × event
/// record  := t (Float64, s, the source's clock) | sensors (UInt8: SensorSet) | 3 × Float64 per sensor present,
///            in the order acceleration (g), rotation rate (rad/s), magnetic field (µT)
/// motion  := t (Float64, s) | reference frame (UInt8: 0 arbitrary, 1 arbitrary-corrected, 2 magnetic-north,
///            3 true-north) | calibrated field present (UInt8: 0 or 1) | 14 × Float64: attitude quaternion w, x, y, z
///            (device to reference) | rotation rate (rad/s) | gravity (g) | user acceleration (g) | heading
///            (degrees, −1 none) | when present: calibrated field (3 × Float64, µT) | its accuracy (Int8, −1…2)
/// event   := t (Float64, s) | type (UInt8 length, 1…255 | UTF-8) | field count (UInt8) | per field: key (UInt8
///            length, 1…255 | UTF-8) | tag (UInt8) | value: tag 0 number (Float64), 1 string (UInt16 length | UTF-8),
///            2 Boolean (UInt8: 0 or 1)
/// ```
///
/// Every integer and float is little-endian. A sample's Unix time is `t + clock offset` (the offset measured when the
/// frame was written). A reader trusts nothing: lengths are bounded, counts must fill the payload exactly, every
/// reading must be finite, sensors must be a known non-empty set, an attitude a unit quaternion, text UTF-8, and
/// times must not go back within a frame.
package enum StoreFormat {
    /// The magic at the start of every frame: the bytes `MSR1`.
    package static let magic: [UInt8] = Array("MSR1".utf8)
    /// The bytes before a frame's payload: magic, length, checksum.
    package static let frameHeaderSize = 12
    /// The largest payload a reader accepts, 16 MiB: a writer's frames hold about a second of samples (a few KB).
    package static let maximumPayload = 16 << 20
    /// The format's version, in each segment header.
    package static let version: UInt8 = 1
    /// The longest segment label, in bytes.
    package static let maximumLabelBytes = 1024

    package enum Kind: UInt8 {
        case segmentHeader = 0
        case samples = 1
        /// A spooled message (``MessageSpool``): topic length (UInt16) | topic (UTF-8) | the message's bytes.
        case message = 2
        /// Device motion (attitude, unbiased rotation rate, gravity, user acceleration).
        case deviceMotion = 3
        /// Events (shakes, orientation changes): a type, a time and named fields, as `stream --format jsonl` prints.
        case events = 4
    }

    /// The bytes before a records frame's first record: frame header, kind, clock offset, count.
    static let recordsStart = frameHeaderSize + 1 + 8 + 4
    /// The fixed part of a device-motion record: time, frame, flag, 14 numbers.
    static let motionRecordSize = 8 + 1 + 1 + 14 * 8
    /// What a calibrated magnetic field adds to it.
    static let motionFieldSize = 3 * 8 + 1

    /// The reference frames of device-motion records, by their code (the index): the format's, fixed.
    static let frameCodes: [AttitudeReferenceFrame] = [
        .xArbitraryZVertical, .xArbitraryCorrectedZVertical, .xMagneticNorthZVertical, .xTrueNorthZVertical,
    ]

    /// A reference frame's code in a device-motion record.
    static func code(of frame: AttitudeReferenceFrame) -> UInt8 { UInt8(frameCodes.firstIndex(of: frame)!) }

    /// The reference frame of a code, or `nil` for none.
    static func frame(code: UInt8) -> AttitudeReferenceFrame? {
        Int(code) < frameCodes.count ? frameCodes[Int(code)] : nil
    }

    /// Bytes of one record with `sensors`.
    @inlinable
    package static func recordSize(_ sensors: SensorSet) -> Int { 9 + 24 * sensors.rawValue.nonzeroBitCount }

    /// A segment header frame.
    package static func headerFrame(created: Double, label: String) -> [UInt8] {
        var payload: [UInt8] = [Kind.segmentHeader.rawValue, version]
        payload.appendLittleEndian(created.bitPattern)
        let labelBytes = Array(label.utf8.prefix(maximumLabelBytes))
        payload.appendLittleEndian(UInt16(labelBytes.count))
        payload += labelBytes
        return frame(payload)
    }

    /// `payload` framed: magic, length, checksum, payload.
    package static func frame(_ payload: [UInt8]) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(UInt32(payload.count))
        bytes.appendLittleEndian(payload.withUnsafeBytes { CRC32C.checksum($0) })
        return bytes + payload
    }
}

/// A frame of records (samples, device motion or events) built in place, record by record, in a buffer kept from
/// frame to frame (no allocation per sample or device-motion record once the buffer has grown to a frame's size).
package struct RecordFrameBuilder: Sendable {
    /// The frame so far; its header, offset and count are filled by ``finish(clockOffset:)``.
    package private(set) var bytes: [UInt8] = []
    /// The records in the frame.
    package private(set) var count = 0
    /// What the frame holds: ``StoreFormat/Kind/samples``, ``StoreFormat/Kind/deviceMotion`` or
    /// ``StoreFormat/Kind/events``.
    package let kind: StoreFormat.Kind

    package init(_ kind: StoreFormat.Kind = .samples) {
        precondition(kind == .samples || kind == .deviceMotion || kind == .events, "A frame of records.")
        self.kind = kind
        reset()
    }

    package var isEmpty: Bool { count == 0 }

    /// Empties the frame.
    package mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        bytes += StoreFormat.magic
        bytes += [UInt8](repeating: 0, count: StoreFormat.recordsStart - StoreFormat.magic.count)
        bytes[StoreFormat.frameHeaderSize] = kind.rawValue
        count = 0
    }

    /// Appends `sample` to a samples frame. The caller keeps only samples with a finite time and finite readings of
    /// at least one sensor, in time order.
    package mutating func append(_ sample: MotionSample) {
        bytes.appendLittleEndian(sample.timestamp.bitPattern)
        bytes.append(sample.sensors.rawValue)
        if let vector = sample.acceleration?.vector { appendVector(vector) }
        if let vector = sample.rotationRate?.vector { appendVector(vector) }
        if let vector = sample.magneticField?.vector { appendVector(vector) }
        count += 1
    }

    /// Appends `motion` to a device-motion frame. The caller keeps only finite values, in time order.
    package mutating func append(_ motion: DeviceMotion) {
        bytes.appendLittleEndian(motion.timestamp.bitPattern)
        bytes.append(StoreFormat.code(of: motion.referenceFrame))
        bytes.append(motion.magneticField == nil ? 0 : 1)
        let q = motion.attitude.quaternion
        bytes.appendLittleEndian(q.w.bitPattern)
        bytes.appendLittleEndian(q.x.bitPattern)
        bytes.appendLittleEndian(q.y.bitPattern)
        bytes.appendLittleEndian(q.z.bitPattern)
        appendVector(motion.rotationRate.vector)
        appendVector(motion.gravity.vector)
        appendVector(motion.userAcceleration.vector)
        bytes.appendLittleEndian(motion.heading.bitPattern)
        if let field = motion.magneticField {
            appendVector(field.field.vector)
            bytes.append(UInt8(bitPattern: Int8(field.accuracy.rawValue)))
        }
        count += 1
    }

    /// Appends an event to an events frame. The caller keeps only a finite time, in time order, a type and keys of
    /// 1 to 255 bytes, at most 255 fields and strings of at most 65 535 bytes.
    package mutating func append(event type: String, timestamp: Double, fields: [(String, EventValue)]) {
        bytes.appendLittleEndian(timestamp.bitPattern)
        appendShortText(type)
        bytes.append(UInt8(fields.count))
        for (key, value) in fields {
            appendShortText(key)
            switch value {
            case .number(let number):
                bytes.append(0)
                bytes.appendLittleEndian(number.bitPattern)
            case .string(let text):
                bytes.append(1)
                bytes.appendLittleEndian(UInt16(text.utf8.count))
                bytes += text.utf8
            case .bool(let flag):
                bytes.append(2)
                bytes.append(flag ? 1 : 0)
            }
        }
        count += 1
    }

    private mutating func appendShortText(_ text: String) {
        bytes.append(UInt8(text.utf8.count))
        bytes += text.utf8
    }

    private mutating func appendVector(_ vector: SIMD3<Double>) {
        bytes.appendLittleEndian(vector.x.bitPattern)
        bytes.appendLittleEndian(vector.y.bitPattern)
        bytes.appendLittleEndian(vector.z.bitPattern)
    }

    /// Fills the header, the clock offset (Unix time minus the source's clock, in seconds) and the count; the frame
    /// is then `bytes`.
    package mutating func finish(clockOffset: Double) {
        let h = StoreFormat.frameHeaderSize
        bytes.storeLittleEndian(UInt32(bytes.count - h), at: 4)
        bytes.storeLittleEndian(clockOffset.bitPattern, at: h + 1)
        bytes.storeLittleEndian(UInt32(count), at: h + 9)
        let checksum = bytes.withUnsafeBytes { CRC32C.checksum(.init(rebasing: $0[h...])) }
        bytes.storeLittleEndian(checksum, at: 8)
    }
}

/// An event as a store keeps it: a type such as `shake`, a time and named fields.
public struct StoredEvent: Sendable {
    /// The event's type: `shake`, `orientation`, … (the `type` of `stream --format jsonl`'s objects).
    public var type: String
    /// When it happened, in seconds on the source's clock.
    public var timestamp: Double
    /// Its fields, in order, as `TraceWriter.writeEvent(type:timestamp:fields:)` takes them.
    public var fields: [(String, EventValue)]

    /// Creates an event.
    public init(type: String, timestamp: Double, fields: [(String, EventValue)]) {
        (self.type, self.timestamp, self.fields) = (type, timestamp, fields)
    }
}

/// What a segment's bytes hold: its frames, and the ranges that are not frames (damage).
package struct FrameScan {
    package enum Item {
        /// A frame whose checksum matches: its kind and its payload's range in the bytes.
        case frame(StoreFormat.Kind, Range<Int>)
        /// Bytes that are no frame, and why the first of them is not.
        case damage(Range<Int>, String)
    }

    /// Splits `bytes` into frames and damaged ranges. After a damaged frame the scan looks for the next magic at
    /// which a whole frame checks, so one damaged frame costs only itself.
    /// With `maximumFrames`, the scan stops after that many frames: what follows them is not looked at.
    package static func items(_ bytes: UnsafeRawBufferPointer, maximumFrames: Int = .max) -> [Item] {
        var items: [Item] = []
        var offset = 0
        var damageStart: Int?
        var damageReason = ""
        var frames = 0
        while offset < bytes.count && frames < maximumFrames {
            switch frame(in: bytes, at: offset) {
            case .success(let (kind, payload)):
                if let start = damageStart {
                    items.append(.damage(start..<offset, damageReason))
                    damageStart = nil
                }
                items.append(.frame(kind, payload))
                frames += 1
                offset = payload.upperBound
            case .failure(let reason):
                if damageStart == nil {
                    damageStart = offset
                    damageReason = reason.text
                }
                offset = nextMagic(in: bytes, after: offset) ?? bytes.count
            }
        }
        if let start = damageStart { items.append(.damage(start..<offset, damageReason)) }
        return items
    }

    /// The reason given for a frame that the file's end cuts short.
    package static let cutShort = "a frame cut short (the file ends)"

    package struct Reason: Error {
        package var text: String
    }

    /// The frame at `offset`, or why there is none.
    static func frame(in bytes: UnsafeRawBufferPointer, at offset: Int) -> Result<(StoreFormat.Kind, Range<Int>), Reason> {
        let h = StoreFormat.frameHeaderSize
        guard bytes.count - offset >= h else { return .failure(Reason(text: cutShort)) }
        guard (0..<4).allSatisfy({ bytes[offset + $0] == StoreFormat.magic[$0] }) else {
            return .failure(Reason(text: "no frame starts here"))
        }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset + 4))
        guard length >= 1, length <= StoreFormat.maximumPayload else {
            return .failure(Reason(text: "a frame length of \(length) bytes"))
        }
        guard bytes.count - offset - h >= length else {
            return .failure(Reason(text: cutShort))
        }
        let payload = (offset + h)..<(offset + h + length)
        let expected = bytes.loadLittleEndian(UInt32.self, at: offset + 8)
        guard CRC32C.checksum(.init(rebasing: bytes[payload])) == expected else {
            return .failure(Reason(text: "a checksum mismatch"))
        }
        guard let kind = StoreFormat.Kind(rawValue: bytes[payload.lowerBound]) else {
            return .failure(Reason(text: "a frame of unknown kind \(bytes[payload.lowerBound])"))
        }
        return .success((kind, payload))
    }

    /// The next offset after `offset` where the magic starts.
    static func nextMagic(in bytes: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + 4 <= bytes.count {
            if bytes[candidate] == StoreFormat.magic[0] && bytes[candidate + 1] == StoreFormat.magic[1]
                && bytes[candidate + 2] == StoreFormat.magic[2] && bytes[candidate + 3] == StoreFormat.magic[3]
            {
                return candidate
            }
            candidate += 1
        }
        return nil
    }

    /// A segment header's creation time (Unix seconds) and label, or why the payload is not one.
    package static func header(_ payload: UnsafeRawBufferPointer) -> Result<(created: Double, label: String), Reason> {
        guard payload.count >= 12 else { return .failure(Reason(text: "a segment header of \(payload.count) bytes")) }
        guard payload[1] == StoreFormat.version else {
            return .failure(Reason(text: "format version \(payload[1]) (this build reads \(StoreFormat.version))"))
        }
        let created = Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: 2))
        let labelCount = Int(payload.loadLittleEndian(UInt16.self, at: 10))
        guard created.isFinite, payload.count == 12 + labelCount, labelCount <= StoreFormat.maximumLabelBytes else {
            return .failure(Reason(text: "a malformed segment header"))
        }
        return .success((created, String(decoding: payload[12...], as: UTF8.self)))
    }

    /// A message payload's topic and bytes, or why it is malformed.
    package static func message(_ payload: UnsafeRawBufferPointer) -> Result<(topic: String, bytes: [UInt8]), Reason> {
        guard payload.count >= 3 else { return .failure(Reason(text: "a message frame of \(payload.count) bytes")) }
        let topicCount = Int(payload.loadLittleEndian(UInt16.self, at: 1))
        guard topicCount >= 1, 3 + topicCount <= payload.count else {
            return .failure(Reason(text: "a topic of \(topicCount) bytes in \(payload.count)"))
        }
        guard let topic = String(validating: payload[3..<(3 + topicCount)], as: UTF8.self) else {
            return .failure(Reason(text: "a topic that is not UTF-8"))
        }
        return .success((topic, Array(payload[(3 + topicCount)...])))
    }

    /// A samples payload's clock offset and samples, or why it is malformed.
    package static func samples(_ payload: UnsafeRawBufferPointer) -> Result<(offset: Double, samples: [MotionSample]), Reason> {
        guard payload.count >= 13 else { return .failure(Reason(text: "a samples frame of \(payload.count) bytes")) }
        let offset = Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: 1))
        let count = Int(payload.loadLittleEndian(UInt32.self, at: 9))
        guard offset.isFinite else { return .failure(Reason(text: "a clock offset of \(offset) s")) }
        // At least 33 bytes a record: a count that cannot fit is refused before anything is reserved for it.
        guard count <= (payload.count - 13) / 33 else {
            return .failure(Reason(text: "\(count) records in \(payload.count) bytes"))
        }
        var samples: [MotionSample] = []
        samples.reserveCapacity(count)
        var position = 13
        for index in 0..<count {
            guard payload.count - position >= 9 else { return .failure(Reason(text: "record \(index + 1) cut short")) }
            let time = Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: position))
            let sensors = SensorSet(rawValue: payload[position + 8])
            position += 9
            guard time.isFinite else { return .failure(Reason(text: "record \(index + 1): a time of \(time) s")) }
            guard !sensors.isEmpty, SensorSet.all.isSuperset(of: sensors) else {
                return .failure(Reason(text: "record \(index + 1): sensor bits \(sensors.rawValue)"))
            }
            guard samples.last.map({ $0.timestamp <= time }) ?? true else {
                return .failure(Reason(text: "record \(index + 1): its time goes back"))
            }
            guard payload.count - position >= StoreFormat.recordSize(sensors) - 9 else {
                return .failure(Reason(text: "record \(index + 1) cut short"))
            }
            var sample = MotionSample(timestamp: time)
            for sensor in [SensorSet.accelerometer, .gyroscope, .magnetometer] where sensors.contains(sensor) {
                let vector = SIMD3(
                    Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: position)),
                    Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: position + 8)),
                    Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: position + 16)))
                position += 24
                guard vector.x.isFinite, vector.y.isFinite, vector.z.isFinite else {
                    return .failure(Reason(text: "record \(index + 1): a reading that is not finite"))
                }
                switch sensor {
                case .accelerometer: sample.acceleration = Acceleration(vector)
                case .gyroscope: sample.rotationRate = RotationRate(vector)
                default: sample.magneticField = MagneticField(vector)
                }
            }
            samples.append(sample)
        }
        guard position == payload.count else {
            return .failure(Reason(text: "\(payload.count - position) bytes after the last record"))
        }
        return .success((offset, samples))
    }
}

extension FrameScan {
    /// The clock offset and record count at the start of a records payload, with the bytes a record takes at least;
    /// or why the payload cannot hold them.
    private static func recordsHeader(
        _ payload: UnsafeRawBufferPointer, what: String, smallestRecord: Int
    ) -> Result<(offset: Double, count: Int), Reason> {
        guard payload.count >= 13 else { return .failure(Reason(text: "\(what) frame of \(payload.count) bytes")) }
        let offset = Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: 1))
        let count = Int(payload.loadLittleEndian(UInt32.self, at: 9))
        guard offset.isFinite else { return .failure(Reason(text: "a clock offset of \(offset) s")) }
        // A count that cannot fit is refused before anything is reserved for it.
        guard count <= (payload.count - 13) / smallestRecord else {
            return .failure(Reason(text: "\(count) records in \(payload.count) bytes"))
        }
        return .success((offset, count))
    }

    /// A device-motion payload's clock offset and device motion, or why it is malformed.
    package static func deviceMotion(_ payload: UnsafeRawBufferPointer) -> Result<(offset: Double, motion: [DeviceMotion]), Reason> {
        let header: (offset: Double, count: Int)
        switch recordsHeader(payload, what: "a device-motion", smallestRecord: StoreFormat.motionRecordSize) {
        case .success(let read): header = read
        case .failure(let reason): return .failure(reason)
        }
        var motion: [DeviceMotion] = []
        motion.reserveCapacity(header.count)
        var position = 13
        func number() -> Double {
            defer { position += 8 }
            return Double(bitPattern: payload.loadLittleEndian(UInt64.self, at: position))
        }
        for index in 0..<header.count {
            let record = "record \(index + 1)"
            guard payload.count - position >= StoreFormat.motionRecordSize else { return .failure(Reason(text: "\(record) cut short")) }
            let time = number()
            let frameCode = payload[position]
            let hasField = payload[position + 1]
            position += 2
            guard time.isFinite, motion.last.map({ $0.timestamp <= time }) ?? true else {
                return .failure(Reason(text: "\(record): a time of \(time) s that is not finite or goes back"))
            }
            guard let frame = StoreFormat.frame(code: frameCode), hasField <= 1 else {
                return .failure(Reason(text: "\(record): frame code \(frameCode), field flag \(hasField)"))
            }
            var values = (0..<14).map { _ in number() }
            if hasField == 1 {
                guard payload.count - position >= StoreFormat.motionFieldSize else { return .failure(Reason(text: "\(record) cut short")) }
                values += (0..<3).map { _ in number() }
            }
            guard values.allSatisfy(\.isFinite) else { return .failure(Reason(text: "\(record): a value that is not finite")) }
            let quaternion = Quaternion(w: values[0], x: values[1], y: values[2], z: values[3])
            let norm = (values[0] * values[0] + values[1] * values[1] + values[2] * values[2] + values[3] * values[3]).squareRoot()
            guard abs(norm - 1) < 1e-6 else { return .failure(Reason(text: "\(record): an attitude that is not a rotation")) }
            let heading = values[13]
            guard heading == -1 || (heading >= 0 && heading < 360) else {
                return .failure(Reason(text: "\(record): a heading of \(heading)°"))
            }
            var field: CalibratedMagneticField?
            if hasField == 1 {
                let code = Int8(bitPattern: payload[position])
                position += 1
                guard let accuracy = MagneticFieldCalibrationAccuracy(rawValue: Int(code)) else {
                    return .failure(Reason(text: "\(record): a calibration accuracy of \(code)"))
                }
                field = CalibratedMagneticField(field: MagneticField(x: values[14], y: values[15], z: values[16]), accuracy: accuracy)
            }
            motion.append(
                DeviceMotion(
                    timestamp: time, attitude: Attitude(unitQuaternion: quaternion), referenceFrame: frame,
                    rotationRate: RotationRate(x: values[4], y: values[5], z: values[6]),
                    gravity: Acceleration(x: values[7], y: values[8], z: values[9]),
                    userAcceleration: Acceleration(x: values[10], y: values[11], z: values[12]), magneticField: field,
                    heading: heading))
        }
        guard position == payload.count else {
            return .failure(Reason(text: "\(payload.count - position) bytes after the last record"))
        }
        return .success((header.offset, motion))
    }

    /// An events payload's clock offset and events, or why it is malformed.
    package static func events(_ payload: UnsafeRawBufferPointer) -> Result<(offset: Double, events: [StoredEvent]), Reason> {
        let header: (offset: Double, count: Int)
        // The smallest event: a time, a one-byte type, no fields.
        switch recordsHeader(payload, what: "an events", smallestRecord: 8 + 2 + 1) {
        case .success(let read): header = read
        case .failure(let reason): return .failure(reason)
        }
        var events: [StoredEvent] = []
        var position = 13
        func take(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, payload.count - position >= count else { return nil }
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: payload[position..<(position + count)])
        }
        func text(lengthBytes: Int) -> String? {
            guard let length = take(lengthBytes) else { return nil }
            let count = lengthBytes == 1 ? Int(length[0]) : Int(length.loadLittleEndian(UInt16.self, at: 0))
            guard let bytes = take(count) else { return nil }
            return String(validating: bytes, as: UTF8.self)
        }
        for index in 0..<header.count {
            let record = "event \(index + 1)"
            guard let timeBytes = take(8) else { return .failure(Reason(text: "\(record) cut short")) }
            let time = Double(bitPattern: timeBytes.loadLittleEndian(UInt64.self, at: 0))
            guard time.isFinite, events.last.map({ $0.timestamp <= time }) ?? true else {
                return .failure(Reason(text: "\(record): a time of \(time) s that is not finite or goes back"))
            }
            guard let type = text(lengthBytes: 1), !type.isEmpty, let count = take(1)?[0] else {
                return .failure(Reason(text: "\(record): a malformed type"))
            }
            var fields: [(String, EventValue)] = []
            for _ in 0..<count {
                guard let key = text(lengthBytes: 1), !key.isEmpty, let tag = take(1)?[0] else {
                    return .failure(Reason(text: "\(record): a malformed field"))
                }
                switch tag {
                case 0:
                    guard let value = take(8) else { return .failure(Reason(text: "\(record) cut short")) }
                    fields.append((key, .number(Double(bitPattern: value.loadLittleEndian(UInt64.self, at: 0)))))
                case 1:
                    guard let value = text(lengthBytes: 2) else { return .failure(Reason(text: "\(record): a malformed string")) }
                    fields.append((key, .string(value)))
                case 2:
                    guard let value = take(1)?[0], value <= 1 else { return .failure(Reason(text: "\(record): a malformed Boolean")) }
                    fields.append((key, .bool(value == 1)))
                default:
                    return .failure(Reason(text: "\(record): a field of unknown tag \(tag)"))
                }
            }
            events.append(StoredEvent(type: type, timestamp: time, fields: fields))
        }
        guard position == payload.count else {
            return .failure(Reason(text: "\(payload.count - position) bytes after the last event"))
        }
        return .success((header.offset, events))
    }
}

extension [UInt8] {
    @inlinable
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    @inlinable
    mutating func storeLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.littleEndian) { source in
            for (index, byte) in source.enumerated() { self[offset + index] = byte }
        }
    }
}

extension UnsafeRawBufferPointer {
    @inlinable
    func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
