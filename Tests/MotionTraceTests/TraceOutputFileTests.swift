import Foundation
import MotionCore
import Testing
import TestThreads

@testable import MotionTrace
import TestFiles

/// `TraceOutputFile` writes beside the path and puts the file there only at `commit()`.
@Suite(.computeBound) struct TraceOutputFileTests {
    /// A new empty folder and the path `trace.csv` in it.
    static func folder() throws -> (folder: String, path: String) {
        let url = URL(fileURLWithPath: try ScratchFolder.folder("output"))
        return (url.path, url.appendingPathComponent("trace.csv").path)
    }

    static func append(_ text: String, to file: TraceOutputFile) {
        _ = text.withCString { Glibc.write(file.fileDescriptor, $0, strlen($0)) }
    }

    static func contents(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test func nothingAppearsAtThePathBeforeTheCommit() throws {
        let (folder, path) = try Self.folder()
        let file = try TraceOutputFile(path: path, existing: .refuse)
        Self.append("a\n", to: file)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try Self.contents(folder) == [".trace.csv.\(getpid()).partial"])
        try file.commit()
        Self.append("b\n", to: file)  // the same descriptor goes on writing the committed file
        file.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "a\nb\n")
        #expect(try Self.contents(folder) == ["trace.csv"])
    }

    @Test func closingBeforeTheCommitLeavesTheFolderAsItWas() throws {
        let (folder, path) = try Self.folder()
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let file = try TraceOutputFile(path: path, existing: .replace)
        Self.append("new\n", to: file)
        file.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        #expect(try Self.contents(folder) == ["trace.csv"])
    }

    @Test func replaceSwapsTheOldFileAtTheCommit() throws {
        let (folder, path) = try Self.folder()
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let file = try TraceOutputFile(path: path, existing: .replace)
        Self.append("new\n", to: file)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
        try file.commit()
        file.close()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "new\n")
        #expect(try Self.contents(folder) == ["trace.csv"])
    }

    @Test("A failed commit keeps the recording where its error says, after close")
    func aFailedCommitKeepsThePartialFile() throws {
        let (folder, path) = try Self.folder()
        let file = try TraceOutputFile(path: path, existing: .replace)
        Self.append("recorded\n", to: file)
        // A folder appears at the path while recording: the rename cannot replace it.
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let partial = "\(folder)/.trace.csv.\(getpid()).partial"
        do {
            try file.commit()
            Issue.record("the commit over a folder succeeded")
        } catch {
            #expect(error.message.contains("it is kept in \(partial)"), "\(error.message)")
        }
        file.close()
        #expect(try String(contentsOfFile: partial, encoding: .utf8) == "recorded\n")
    }

    @Test func refuseRejectsAnExistingFileAtOpen() throws {
        let (_, path) = try Self.folder()
        try "old\n".write(toFile: path, atomically: false, encoding: .utf8)
        let error = #expect(throws: MotionError.self) { try TraceOutputFile(path: path, existing: .refuse) }
        #expect(error?.code == .outputExists)
        #expect(error?.location?.file == path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "old\n")
    }

    /// A file that appears at the path while writing is kept; the recording stays in the partial file.
    @Test func refuseKeepsAFileThatAppearedMeanwhile() throws {
        let (folder, path) = try Self.folder()
        let file = try TraceOutputFile(path: path, existing: .refuse)
        Self.append("recorded\n", to: file)
        try "someone else's\n".write(toFile: path, atomically: false, encoding: .utf8)
        let error = #expect(throws: MotionError.self) { try file.commit() }
        #expect(error?.code == .outputExists)
        #expect(error?.message.contains(".trace.csv.\(getpid()).partial") == true)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone else's\n")
        let partial = "\(folder)/.trace.csv.\(getpid()).partial"
        #expect(try String(contentsOfFile: partial, encoding: .utf8) == "recorded\n")
    }

    @Test func aMissingFolderIsAnIOErrorNamingThePath() throws {
        let error = #expect(throws: MotionError.self) {
            try TraceOutputFile(path: "/nonexistent/dir/trace.csv", existing: .refuse)
        }
        #expect(error?.code == .ioFailure)
        #expect(error?.location?.file == "/nonexistent/dir/trace.csv")
    }

    @Test func standardOutputNeedsNoCommit() throws {
        let file = try TraceOutputFile(path: "-", existing: .refuse)
        #expect(file.fileDescriptor == 1 && file.name == "<stdout>")
        try file.commit()
        file.close()  // never closes stdout
        #expect(fcntl(1, F_GETFL) != -1)
    }
}
