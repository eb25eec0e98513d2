import Foundation
import MotionCore
import MotionTrace
import Testing
import TestThreads

/// TraceWriter's record mode (custom columns, such as attitude rows).
@Suite(.computeBound) struct RecordWriterTests {
    /// Writes records through a pipe and returns what came out.
    func render(_ format: TraceFormat, columns: [String], records: [(Double, [Double])]) throws -> String {
        let pipe = Pipe()
        let writer = try TraceWriter(
            fileDescriptor: pipe.fileHandleForWriting.fileDescriptor, name: "pipe", format: format,
            recordType: "attitude", columns: columns, metadata: TraceMetadata(lines: [.entry(key: "frame", value: "nwu")]))
        for (t, values) in records { try writer.write(recordAt: t, values: values) }
        try writer.flush()
        try pipe.fileHandleForWriting.close()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test func writesCSVWithItsOwnHeader() throws {
        let text = try render(.csv, columns: ["qw", "qx", "qy", "qz"], records: [(0, [1, 0, 0, 0]), (0.0035, [0.5, -0.5, 0.25, 1e-7])])
        #expect(text == "# frame: nwu\nt,qw,qx,qy,qz\n0,1,0,0,0\n0.0035,0.5,-0.5,0.25,1e-7\n")
    }

    @Test func writesJSONLinesObjects() throws {
        let text = try render(.jsonl, columns: ["qw", "heading"], records: [(1.5, [0.25, 270])])
        let lines = text.split(separator: "\n")
        #expect(lines.count == 2)
        let object = try #require(JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        #expect(object["type"] as? String == "attitude")
        #expect((object["t"] as? NSNumber)?.doubleValue == 1.5)
        #expect((object["qw"] as? NSNumber)?.doubleValue == 0.25)
        #expect((object["heading"] as? NSNumber)?.doubleValue == 270)
    }

    @Test func rejectsNonFiniteValuesAndBadNames() throws {
        let pipe = Pipe()
        let fd = pipe.fileHandleForWriting.fileDescriptor
        let writer = try TraceWriter(fileDescriptor: fd, name: "pipe", format: .csv, recordType: "attitude", columns: ["a"])
        #expect(throws: MotionError.self) { try writer.write(recordAt: 0, values: [Double.nan]) }
        #expect(throws: MotionError.self) {
            _ = try TraceWriter(fileDescriptor: fd, name: "pipe", format: .csv, recordType: "attitude", columns: ["q w"])
        }
        #expect(throws: MotionError.self) {
            _ = try TraceWriter(fileDescriptor: fd, name: "pipe", format: .jsonl, recordType: "a\"b", columns: ["x"])
        }
    }
}
