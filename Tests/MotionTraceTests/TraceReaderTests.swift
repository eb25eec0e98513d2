import Foundation
import MotionCore
import MotionSystem
import Testing
import TestThreads

@testable import MotionTrace
import TestFiles

@Suite(.computeBound) struct TraceReaderTests {
    static let header10 = "t,ax,ay,az,gx,gy,gz,mx,my,mz"

    @Test func readsAllGroupsMetadataAndLineNumbers() throws {
        let text = """
            # source: unit test
            # Rate_Hz: 100
            # Free text: with a colon inside a sentence.
            #no space
            # http://example.com
            \(Self.header10)
            0,-0.5,0.25,-1,0.001,-0.002,0.003,10,-20.5,30
            0.01,1e-3,2E+2,-3.5e-19,0,0,0,1,2,3

            """
        let reader = try TraceReader(bytes: Array(text.utf8), name: "test.csv")
        #expect(reader.name == "test.csv")
        #expect(reader.sensors == .all)
        #expect(reader.columnNames == TraceColumns.all)
        #expect(
            reader.metadata.lines == [
                .entry(key: "source", value: "unit test"), .entry(key: "Rate_Hz", value: "100"),
                .comment("Free text: with a colon inside a sentence."), .comment("no space"),
                .comment("http://example.com"),
            ])
        #expect(reader.metadata["rate_hz"] == "100")
        #expect(reader.lineNumber == 0)
        let first = try #require(try reader.next())
        #expect(reader.lineNumber == 7)
        #expect(
            first
                == MotionSample(
                    timestamp: 0, acceleration: Acceleration(x: -0.5, y: 0.25, z: -1),
                    rotationRate: RotationRate(x: 0.001, y: -0.002, z: 0.003),
                    magneticField: MagneticField(x: 10, y: -20.5, z: 30)))
        let second = try #require(try reader.next())
        #expect(reader.lineNumber == 8)
        #expect(second.acceleration == Acceleration(x: 0.001, y: 200, z: -3.5e-19))
        #expect(try reader.next() == nil)
        #expect(try reader.next() == nil)
    }

    @Test func readsColumnsInAnyOrderAndSubsets() throws {
        let samples = try readAll("mz,gx,my,t,gz,mx,gy\n1,2,3,0.5,4,5,6\n")
        #expect(
            samples == [
                MotionSample(
                    timestamp: 0.5, rotationRate: RotationRate(x: 2, y: 6, z: 4),
                    magneticField: MagneticField(x: 5, y: 3, z: 1))
            ])
        let reader = try TraceReader(bytes: Array("t\n1\n2\n".utf8), name: "t-only")
        #expect(reader.sensors == [])
        #expect(try reader.readAll().map(\.timestamp) == [1, 2])
    }

    @Test func emptyGroupsAreMissingReadings() throws {
        let samples = try readAll("\(Self.header10)\n1,1,2,3,,,,,,\n2,,,,4,5,6,,,\n3,,,,,,,7,8,9\n4,,,,,,,,,\n")
        #expect(samples.map(\.sensors) == [.accelerometer, .gyroscope, .magnetometer, []])
        #expect(samples[1].rotationRate == RotationRate(x: 4, y: 5, z: 6))
        #expect(samples[2].magneticField == MagneticField(x: 7, y: 8, z: 9))
    }

    @Test func acceptsCRLFAndEqualTimestamps() throws {
        let lf = "# a: b\nt,ax,ay,az\n1,2,3,4\n1,5,6,7\n2,8,9,10\n"
        let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
        let reader = try TraceReader(bytes: Array(crlf.utf8), name: "crlf.csv")
        #expect(reader.metadata["a"] == "b")
        #expect(try reader.readAll() == readAll(lf))
        #expect(try readAll(lf).map(\.timestamp) == [1, 1, 2])
    }

    @Test func acceptsByteOrderMark() throws {
        let reader = try TraceReader(bytes: [0xEF, 0xBB, 0xBF] + Array("t,ax,ay,az\n1,2,3,4\n".utf8), name: "bom")
        #expect(try reader.readAll().count == 1)
    }

    @Test func skipsCommentLinesAfterTheHeader() throws {
        let text = "t,ax,ay,az\n1,2,3,4\n# event: {\"type\":\"tap\",\"t\":1}\n2,3,4,5\n"
        let reader = try TraceReader(bytes: Array(text.utf8), name: "events")
        #expect(try reader.next()?.timestamp == 1)
        #expect(try reader.next()?.timestamp == 2)
        #expect(reader.lineNumber == 4)
        #expect(reader.metadata.lines.isEmpty)
    }

    // MARK: - Truncated last lines

    @Test func acceptsALastLineWithoutTerminatorThatParses() throws {
        #expect(try readAll("t,ax,ay,az\n1,2,3,4\n2,3,4,5").count == 2)
        #expect(try readAll("t,ax,ay,az\n1,2,3,4\n2,3,4,5\r").count == 2)
        #expect(try readAll("t,ax,ay,az").isEmpty)
        #expect(try readAll("t,ax,ay,az\n1,2,3,4\n# cut comm").count == 1)
    }

    @Test(arguments: [
        ("t,ax,ay,az\n1,2,3,4\n2,3,4", "expected 4 columns (t,ax,ay,az), found 3", nil as String?),
        ("t,ax,ay,az\n1,2,3,4\n2,3,4,", "expected a finite number, found an empty field", nil),
        ("t,ax,ay,az\n1,2,3,4\n2,3,4,5.", "expected a finite number, found \"5.\"", "az"),
        ("t,ax,ay,az\n1,2,3,4\n2,3,4,5e", "expected a finite number, found \"5e\"", "az"),
        ("t,ax,ay,az\n1,2,3,4\n2,3,4,-", "expected a finite number, found \"-\"", "az"),
        ("t\n1\n2.", "expected a finite number, found \"2.\"", "t"),
    ])
    func throwsTruncatedForALastLineThatDoesNotParse(_ text: String, _ message: String, _ column: String?) throws {
        let error = try #require(readError(text))
        #expect(error.code == .truncatedTrace)
        #expect(error.location?.line == 3)
        #expect(error.message.contains("no line terminator"))
        if message.hasSuffix("empty field") {
            #expect(error.message.contains("partly empty column group ax,ay,az"))
        } else {
            #expect(error.message.hasSuffix(message))
            #expect(error.location?.column == column)
        }
    }

    // MARK: - Row errors

    /// Reads until the error and checks that samples before it were returned.
    private func expectRowError(
        _ text: String, samplesBefore: Int, line: Int, column: String?, message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let reader = try TraceReader(bytes: Array(text.utf8), name: "bad.csv")
        var count = 0
        do {
            while try reader.next() != nil { count += 1 }
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch {
            #expect(count == samplesBefore, sourceLocation: sourceLocation)
            #expect(error.code == .malformedTrace, sourceLocation: sourceLocation)
            #expect(
                error.location == MotionError.Location(file: "bad.csv", line: line, column: column),
                sourceLocation: sourceLocation)
            #expect(error.message == message, sourceLocation: sourceLocation)
        }
    }

    @Test func reportsWrongColumnCounts() throws {
        try expectRowError(
            "# c\n\(Self.header10)\n0,1,2,3,4,5,6,7,8,9\n1,1,2,3,4,5,6\n", samplesBefore: 1, line: 4, column: nil,
            message: "expected 10 columns (t,ax,ay,az,gx,gy,gz,mx,my,mz), found 7")
        try expectRowError(
            "t,ax,ay,az\n1,2,3,4,5\n", samplesBefore: 0, line: 2, column: nil,
            message: "expected 4 columns (t,ax,ay,az), found 5")
        try expectRowError(
            "t,ax,ay,az\n1,2,3,4\n\n2,3,4,5\n", samplesBefore: 1, line: 3, column: nil,
            message: "expected 4 columns (t,ax,ay,az), found an empty line")
        // A bad value in a row with the wrong column count reports the count.
        try expectRowError(
            "t,ax,ay,az\n1,abc\n", samplesBefore: 0, line: 2, column: nil,
            message: "expected 4 columns (t,ax,ay,az), found 2")
    }

    @Test func reportsBadNumbersWithColumnNames() throws {
        try expectRowError(
            "t,ax,ay,az\n1,2,3,4\n2,3,abc,5\n", samplesBefore: 1, line: 3, column: "ay",
            message: "expected a finite number, found \"abc\"")
        try expectRowError(
            "t,gx,gy,gz\n1,nan,0,0\n", samplesBefore: 0, line: 2, column: "gx",
            message: "expected a finite number, found \"nan\"")
        try expectRowError(
            "t,gx,gy,gz\n1,0,-inf,0\n", samplesBefore: 0, line: 2, column: "gy",
            message: "expected a finite number, found \"-inf\"")
        try expectRowError(
            "t,gx,gy,gz\n1,0,0,1e999\n", samplesBefore: 0, line: 2, column: "gz",
            message: "expected a finite number, found \"1e999\", which is beyond the range of a Double")
        try expectRowError(
            "t,mx,my,mz\n1, 2,3,4\n", samplesBefore: 0, line: 2, column: "mx",
            message: "expected a finite number, found \" 2\"")
        try expectRowError(
            "t,mx,my,mz\n0x1F,2,3,4\n", samplesBefore: 0, line: 2, column: "t",
            message: "expected a finite number, found \"0x1F\"")
        try expectRowError(
            "t,mx,my,mz\n1,2,3,\"4\"\n", samplesBefore: 0, line: 2, column: "mz",
            message: "expected a finite number, found \"\\\"4\\\"\"")
        try expectRowError(
            "t,mx,my,mz\n,2,3,4\n", samplesBefore: 0, line: 2, column: "t",
            message: "expected a finite number, found an empty field; every row needs a timestamp")
        try expectRowError(
            "t,mx,my,mz\n1,2,3\u{7},4\n", samplesBefore: 0, line: 2, column: "my",
            message: "expected a finite number, found \"3\\x07\"")
    }

    @Test func reportsPartlyEmptyGroups() throws {
        try expectRowError(
            "t,ax,ay,az\n1,2,,4\n", samplesBefore: 0, line: 2, column: "ay",
            message:
                "partly empty column group ax,ay,az: \"ay\" is empty but \"ax\" is not; leave all three empty when the sensor did not sample"
        )
        try expectRowError(
            "gz,t,gy,gx\n,1,,3\n", samplesBefore: 0, line: 2, column: "gz",
            message:
                "partly empty column group gx,gy,gz: \"gz\" is empty but \"gx\" is not; leave all three empty when the sensor did not sample"
        )
    }

    @Test func reportsTimestampsGoingBack() throws {
        try expectRowError(
            "t,ax,ay,az\n1,0,0,0\n2.0,0,0,0\n2,0,0,0\n1.5,0,0,0\n", samplesBefore: 3, line: 5, column: "t",
            message: "timestamp 1.5 is earlier than the previous row's 2.0; timestamps must not decrease")
    }

    @Test func continuesAfterARowError() throws {
        let reader = try TraceReader(bytes: Array("t\n1\nx\n2\n".utf8), name: "x")
        #expect(try reader.next()?.timestamp == 1)
        #expect(throws: MotionError.self) { try reader.next() }
        #expect(try reader.next()?.timestamp == 2)
    }

    // MARK: - Header errors

    private func expectHeaderError(
        _ text: String, code: MotionError.Code = .malformedTrace, line: Int?, column: String?, message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for lenient in [false, true] {
            do {
                _ = try TraceReader(bytes: Array(text.utf8), name: "h.csv", options: .init(lenient: lenient))
                Issue.record("no error", sourceLocation: sourceLocation)
            } catch {
                #expect(error.code == code, sourceLocation: sourceLocation)
                #expect(
                    error.location == MotionError.Location(file: "h.csv", line: line, column: column),
                    sourceLocation: sourceLocation)
                #expect(error.message == message, sourceLocation: sourceLocation)
            }
        }
    }

    @Test func reportsHeaderErrors() {
        let known = "known columns are t, ax, ay, az, gx, gy, gz, mx, my, mz"
        expectHeaderError(
            "# a\n# b\nt,ax,foo,ay,az\n", line: 3, column: "foo",
            message: "unknown column \"foo\"; \(known)")
        expectHeaderError("t,ax,,ay\n", line: 1, column: "3", message: "empty column name (column 3); \(known)")
        expectHeaderError("t,AX,ay,az\n", line: 1, column: "AX", message: "unknown column \"AX\"; \(known)")
        expectHeaderError(
            "t,ax,ay,az,ax\n", line: 1, column: "ax",
            message: "duplicate column \"ax\": columns 2 and 5 have the same name")
        expectHeaderError(
            "ax,ay,az\n1,2,3\n", line: 1, column: nil,
            message: "no \"t\" column; the header must name a time column t, in seconds, such as t,ax,ay,az")
        expectHeaderError(
            "t,gx,gz\n", line: 1, column: "gy",
            message:
                "incomplete column group gx,gy,gz: \"gx\" and \"gz\" without \"gy\"; a sensor's three columns go together"
        )
        expectHeaderError(
            "# only\n# comments\n", line: 3, column: nil,
            message:
                "missing header row: expected a line of column names such as t,ax,ay,az after the comment lines, found the end of the input"
        )
        expectHeaderError(
            "# c\n\nt\n", line: 2, column: nil,
            message: "missing header row: expected column names such as t,ax,ay,az, found an empty line")
        expectHeaderError(
            "0.1,2,3,4\n", line: 1, column: nil,
            message: "missing header row: expected column names such as t,ax,ay,az, found a row of numbers")
        expectHeaderError(
            "", code: .noInput, line: nil, column: nil,
            message: "h.csv is empty; expected comment lines, a header row and data rows")
    }

    @Test func rejectsOverlongLines() throws {
        let long = String(repeating: "1", count: LineReader.maximumLineLength + 10)
        let error = try #require(readError("t\n1\n\(long)\n2\n"))
        #expect(error.code == .malformedTrace)
        #expect(error.location?.line == 3)
        #expect(error.message.contains("longer than"))
    }

    // MARK: - Lenient mode

    @Test func lenientModeSkipsAndCountsBadRows() throws {
        let text = """
            t,ax,ay,az
            1,0,0,0
            2,abc,0,0
            3,0,0
            3,0,,0

            0.5,0,0,0
            4,nan,0,0
            5,0,0,0
            6,1,2,3,4
            7,0,0,0
            8,0,0
            """
        let reader = try TraceReader(bytes: Array(text.utf8), name: "lenient.csv", options: .init(lenient: true))
        #expect(try reader.readAll().map(\.timestamp) == [1, 5, 7])
        let report = reader.skipReport
        #expect(report.skippedRows == 8)
        #expect(
            report.counts == [
                .invalidNumber: 2, .columnCount: 2, .partialGroup: 1, .emptyLine: 1, .timestampOrder: 1,
                .truncatedLastLine: 1,
            ])
        #expect(report.examples.count == SkipReport.maximumExamples)
        #expect(report.examples.map(\.line) == [3, 4, 5, 6, 7])
        #expect(report.examples[0].column == "ax")
        #expect(report.examples[0].message == "expected a finite number, found \"abc\"")
        #expect(
            report.description
                == "lenient.csv: skipped 8 rows (1 empty line, 2 wrong column count, 2 not a finite number, 1 partly empty sensor group, 1 timestamp out of order, 1 cut-off last line). First: line 3, column 'ax': expected a finite number, found \"abc\"; line 4: expected 4 columns (t,ax,ay,az), found 3; line 5, column 'ay': partly empty column group ax,ay,az: \"ay\" is empty but \"ax\" is not; leave all three empty when the sensor did not sample; line 6: expected 4 columns (t,ax,ay,az), found an empty line; line 7, column 't': timestamp 0.5 is earlier than the previous row's 1.0; timestamps must not decrease."
        )
        let clean = try TraceReader(bytes: Array("t\n1\n".utf8), name: "ok.csv", options: .init(lenient: true))
        _ = try clean.readAll()
        #expect(clean.skipReport.description == "ok.csv: no rows skipped.")
        #expect(clean.skipReport.skippedRows == 0)
    }

    // MARK: - Buffer boundaries, pipes and files

    /// A trace with varied row lengths, CRLF and LF, comments after the header and empty groups.
    static func variedTrace(rows: Int) -> String {
        var generator = SeededGenerator(seed: 7)
        var text = "# source: varied\r\n# A comment line\n\(header10)\n"
        for row in 0..<rows {
            var fields = [String(Double(row) * 0.0035)]
            for group in 0..<3 {
                if generator.next() % 5 == 0 {
                    fields += ["", "", ""]
                } else {
                    for _ in 0..<3 {
                        let value = randomFiniteDouble(using: &generator)
                        fields.append(abs(value) < 1e300 ? value.description : String(group))
                    }
                }
            }
            text += fields.joined(separator: ",") + (row % 3 == 0 ? "\r\n" : "\n")
            if row % 50 == 0 { text += "# event: {}\n" }
        }
        return text
    }

    @Test func rowsSplitAcrossReadsGiveTheSameSamples() throws {
        let text = Self.variedTrace(rows: 300)
        let expected = try readAll(text)
        #expect(expected.count == 300)
        for size in [1, 2, 3, 5, 7, 13, 64, 100, 127, 128, 129, 255, 1000, 4097] {
            #expect(try readAll(text, options: smallBuffer(size)) == expected, "buffer size \(size)")
        }
        // Errors report the same line whatever the buffer size.
        let bad = text + "1e308,x\n"
        for size in [1, 17, 256] {
            #expect(readError(bad, options: smallBuffer(size))?.location?.line == readError(bad)?.location?.line)
        }
    }

    @Test func readsFromAPipe() throws {
        let text = Self.variedTrace(rows: 2000)  // larger than a pipe's buffer
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        let bytes = Array(text.utf8)
        let writer = Thread {
            var offset = 0
            var chunk = 1
            while offset < bytes.count {
                let count = min(chunk, bytes.count - offset)
                let written = bytes.withUnsafeBufferPointer { write(writeEnd, $0.baseAddress! + offset, count) }
                if written <= 0 { break }
                offset += written
                chunk = chunk * 7 % 1021 + 1  // odd chunk sizes split rows everywhere
            }
            close(writeEnd)
        }
        writer.start()
        defer { close(readEnd) }
        // Non-blocking, as stdin sometimes is: reads that find no data wait with poll(2).
        #expect(fcntl(readEnd, F_SETFL, fcntl(readEnd, F_GETFL) | O_NONBLOCK) == 0)
        let reader = try TraceReader(fileDescriptor: readEnd, name: "<stdin>", options: smallBuffer(4096))
        #expect(reader.metadata["source"] == "varied")
        #expect(try reader.readAll() == readAll(text))
        // The descriptor stays open: the reader does not close what it did not open.
        #expect(fcntl(readEnd, F_GETFD) != -1)
    }

    @Test func readsFilesAndReportsFileErrors() throws {
        let directory = URL(fileURLWithPath: try ScratchFolder.folder("trace"))
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("a.csv").path
        try Self.variedTrace(rows: 100).write(toFile: path, atomically: true, encoding: .utf8)
        let reader = try TraceReader(path: path)
        #expect(try reader.readAll().count == 100)

        let missing = directory.appendingPathComponent("missing.csv").path
        #expect {
            try TraceReader(path: missing)
        } throws: { error in
            let error = error as! MotionError
            return error.code == .noInput && error.location?.file == missing
                && (error.underlying as? SystemErrno)?.rawValue == ENOENT
        }
        #expect {
            try TraceReader(path: directory.path)
        } throws: { error in
            let error = error as! MotionError
            return error.code == .ioFailure && (error.underlying as? SystemErrno)?.rawValue == EISDIR
        }
        let empty = directory.appendingPathComponent("empty.csv").path
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        #expect {
            try TraceReader(path: empty)
        } throws: { error in
            (error as! MotionError).code == .noInput
        }
    }

    /// Opens a mode-0 file in a child process, which drops to `nobody` when the tests run as root (root reads
    /// any file), so the test runs as root (CI) and as anyone else.
    @Test func reportsPermissionDenied() async throws {
        let path = ScratchFolder.path("locked")
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data("t\n".utf8), attributes: [.posixPermissions: 0])
        )
        defer { try? FileManager.default.removeItem(atPath: path) }
        await #expect(processExitsWith: .success) { [path = path as String] in
            if getuid() == 0 {
                guard setgroups(0, nil) == 0, setgid(65534) == 0, setuid(65534) == 0 else { exit(2) }
            }
            do {
                _ = try TraceReader(path: path)
                exit(3)
            } catch let error as MotionError {
                exit(error.code == .permissionDenied ? 0 : 4)
            } catch {
                exit(5)
            }
        }
    }

    @Test func mapsSystemErrors() {
        let denied = MotionError.system(SystemErrno(EACCES), "open", "x.csv")
        #expect(denied.code == .permissionDenied)
        #expect((denied.underlying as? SystemErrno)?.rawValue == EACCES)
        let pipeClosed = MotionError.system(SystemErrno(EPIPE), "write to", "<stdout>")
        #expect(pipeClosed.code == .ioFailure)
        #expect((pipeClosed.underlying as? SystemErrno)?.rawValue == EPIPE)
    }

    // MARK: - Metadata

    @Test func metadataSubscriptReplacesAppendsAndRemoves() {
        var metadata = TraceMetadata(lines: [
            .comment("attribution"), .entry(key: "Source", value: "a"), .entry(key: "source", value: "b"),
        ])
        #expect(metadata["SOURCE"] == "a")
        metadata["source"] = "c"
        #expect(metadata.lines == [.comment("attribution"), .entry(key: "Source", value: "c")])
        metadata["rate_hz"] = "100"
        #expect(metadata.entries.map(\.key) == ["Source", "rate_hz"])
        #expect(metadata.comments == ["attribution"])
        metadata["source"] = nil
        #expect(metadata.lines == [.comment("attribution"), .entry(key: "rate_hz", value: "100")])
        #expect(metadata["missing"] == nil)
    }
}
