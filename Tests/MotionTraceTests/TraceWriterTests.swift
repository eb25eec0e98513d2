import Foundation
import MotionCore
import Testing
import TestThreads

@testable import MotionTrace

@Suite(.computeBound) struct TraceWriterTests {
    static let samples: [MotionSample] = [
        MotionSample(
            timestamp: 0, acceleration: Acceleration(x: -0.00887329394, y: 0.5, z: -1),
            rotationRate: RotationRate(x: 0.001, y: -0.0, z: 3),
            magneticField: MagneticField(x: 16.1633417, y: 1e-7, z: -42)),
        MotionSample(timestamp: 0.0035, rotationRate: RotationRate(x: 1, y: 2, z: 3)),
        MotionSample(timestamp: 0.0035, acceleration: Acceleration(x: 1e300, y: -6.52338106e-19, z: 0.1)),
    ]

    @Test func writesCanonicalCSV() throws {
        let metadata = TraceMetadata(lines: [
            .entry(key: "source", value: "unit test"), .comment("Keep this attribution."), .comment(""),
            .entry(key: "notes", value: "two\nlines"),
        ])
        let text = try TraceWriter.render(Self.samples, format: .csv, sensors: .all, metadata: metadata)
        #expect(
            text == """
                # source: unit test
                # Keep this attribution.
                #
                # notes: two lines
                t,ax,ay,az,gx,gy,gz,mx,my,mz
                0,-0.00887329394,0.5,-1,0.001,-0,3,16.1633417,1e-7,-42
                0.0035,,,,1,2,3,,,
                0.0035,1e+300,-6.52338106e-19,0.1,,,,,,

                """)
        let reader = try TraceReader(bytes: Array(text.utf8), name: "written.csv")
        #expect(reader.metadata.lines[..<3] == metadata.lines[..<3])
        #expect(reader.metadata["notes"] == "two lines")
        #expect(try reader.readAll() == Self.samples)
    }

    @Test func writesOnlyTheSelectedSensorsInCanonicalOrder() throws {
        let text = try TraceWriter.render(Self.samples, format: .csv, sensors: [.magnetometer, .accelerometer])
        #expect(
            text == """
                t,ax,ay,az,mx,my,mz
                0,-0.00887329394,0.5,-1,16.1633417,1e-7,-42
                0.0035,,,,,,
                0.0035,1e+300,-6.52338106e-19,0.1,,,

                """)
        #expect(try TraceWriter.render([], format: .csv, sensors: []) == "t\n")
        #expect(try TraceWriter.render([], format: .jsonl, sensors: .all) == "")
    }

    /// Write → read gives bit-identical doubles, for random values of every magnitude, negative zero,
    /// subnormals and the extremes.
    @Test func csvRoundTripIsBitIdentical() throws {
        var generator = SeededGenerator(seed: 11)
        var specials: [Double] = [
            -0.0, 0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude,
            -.greatestFiniteMagnitude, 0.1, 1e-7, 1e21, 1e22, 1e23, 0x1p53, 0x1p53 + 2, 1.2345678901234568e17,
        ]
        specials += (0..<40).map { Double(sign: .plus, exponent: $0 * 50 - 1074, significand: 1) }
        var samples: [MotionSample] = []
        var time = -1e6
        for index in 0..<20_000 {
            var values = (0..<9).map { _ in randomFiniteDouble(using: &generator) }
            if index < specials.count { values[index % 9] = specials[index] }
            time = max(time, randomFiniteDouble(using: &generator).magnitude.squareRoot() - 1e6)
            time = time.nextUp
            samples.append(
                MotionSample(
                    timestamp: time, acceleration: Acceleration(x: values[0], y: values[1], z: values[2]),
                    rotationRate: index % 7 == 0 ? nil : RotationRate(x: values[3], y: values[4], z: values[5]),
                    magneticField: MagneticField(x: values[6], y: values[7], z: values[8])))
        }
        let text = try TraceWriter.render(samples, format: .csv, sensors: .all)
        let read = try readAll(text)
        #expect(read.count == samples.count)
        func bits(_ sample: MotionSample) -> [UInt64] {
            ([sample.timestamp] + (sample.acceleration.map { [$0.x, $0.y, $0.z] } ?? [])
                + (sample.rotationRate.map { [$0.x, $0.y, $0.z] } ?? [])
                + (sample.magneticField.map { [$0.x, $0.y, $0.z] } ?? [])).map(\.bitPattern)
        }
        #expect(read.map(bits) == samples.map(bits))
    }

    @Test func writesJSONLinesThatJSONSerializationReads() throws {
        let metadata = TraceMetadata(lines: [.entry(key: "source", value: "q\"uote"), .comment("free text")])
        let writer = TraceWriter(format: .jsonl, sensors: .all, metadata: metadata)
        try writer.write(Self.samples[0])
        try writer.writeEvent(
            type: "shake", timestamp: 0.002,
            fields: [
                ("magnitude", 2.5), ("label", "a \"b\"\n\\c\u{1}é"), ("confirmed", true), ("count", 3),
                ("bad", .number(.nan)),
            ])
        try writer.write(Self.samples[1])
        try writer.write(Self.samples[2])
        try writer.flush()
        let lines = String(decoding: writer.writtenBytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 5)
        let objects = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects[0]["type"] as? String == "metadata")
        let metadataLines = try #require(objects[0]["lines"] as? [[String: String]])
        #expect(metadataLines == [["key": "source", "value": "q\"uote"], ["comment": "free text"]])

        #expect(objects[1]["type"] as? String == "sample")
        #expect(Set(objects[1].keys) == ["type", "t", "ax", "ay", "az", "gx", "gy", "gz", "mx", "my", "mz"])
        let first = Self.samples[0]
        let expected: [String: Double] = [
            "t": first.timestamp, "ax": first.acceleration!.x, "ay": first.acceleration!.y,
            "az": first.acceleration!.z, "gx": first.rotationRate!.x, "gy": first.rotationRate!.y,
            "gz": first.rotationRate!.z, "mx": first.magneticField!.x, "my": first.magneticField!.y,
            "mz": first.magneticField!.z,
        ]
        for (key, value) in expected {
            #expect((objects[1][key] as? NSNumber)?.doubleValue == value, "\(key)")
        }
        #expect(lines[1].hasPrefix("{\"type\":\"sample\",\"t\":0,\"ax\":-0.00887329394,"))

        #expect(objects[2]["type"] as? String == "shake")
        #expect((objects[2]["t"] as? NSNumber)?.doubleValue == 0.002)
        #expect((objects[2]["magnitude"] as? NSNumber)?.doubleValue == 2.5)
        #expect(objects[2]["label"] as? String == "a \"b\"\n\\c\u{1}é")
        #expect(objects[2]["confirmed"] as? Bool == true)
        #expect((objects[2]["count"] as? NSNumber)?.intValue == 3)
        #expect(objects[2]["bad"] is NSNull)

        #expect(Set(objects[3].keys) == ["type", "t", "gx", "gy", "gz"])
        #expect(Set(objects[4].keys) == ["type", "t", "ax", "ay", "az"])
        #expect((objects[4]["ax"] as? NSNumber)?.doubleValue == 1e300)
    }

    @Test func jsonRandomValuesReadBackEqual() throws {
        var generator = SeededGenerator(seed: 12)
        let samples = (0..<2000).map { index in
            MotionSample(
                timestamp: Double(index),
                acceleration: Acceleration(
                    x: randomFiniteDouble(using: &generator), y: randomFiniteDouble(using: &generator),
                    z: randomFiniteDouble(using: &generator)))
        }
        let text = try TraceWriter.render(samples, format: .jsonl, sensors: [.accelerometer])
        for (line, sample) in zip(text.split(separator: "\n"), samples) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(Set(object.keys) == ["type", "t", "ax", "ay", "az"])
            // swift-corelibs-foundation reads some numbers through NSDecimalNumber, whose doubleValue may be off
            // in the last digits; compare loosely here and exactly below.
            let x = try #require((object["ax"] as? NSNumber)?.doubleValue)
            let expected = sample.acceleration!.x
            #expect(x == expected || abs(x - expected) <= 1e-14 * abs(expected), "\(line)")
            // Exactly: every number's text reads back bit-identical.
            let texts = line.dropFirst().dropLast().split(separator: ",").map { $0.split(separator: ":")[1] }
            let values = [sample.timestamp, expected, sample.acceleration!.y, sample.acceleration!.z]
            #expect(texts.dropFirst().map { Double(String($0))?.bitPattern } == values.map(\.bitPattern), "\(line)")
        }
    }

    @Test func writesEventsAsCommentLinesInCSV() throws {
        let writer = TraceWriter(format: .csv, sensors: [.gyroscope])
        try writer.writeEvent(type: "start", timestamp: 0, fields: [])
        try writer.write(MotionSample(timestamp: 1, rotationRate: RotationRate(x: 1, y: 2, z: 3)))
        try writer.writeEvent(type: "tap", timestamp: 1.5, fields: [("axis", "z"), ("strength", 0.25)])
        try writer.write(MotionSample(timestamp: 2, rotationRate: RotationRate(x: 4, y: 5, z: 6)))
        let text = String(decoding: writer.writtenBytes, as: UTF8.self)
        #expect(
            text == """
                t,gx,gy,gz
                # event: {"type":"start","t":0}
                1,1,2,3
                # event: {"type":"tap","t":1.5,"axis":"z","strength":0.25}
                2,4,5,6

                """)
        #expect(try readAll(text).map(\.timestamp) == [1, 2])
    }

    @Test func rejectsSamplesTheFormatCannotHold() throws {
        let writer = TraceWriter(format: .csv, sensors: .all)
        try writer.write(MotionSample(timestamp: 2))
        let cases: [MotionSample] = [
            MotionSample(timestamp: .nan),
            MotionSample(timestamp: .infinity),
            MotionSample(timestamp: 1),
            MotionSample(timestamp: 3, acceleration: Acceleration(x: .nan, y: 0, z: 0)),
            MotionSample(timestamp: 3, magneticField: MagneticField(x: 0, y: 0, z: -.infinity)),
        ]
        for sample in cases {
            #expect {
                try writer.write(sample)
            } throws: { error in
                (error as! MotionError).code == .invalidArgument
            }
        }
        #expect(throws: MotionError.self) { try writer.writeEvent(type: "x", timestamp: .nan, fields: []) }
        // A non-finite reading of a sensor that is not written is ignored.
        let gyroOnly = TraceWriter(format: .csv, sensors: [.gyroscope])
        try gyroOnly.write(MotionSample(timestamp: 0, acceleration: Acceleration(x: .nan, y: 0, z: 0)))
        try writer.write(MotionSample(timestamp: 3))
        #expect(
            String(decoding: writer.writtenBytes, as: UTF8.self)
                == "t,ax,ay,az,gx,gy,gz,mx,my,mz\n2,,,,,,,,,\n3,,,,,,,,,\n")
        #expect(throws: MotionError.self) {
            try TraceWriter(fileDescriptor: 987_654, name: "bad", format: .csv, sensors: .all)
        }
    }

    // MARK: - File descriptors

    /// A pipe whose read end is drained on a background thread into `received`.
    final class Drain: @unchecked Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        private let lock = NSLock()
        private var bytes: [UInt8] = []
        private let done = DispatchSemaphore(value: 0)

        init(delayMicroseconds: UInt32 = 0) {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            (readEnd, writeEnd) = (fds[0], fds[1])
            let thread = Thread { [self] in
                var chunk = [UInt8](repeating: 0, count: 1000)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    lock.withLock { bytes += chunk[..<count] }
                    if delayMicroseconds > 0 { usleep(delayMicroseconds) }
                }
                close(readEnd)
                done.signal()
            }
            thread.start()
        }

        var received: [UInt8] { lock.withLock { bytes } }

        /// Closes the write end and waits for the reader to finish.
        func finish() -> [UInt8] {
            close(writeEnd)
            done.wait()
            return received
        }
    }

    @Test func writesLargeOutputThroughAPipeWithPartialWrites() throws {
        let drain = Drain(delayMicroseconds: 50)
        // Non-blocking: a full pipe gives EAGAIN, which the writer waits out with poll(2).
        #expect(fcntl(drain.writeEnd, F_SETFL, fcntl(drain.writeEnd, F_GETFL) | O_NONBLOCK) == 0)
        let writer = try TraceWriter(fileDescriptor: drain.writeEnd, name: "<pipe>", format: .csv, sensors: .all)
        var samples: [MotionSample] = []
        for index in 0..<20_000 {
            let value = Double(index) / 7
            samples.append(
                MotionSample(
                    timestamp: Double(index), acceleration: Acceleration(x: value, y: -value, z: value / 3),
                    rotationRate: RotationRate(x: 1, y: 2, z: 3), magneticField: MagneticField(x: 4, y: 5, z: value)))
        }
        for sample in samples { try writer.write(sample) }
        try writer.flush()
        let bytes = drain.finish()
        #expect(bytes.count > 1_000_000)
        let reader = try TraceReader(bytes: bytes, name: "<pipe>")
        #expect(try reader.readAll() == samples)
    }

    @Test func flushesEachLineOrWhenFull() throws {
        for flushing in [TraceWriter.Flushing.eachLine, .whenFull] {
            let drain = Drain()
            let writer = try TraceWriter(
                fileDescriptor: drain.writeEnd, name: "<pipe>", format: .jsonl, sensors: .all, flushing: flushing)
            try writer.write(MotionSample(timestamp: 1))
            try writer.write(MotionSample(timestamp: 2))
            let line = "{\"type\":\"sample\",\"t\":1}\n{\"type\":\"sample\",\"t\":2}\n"
            var waited = 0
            while drain.received.count < line.utf8.count && waited < 200 {
                usleep(5000)
                waited += 1
            }
            #expect(drain.received == (flushing == .eachLine ? Array(line.utf8) : []), "\(flushing)")
            try writer.flush()
            #expect(drain.finish() == Array(line.utf8))
        }
    }

    @Test func writesRecordsWithTheirOwnColumns() throws {
        for format in TraceFormat.allCases {
            let drain = Drain()
            let writer = try TraceWriter(
                fileDescriptor: drain.writeEnd, name: "<pipe>", format: format, recordType: "attitude",
                columns: ["qw", "qx", "qy", "qz"], metadata: TraceMetadata(lines: [.entry(key: "source", value: "x")]))
            try writer.write(recordAt: 0.5, values: [1, 0, -0.0, 0.25])
            try writer.write(recordAt: 1, values: [0.5, 0.5, 0.5, 0.5])
            #expect {
                try writer.write(recordAt: 2, values: [.nan, 0, 0, 0])
            } throws: { error in
                (error as! MotionError).code == .invalidArgument
            }
            try writer.flush()
            let text = String(decoding: drain.finish(), as: UTF8.self)
            switch format {
            case .csv:
                #expect(text == "# source: x\nt,qw,qx,qy,qz\n0.5,1,0,-0,0.25\n1,0.5,0.5,0.5,0.5\n")
            case .jsonl:
                #expect(
                    text == """
                        {"type":"metadata","lines":[{"key":"source","value":"x"}]}
                        {"type":"attitude","t":0.5,"qw":1,"qx":0,"qy":-0,"qz":0.25}
                        {"type":"attitude","t":1,"qw":0.5,"qx":0.5,"qy":0.5,"qz":0.5}

                        """)
            }
        }
        for columns in [["q w"], [""], ["é"], (0..<2000).map { "column\($0)" }] {
            #expect(throws: MotionError.self) {
                try TraceWriter(fileDescriptor: 1, name: "x", format: .csv, recordType: "r", columns: columns)
            }
        }
    }

    @Test func deinitWritesWhatIsBufferedButNoLoneHeader() throws {
        let unused = Drain()
        do { _ = try TraceWriter(fileDescriptor: unused.writeEnd, name: "<pipe>", format: .csv, sensors: .all) }
        #expect(unused.finish().isEmpty)
        let used = Drain()
        do {
            let writer = try TraceWriter(fileDescriptor: used.writeEnd, name: "<pipe>", format: .csv, sensors: [])
            try writer.write(MotionSample(timestamp: 1))
        }
        #expect(String(decoding: used.finish(), as: UTF8.self) == "t\n1\n")
    }

    @Test func growsAPipeBufferWhenBlockBuffered() throws {
        for (flushing, expected) in [(TraceWriter.Flushing.whenFull, Int32(1 << 20)), (.eachLine, 65536)] {
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer {
                close(fds[0])
                close(fds[1])
            }
            _ = try TraceWriter(fileDescriptor: fds[1], name: "<pipe>", format: .csv, sensors: [], flushing: flushing)
            #expect(fcntl(fds[1], 1032) == expected)  // F_GETPIPE_SZ
        }
    }

    @Test func reportsABrokenPipeAsEPIPE() throws {
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        let writer = try TraceWriter(fileDescriptor: fds[1], name: "<stdout>", format: .csv, sensors: .all)
        try writer.write(MotionSample(timestamp: 0))  // buffered
        var caught: MotionError?
        do {
            try writer.flush()
        } catch {
            caught = error
        }
        let error = try #require(caught)
        #expect(error.code == .ioFailure)
        #expect((error.underlying as? SystemErrno)?.rawValue == EPIPE)
        #expect(error.location?.file == "<stdout>")
        // The writer stays failed.
        #expect {
            try writer.write(MotionSample(timestamp: 1))
        } throws: { error in
            ((error as! MotionError).underlying as? SystemErrno)?.rawValue == EPIPE
        }
    }
}
